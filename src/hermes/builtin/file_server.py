"""The `file` toolset: the agent's own tools to read, write, edit, list, glob and grep files.

Run by hermes as a stdio MCP server in the session's sandbox (`python file_server.py`): the
sandbox decides what may be read and written (the working folder writable, secret stores hidden,
what the user granted), so a path the sandbox hides is simply not there. It imports the SDK and
the standard library only, never hermes. Paths are relative to the working folder unless absolute.

Limits: a file is read in pages of lines (at most MAX_READ_BYTES a page), never whole when it is
large; a file with a NUL byte in its first 8 KiB is binary and not shown; grep reads files up to
MAX_GREP_FILE_BYTES and stops at MAX_MATCHES; glob and list stop at MAX_ENTRIES.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, ParamSpec

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
CHANGES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
MAX_WRITE_BYTES = 10 * 1024 * 1024
MAX_EDIT_FILE_BYTES = 10 * 1024 * 1024
MAX_GREP_FILE_BYTES = 2 * 1024 * 1024
MAX_MATCHES = 500
MAX_ENTRIES = 1000
MAX_WALKED = 100_000  # files glob and grep look at in one call
MAX_LINE_SHOWN = 2000
MAX_LINE_BYTES = 4 * MAX_LINE_SHOWN  # what is read of one line (UTF-8 takes up to four bytes a character)
SNIFF_BYTES = 8192
# Folders that are never what a search is about and can hold millions of files.
SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"})

P = ParamSpec("P")
app = MCPServer("file", instructions="Read, write, edit and search the files of the working folder.")


class FileToolError(ToolError):
    """A refusal worded for the model: it says what was wrong and what to do instead."""


def worded(tool: Callable[P, str]) -> Callable[P, str]:
    """Any other failure of the file system in the same words: what failed, on which path."""
    @functools.wraps(tool)
    def run(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return tool(*args, **kwargs)
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            raise FileToolError(f"{exc.strerror or type(exc).__name__}{where}") from None

    return run


def _path(path: str) -> Path:
    if not path or "\x00" in path:
        raise FileToolError("the path is empty or holds a NUL character")
    return Path(os.path.expanduser(path))


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:SNIFF_BYTES]


def _regular(path: Path) -> os.stat_result:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise FileToolError(f"{path} does not exist") from None
    except PermissionError:
        raise FileToolError(f"{path} cannot be read here (no permission, or the sandbox hides it)") from None
    if stat.S_ISDIR(info.st_mode):
        raise FileToolError(f"{path} is a folder; use file_list or file_glob")
    if not stat.S_ISREG(info.st_mode):
        raise FileToolError(f"{path} is not a regular file")
    return info


def _shown(line: str) -> str:
    return line if len(line) <= MAX_LINE_SHOWN else line[:MAX_LINE_SHOWN] + f" [... {len(line) - MAX_LINE_SHOWN} more]"


def _lines(handle: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Each line's first MAX_LINE_BYTES and its whole length: a file of one endless line (a minified
    bundle, a log without newlines) is never held in memory."""
    while head := handle.readline(MAX_LINE_BYTES):
        length = len(head)
        if not head.endswith(b"\n"):
            while rest := handle.readline(MAX_LINE_BYTES):
                length += len(rest)
                if rest.endswith(b"\n"):
                    break
        yield head, length


def _line_text(head: bytes, length: int) -> str:
    text = head.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
    if length > len(head):
        return text[:MAX_LINE_SHOWN] + f" [... {length - min(len(head), MAX_LINE_SHOWN)} more bytes]"
    return _shown(text)


@app.tool(name="read", annotations=READS, description=(
    "Read a text file, with line numbers. `offset` is the first line (1-based), `limit` how many lines "
    f"(at most {MAX_READ_LINES}); the answer says where to continue when there is more. Binary files are "
    "not shown."))
@worded
def read(path: str, offset: int = 1, limit: int = MAX_READ_LINES) -> str:
    target = _path(path)
    info = _regular(target)
    first, count = max(1, offset), max(1, min(limit, MAX_READ_LINES))
    lines: list[str] = []
    size = 0
    more = False
    with target.open("rb") as handle:
        if _is_binary(handle.read(SNIFF_BYTES)):
            return f"{target} is a binary file ({info.st_size} bytes); it is not shown."
        handle.seek(0)
        for number, (head, length) in enumerate(_lines(handle), start=1):
            if number < first:
                continue
            if len(lines) == count or (lines and size + len(head) > MAX_READ_BYTES):
                more = True
                break
            size += len(head)
            lines.append(f"{number:6}\t{_line_text(head, length)}")
    if not lines:
        return f"{target} has no line {first} (it has fewer lines)." if first > 1 else f"{target} is empty."
    last = first + len(lines) - 1
    # A header naming the file and the lines: bare numbered lines ("1  status: draft") read to a small
    # model as anything but a file's text (Qwen2.5-Coder-1.5B answered "the tool is not available").
    span = f"line {first}" if last == first else f"lines {first}-{last}"
    header = f"{target}, {span}{' (the whole file)' if first == 1 and not more else ''}:\n"
    tail = f"\n[more: continue with offset={last + 1}]" if more else ""
    return header + "\n".join(lines) + tail


def _write_atomically(target: Path, data: bytes, mode: int | None) -> None:
    """Replace `target` whole or not at all. (hermes.files.atomic_write does the same for hermes's own
    files; this server imports nothing of hermes, and keeps the file's mode rather than making it private.)"""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except PermissionError:
        raise FileToolError(f"{target} cannot be written here (no permission, or outside what the sandbox "
                            f"lets the agent change)") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(scratch, stat.S_IMODE(mode))
        os.replace(scratch, target)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


@app.tool(name="write", annotations=CHANGES, description=(
    "Write a whole text file (created with its folders, or replaced). For a change inside an existing "
    "file use file_edit."))
@worded
def write(path: str, content: str) -> str:
    target = _path(path)
    data = content.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        raise FileToolError(f"the content is {len(data)} bytes; at most {MAX_WRITE_BYTES} are written at once")
    if target.is_dir():
        raise FileToolError(f"{target} is a folder")
    mode = target.stat().st_mode if target.exists() else None
    _write_atomically(target, data, mode)
    return f"Wrote {len(data)} bytes to {target}."


@app.tool(name="edit", annotations=CHANGES, description=(
    "Replace an exact piece of text in a file. `old_text` must occur exactly once (include enough "
    "surrounding lines to make it unique) unless `replace_all` is true."))
@worded
def edit(path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
    target = _path(path)
    info = _regular(target)
    if info.st_size > MAX_EDIT_FILE_BYTES:
        raise FileToolError(f"{target} is {info.st_size} bytes; files over {MAX_EDIT_FILE_BYTES} are not edited")
    if not old_text:
        raise FileToolError("old_text is empty; to write a whole file use file_write")
    raw = target.read_bytes()
    if _is_binary(raw):
        raise FileToolError(f"{target} is a binary file; it is not edited")
    text = raw.decode("utf-8", errors="surrogateescape")
    found = text.count(old_text)
    if found == 0:
        raise FileToolError(f"old_text was not found in {target} (it must match exactly, whitespace included; "
                            f"read the file again to copy it)")
    if found > 1 and not replace_all:
        raise FileToolError(f"old_text occurs {found} times in {target}; give more surrounding text to make it "
                            f"unique, or set replace_all")
    changed = text.replace(old_text, new_text) if replace_all else text.replace(old_text, new_text, 1)
    _write_atomically(target, changed.encode("utf-8", errors="surrogateescape"), info.st_mode)
    return f"Replaced {found if replace_all else 1} occurrence{'s' if replace_all and found > 1 else ''} in {target}."


def _folder(path: str) -> Path:
    folder = _path(path)
    if not folder.exists():
        raise FileToolError(f"{folder} does not exist")
    if not folder.is_dir():
        raise FileToolError(f"{folder} is not a folder")
    return folder


@app.tool(name="list", annotations=READS, description=(
    f"List a folder: each entry with its kind and size (at most {MAX_ENTRIES} entries)."))
@worded
def list_folder(path: str = ".") -> str:
    folder = _folder(path)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except PermissionError:
        raise FileToolError(f"{folder} cannot be read here (no permission, or the sandbox hides it)") from None
    rows = []
    for entry in entries[:MAX_ENTRIES]:
        try:
            if entry.is_symlink():
                rows.append(f"link    {entry.name} -> {os.readlink(entry.path)}")
            elif entry.is_dir():
                rows.append(f"folder  {entry.name}/")
            elif entry.is_file():
                rows.append(f"file    {entry.name}  ({entry.stat().st_size} bytes)")
            else:
                rows.append(f"other   {entry.name}  (a pipe, socket or device)")
        except OSError:
            rows.append(f"?       {entry.name}")
    more = f"\n[{len(entries) - MAX_ENTRIES} more entries not shown]" if len(entries) > MAX_ENTRIES else ""
    return ("\n".join(rows) if rows else f"{folder} is empty.") + more


def _walk(root: Path) -> tuple[list[Path], bool]:
    """Every file under `root` in name order, and whether MAX_WALKED stopped the walk. The folders no
    search is about are skipped, unreadable ones passed by, links to folders not followed; a stack of
    its own (not os.walk's recursion), so a tree thousands of folders deep is walked too."""
    found: list[Path] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_FOLDERS:
                    folders.append(Path(entry.path))
            else:
                found.append(Path(entry.path))
                if len(found) >= MAX_WALKED:
                    return found, True
        pending += reversed(folders)
    return found, False


def _cut_short(cut: bool) -> str:
    return f"\n[only the first {MAX_WALKED} files were looked at: narrow the folder]" if cut else ""


@app.tool(name="glob", annotations=READS, description=(
    "Find files by a name pattern such as `*.py` or `src/**/*.ts` under a folder (default: the working "
    f"folder); at most {MAX_ENTRIES} paths, newest first."))
@worded
def glob(pattern: str, path: str = ".") -> str:
    root = _folder(path)
    walked, cut = _walk(root)
    matches = [p for p in walked if fnmatch.fnmatch(str(p.relative_to(root)), pattern)
               or ("/" not in pattern and fnmatch.fnmatch(p.name, pattern))]

    def newest_first(p: Path) -> float:
        try:
            return -p.stat().st_mtime
        except OSError:
            return 0.0

    matches.sort(key=newest_first)
    shown = "\n".join(str(p) for p in matches[:MAX_ENTRIES])
    more = f"\n[{len(matches) - MAX_ENTRIES} more not shown]" if len(matches) > MAX_ENTRIES else ""
    return (shown or f"No file under {root} matches {pattern!r}.") + more + _cut_short(cut)


@app.tool(name="grep", annotations=READS, description=(
    "Search file contents for a regular expression under a folder or in one file; `glob` narrows the "
    f"files (such as `*.py`). Lines are shown as path:line:text, at most {MAX_MATCHES}."))
@worded
def grep(pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False) -> str:
    try:
        expression = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise FileToolError(f"the pattern is not a valid regular expression: {exc}") from None
    target = _path(path)
    files, cut = ([target], False) if target.is_file() else _walk(_folder(path))
    if glob:
        files = [f for f in files if fnmatch.fnmatch(f.name, glob) or fnmatch.fnmatch(str(f), glob)]
    hits: list[str] = []
    skipped = 0
    for file in files:
        try:
            info = file.stat()
            if not stat.S_ISREG(info.st_mode):
                continue  # a FIFO, a socket or a device: reading one could block for ever
            if info.st_size > MAX_GREP_FILE_BYTES:
                skipped += 1
                continue
            raw = file.read_bytes()
        except OSError:
            continue
        if _is_binary(raw):
            continue
        for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
            if expression.search(line):
                hits.append(f"{file}:{number}:{_shown(line)}")
                if len(hits) == MAX_MATCHES:
                    return "\n".join(hits) + f"\n[stopped at {MAX_MATCHES} matches: narrow the pattern or the folder]"
    note = f"\n[{skipped} file{'' if skipped == 1 else 's'} over {MAX_GREP_FILE_BYTES} bytes not searched]" \
        if skipped else ""
    return ("\n".join(hits) if hits else f"No line matches {pattern!r}.") + note + _cut_short(cut)


if __name__ == "__main__":
    sys.exit(app.run())
