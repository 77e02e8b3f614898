"""The folders a sandbox shares, held open from the moment they are checked until bubblewrap binds them.

A server that may write a folder can swap a folder inside it for a symlink in one atomic
rename (`renameat2(RENAME_EXCHANGE)`) while another server's sandbox is being built. Bound by
path, the symlink's target (the user's repository, a home) would be shared in its place. So each
folder or file to bind is opened without following symlinks and checked to be the planned path
itself (the kernel's name for the open file is its real path), and bubblewrap binds the open file
(`--bind-fd`), checking again after the mount that it mounted that very file. With a bubblewrap
older than `--bind-fd` (before 0.7), the same check is made just before the start and the binds
are by path: a window of a few milliseconds instead of none.

Where a bind lands (its destination) is a path again, resolved by bubblewrap; `sandbox.plan`
keeps every folder on the way to what it guards a mount of its own in every sandbox that may
write there, so no server can rename one of them away while another's sandbox is built.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable

from hermes.errors import HermesError

_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


class SandboxChanged(HermesError):
    """A folder the sandbox shares changed between the plan and the start (a symlink appeared in
    its place, it was renamed or removed): the server is not started rather than given another place."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} changed while the sandbox was being built (renamed, removed or replaced by a "
                         "symlink, maybe by another server that may write there); the server was not started")
        self.path = path


def _open_checked(path: str) -> int:
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise SandboxChanged(path) from exc
    try:
        kind = os.fstat(fd).st_mode
        named = os.readlink(f"/proc/self/fd/{fd}")
    except OSError as exc:
        os.close(fd)
        raise SandboxChanged(path) from exc
    if stat.S_ISLNK(kind) or named != path:
        os.close(fd)
        raise SandboxChanged(path)
    return fd


class HeldBinds:
    """Open files of the places a sandbox binds, each checked to be where the plan found it.

    bubblewrap closes a bind's file once it has used it, so a place bound twice gets a copy."""

    def __init__(self, paths: Iterable[str], *, by_fd: bool) -> None:
        self._by_fd = by_fd
        self._held: dict[str, int] = {}
        self._given: list[int] = []
        try:
            for path in dict.fromkeys(paths):
                self._held[path] = _open_checked(path)
        except BaseException:
            self.close()
            raise
        if not by_fd:  # checked now; bubblewrap binds by path (an old bubblewrap)
            self.close()

    def bind(self, flag: str, path: str) -> list[str]:
        """The bubblewrap arguments that bind `path` (`--bind` or `--ro-bind`) on itself."""
        fd = self._held.get(path)
        if not self._by_fd or fd is None:
            return [flag, path, path]
        given = fd if fd not in self._given else os.dup(fd)
        if given != fd:
            os.set_inheritable(given, False)
        self._given.append(given)
        return [f"{flag}-fd", str(given), path]

    @property
    def fds(self) -> tuple[int, ...]:
        """What the bubblewrap process must inherit."""
        return tuple(self._given)

    def close(self) -> None:
        """Close every held file (once bubblewrap has started and has its own copies)."""
        for fd in {*self._held.values(), *self._given}:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._held.clear()
        self._given.clear()

    def __enter__(self) -> HeldBinds:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
