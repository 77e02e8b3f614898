"""What a program needs inside its sandbox, derived from the files themselves (see `hermes.mcp.sandbox`).

A server's program and the scripts its arguments name bring what they load with them, read-only:
- a program's install prefix (`…/venv` for `…/venv/bin/python`) and the interpreter its `#!` names,
  for every hop of a symlink chain (`~/.local/bin/x` -> `node_modules/.bin/x` -> `dist/index.js`);
- a file inside a node package: the outermost `node_modules` folder holding it (its dependency tree:
  Node looks for packages upward from the file), never the project folder around it;
- any other script: its package root (the nearest folder up with `package.json`, `pyproject.toml`,
  `setup.py`, `Cargo.toml` or `go.mod`) and the `node_modules` folders above it (hoisted
  dependencies), else its own folder;
- programs a launcher script names by absolute path (`exec /opt/tool/bin/x "$@"`).
Never a home folder, an emptied place or anything above them.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field

from hermes.mcp.sandbox_places import first_link, inside_any, links_in, trusted_link, within

_SHEBANG_BYTES = 256
_NAMED_PROGRAM = re.compile(r"(?<![\w.])(/[\w.+@-]+(?:/[\w.+@-]+)+)")
_SCRIPT_HEAD = 16 * 1024
_MAX_HOPS = 16
_PACKAGE_MARKERS = ("package.json", "pyproject.toml", "setup.py", "setup.cfg", "Cargo.toml", "go.mod")
_PACKAGE_DEPTH = 4  # folders looked at above a script for its package root


def interpreter(program: str, search: str | None) -> str | None:
    """The program a `#!` line runs (`/usr/bin/env node` -> node on PATH), if any."""
    try:
        with open(program, "rb") as handle:
            head = handle.read(_SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        named = next((w for w in words[1:] if not w.startswith("-")), None)
        return shutil.which(named, path=search) if named else None
    return words[0]


def programs_named_in(script: str) -> list[str]:
    """Absolute paths of programs a launcher script names (its first few kilobytes)."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(_SCRIPT_HEAD).decode(errors="replace")
    except OSError:
        return []
    return [path for path in dict.fromkeys(_NAMED_PROGRAM.findall(head))
            if os.path.isfile(path) and os.access(path, os.X_OK)][:16]


def paths_in(value: str, cwd: str, *, relative: bool = True) -> list[str]:
    """Existing paths a command-line value names: `/x`, `./x` or `a/b` (from cwd), `--opt=/x`, `a:b` lists."""
    if value.startswith("-") and "=" in value:
        value = value.split("=", 1)[1]
    found = []
    for part in value.split(os.pathsep) if os.pathsep in value else [value]:
        if not part or "\n" in part or "\x00" in part or len(part) > 4096:
            continue
        if os.path.isabs(part):
            path = part
        elif relative and (part.startswith(".") or "/" in part):
            path = os.path.join(cwd, part)
        else:
            continue
        if os.path.lexists(path):
            found.append(os.path.normpath(path))
    return found


def link_chain(path: str) -> list[str]:
    """`path`, each file a chain of symlinks passes through, and where it ends."""
    hops = [os.path.normpath(path)]
    while os.path.islink(hops[-1]) and len(hops) < _MAX_HOPS:
        try:
            target = os.readlink(hops[-1])
        except OSError:
            break
        hops.append(os.path.normpath(os.path.join(os.path.dirname(hops[-1]), target)))
    hops.append(os.path.realpath(path))
    return list(dict.fromkeys(hops))


def code_roots(path: str) -> list[tuple[str, str]]:
    """For a file, what it loads around itself: (wider, narrower) pairs of folders, the wider one
    shared unless it would take in a home or an emptied place (see `Builder.add_folder`)."""
    folder = os.path.dirname(path)
    parts = folder.split("/")
    if "node_modules" in parts:
        return [("/".join(parts[:parts.index("node_modules") + 1]), folder)]
    for depth, candidate in enumerate(_ancestors(folder)):
        if depth > _PACKAGE_DEPTH:
            break
        if any(os.path.isfile(os.path.join(candidate, marker)) for marker in _PACKAGE_MARKERS):
            hoisted = [(os.path.join(up, "node_modules"), "") for up in _ancestors(os.path.dirname(candidate))
                       if os.path.isdir(os.path.join(up, "node_modules"))][:_PACKAGE_DEPTH]
            return [(candidate, folder), *hoisted]
    return [(folder, folder)]


def _ancestors(folder: str) -> list[str]:
    found = []
    while folder not in ("/", ""):
        found.append(folder)
        folder = os.path.dirname(folder)
    return found


@dataclass
class Builder:
    """The folders one start shares, as they are found: writable, read-only, named by the user."""

    homes: tuple[str, ...]
    emptied: tuple[str, ...]
    cwd: str
    writable: set[str] = field(default_factory=set)
    readable: set[str] = field(default_factory=set)
    chosen: set[str] = field(default_factory=set)  # what the user named: wins over the hiding
    symlinks: set[tuple[str, str]] = field(default_factory=set)  # (target, link) a path was given through

    def hidden_by_default(self, path: str) -> bool:
        return inside_any(path, self.emptied)

    def add(self, path: str, *, write: bool, chosen: bool = False) -> None:
        path = os.path.expanduser(path) if path.startswith("~") else path
        given = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.cwd, path))
        real = os.path.realpath(given)
        if real == "/" or not os.path.exists(real):
            return
        if given != real:
            # Named through a symlink: the link may have been planted by a server in a folder it can
            # write, so what it points to is shared as found, never as the user's own choice, and
            # writable only through links the system made. The link itself is made inside only
            # where the sandbox shows an empty place (`bwrap_argv`).
            chosen = False
            write = write and all(trusted_link(link) for link in links_in(given))
            link = first_link(given)
            if link is not None:
                self.symlinks.add((os.path.realpath(link), link))
        (self.writable if write else self.readable).add(real)
        if chosen:
            self.chosen.add(real)

    def add_folder(self, wider: str, narrower: str) -> None:
        """Share `wider` read-only; `narrower` when `wider` would take in a home folder or an emptied
        place (or is empty); neither when both would."""
        for folder in (wider, narrower):
            if folder and not any(within(place, folder) for place in self.emptied):
                self.add(folder, write=False)
                return

    def add_install_folder(self, folder: str) -> None:
        """A folder of programs and its prefix (`…/venv` for `…/venv/bin`), where the sandbox would hide it."""
        if self.hidden_by_default(folder):
            prefix = os.path.dirname(folder) if os.path.basename(folder) in ("bin", "sbin") else folder
            self.add_folder(prefix, folder)

    def add_code(self, path: str) -> None:
        """What a program or a script loads around itself, for each file a symlink chain passes."""
        for hop in link_chain(path):
            if os.path.isfile(hop) and self.hidden_by_default(hop):
                for wider, narrower in code_roots(hop):
                    self.add_folder(wider, narrower)

    def add_program(self, program: str, search: str | None) -> None:
        """A program and what it needs to start: its install folders and code, and the interpreter
        its `#!` names. Only a program that is really there: a `#!` line may name any path, and its
        folders must not become a way to see the host."""
        if not os.path.isfile(os.path.realpath(program)):
            return
        for hop in link_chain(program):
            self.add_install_folder(os.path.dirname(hop))
        self.add_code(program)
        named = interpreter(program, search)
        if named is not None and os.path.isabs(named) and named != program and os.path.isfile(named):
            for hop in link_chain(named):
                self.add_install_folder(os.path.dirname(hop))


def launcher_env(program: str, cache: str | None) -> dict[str, str]:
    """A package launcher's cache for this server alone: a server that could write the user's own
    npm or uv cache could plant code that runs later outside any sandbox."""
    name = os.path.basename(program)
    if cache is None:
        return {}
    if name in ("npx", "npm", "pnpm", "node"):
        return {"npm_config_cache": os.path.join(cache, "npm")}
    if name in ("uvx", "uv"):
        return {"UV_CACHE_DIR": os.path.join(cache, "uv")}
    return {}
