"""Reading and writing hermes's own files safely: bounded reads, atomic replaces, one lock per file.

Everything under HERMES_HOME and every file a plugin or an app hands us goes through here:
- `read_bounded` opens without following a FIFO's blocking open (O_NONBLOCK), insists on a regular
  file, and never reads more than its cap, so a hostile file can neither hang nor exhaust us.
- `atomic_write` replaces a file through a temp file and a rename (a reader never sees half a file),
  keeps the mode asked for, and writes through a symlink to its target instead of replacing it.
- `file_lock` serializes read-modify-write across processes.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from filelock import FileLock

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


class UnreadableFile(OSError):
    """A file that exists but must not or cannot be read; `reason` is a sentence fragment."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class TooLarge(UnreadableFile):
    pass


def read_bounded(path: Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    FileNotFoundError when it does not exist; `UnreadableFile` when it is a FIFO, a device, a
    folder, a symlink (with `follow_symlinks=False`) or unreadable; `TooLarge` beyond `limit`.
    """
    return _read_regular(path, limit, follow_symlinks=follow_symlinks, whole=True)


def read_head(path: Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The first `limit` bytes of a regular file (of any size), refused like `read_bounded`."""
    return _read_regular(path, limit, follow_symlinks=follow_symlinks, whole=False)


def read_tail(path: Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The last `limit` bytes of a regular file (of any size), refused like `read_bounded`."""
    return _read_regular(path, limit, follow_symlinks=follow_symlinks, whole=False, from_end=True)


def _read_regular(path: Path, limit: int, *, follow_symlinks: bool, whole: bool, from_end: bool = False) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise UnreadableFile(path, "it is a symbolic link, which is not trusted") from None
        if os.path.isdir(path):
            raise UnreadableFile(path, "it is not a regular file (a folder)") from None
        raise UnreadableFile(path, f"it cannot be read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(path, f"it is not a regular file ({_kind(info.st_mode)})")
        if whole and info.st_size > limit:
            raise TooLarge(path, f"it is larger than {limit} bytes")
        if from_end and info.st_size > limit:
            os.lseek(fd, info.st_size - limit, os.SEEK_SET)
        chunks: list[bytes] = []
        size = 0
        wanted = limit + 1 if whole else limit  # one byte more tells a file that grew past the limit
        while size < wanted:
            chunk = os.read(fd, min(1 << 16, wanted - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if whole and size > limit:
            raise TooLarge(path, f"it is larger than {limit} bytes")
        return b"".join(chunks)
    except OSError as exc:
        if isinstance(exc, UnreadableFile):
            raise
        raise UnreadableFile(path, f"it cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_text_bounded(path: Path, limit: int) -> str:
    """`read_bounded` decoded as UTF-8; `UnreadableFile` if it is not UTF-8."""
    raw = read_bounded(path, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, f"it is not UTF-8 text (byte {exc.start})") from None


def read_json_object(path: Path, limit: int, *, follow_symlinks: bool = True) -> dict[str, Any] | None:
    """A small JSON object hermes wrote itself (a cache, a record), read bounded; None when it is
    missing or damaged in any way (not JSON, too deep, too large, a FIFO, not an object)."""
    import json

    try:
        data = json.loads(read_bounded(path, limit, follow_symlinks=follow_symlinks))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def snapshot(*paths: Path, limit: int = 64 * 1024 * 1024) -> dict[Path, bytes | None]:
    """The files' bytes (None for a missing one), to put back with `restore` if a change fails.

    Read like every other file: bounded, never blocking on a FIFO (`UnreadableFile` for one)."""
    files: dict[Path, bytes | None] = {}
    for path in paths:
        try:
            files[path] = read_bounded(path, limit)
        except FileNotFoundError:
            files[path] = None
    return files


def restore(files: dict[Path, bytes | None]) -> None:
    """Put files back byte for byte as `snapshot` found them (a missing one is removed again)."""
    for path, content in files.items():
        with file_lock(path):
            if content is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, content, mode=path.stat().st_mode & 0o777 if path.exists() else 0o600)


def write_target(path: Path) -> Path:
    """Where a write to `path` should land: through a symlink to its final target."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def atomic_write(path: Path, text: str | bytes, *, mode: int = PRIVATE_FILE) -> None:
    """Replace `path` with `text` through a temp file in the same folder and a rename."""
    path = write_target(path)
    if path.exists() and not path.is_file():
        raise UnreadableFile(path, "it is not a regular file, so hermes will not replace it")
    private_dir(path.parent)
    import tempfile  # here, not at the top: `hermes mcp list` never writes, and tempfile costs 2.7 ms

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def file_lock(path: Path, *, timeout: float = 30) -> FileLock:
    """An exclusive lock beside `path` (`<name>.lock`), for read-modify-write across processes."""
    # Imported here: only editing commands lock, and filelock's import is not free.
    from filelock import FileLock

    # Beside the name hermes was given, not beside a symlink's target: a config.yaml that links to
    # /dev/zero must not make hermes create /dev/zero.lock (or anything else outside its folder).
    private_dir(path.parent)
    return FileLock(str(path.with_name(path.name + ".lock")), timeout=timeout, mode=PRIVATE_FILE)


def open_private_append(path: Path, *, binary: bool = False) -> Any:
    """Open a log file for appending; created 0600 (in a private folder) when it is new.

    `UnreadableFile` when something other than a regular file stands there: a FIFO put in a log's
    place would otherwise hold the open until someone reads it (O_NONBLOCK makes it fail at once)."""
    private_dir(path.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, PRIVATE_FILE)
    except OSError:
        if os.path.exists(path) and not os.path.isfile(path):
            raise UnreadableFile(path, "it is not a regular file") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnreadableFile(path, f"it is not a regular file ({_kind(mode)})")
    os.set_blocking(fd, True)  # a regular file: writes as usual
    return os.fdopen(fd, "ab") if binary else os.fdopen(fd, "a", encoding="utf-8")


MAX_LOG_BYTES = 8 * 1024 * 1024


class TextSink(Protocol):
    """Where log lines go (a `BoundedLog`, or any text file)."""

    def write(self, text: str) -> int: ...

    def flush(self) -> None: ...


class BoundedLog:
    """An append-only text log that never grows past `limit` bytes: past it, the file becomes
    `<name>.1` (replacing the older one) and a new file starts. A server that writes without end
    costs at most twice the limit on disk, never the whole disk."""

    def __init__(self, path: Path, limit: int = MAX_LOG_BYTES) -> None:
        self.path = path
        self.limit = limit
        self._handle: Any = None
        self._open()

    def _open(self) -> None:
        self._handle = open_private_append(self.path)
        self._size = os.fstat(self._handle.fileno()).st_size

    def write(self, text: str) -> int:
        data_size = len(text.encode("utf-8", errors="replace"))
        if self._size + data_size > self.limit and self._size > 0:
            self._rotate()
        self._size += data_size
        return int(self._handle.write(text))

    def _rotate(self) -> None:
        with contextlib.suppress(OSError):
            ours = os.fstat(self._handle.fileno()).st_ino
            self._handle.close()
            if os.stat(self.path).st_ino == ours:  # another writer may have rotated it already
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        self._open()

    def flush(self) -> None:
        self._handle.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._handle.close()

    def __enter__(self) -> BoundedLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def trim_folder(folder: Path, limit: int, *, pattern: str = "*") -> None:
    """Remove the oldest files matching `pattern` in `folder` until they take at most `limit` bytes."""
    try:
        entries = [(entry.stat().st_mtime, entry.stat().st_size, entry) for entry in folder.glob(pattern)
                   if entry.is_file() and not entry.is_symlink()]
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda item: item[0]):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            entry.unlink()
            total -= size


def write_private(path: Path, data: bytes) -> None:
    """Write a new file readable by the user only (the cache: images and audio saved from results)."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def private_dir(path: Path) -> Path:
    """Create `path` (and parents) if needed; a folder hermes creates is private to the user."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
        with contextlib.suppress(OSError):
            os.chmod(path, PRIVATE_DIR)
    return path


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """Files created inside the block are readable by the user only."""
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)
