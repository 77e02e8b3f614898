"""Keeping child processes from outliving hermes.

Each stdio server starts in its own process group (so a shutdown can kill it and everything it
started) and, on Linux, with a parent-death signal so that even a SIGKILLed host takes its children
with it. The kernel ties that signal to the thread that forked, which for us is always the event
loop's thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


@functools.cache
def _prctl() -> Callable[..., int]:
    # Looked up once in the parent: the forked child should run as little Python as possible
    # before exec, since the spawning thread waits for it.
    return ctypes.CDLL(None, use_errno=True).prctl


def _linux_die_with_parent(parent_pid: int) -> Callable[[], None]:
    prctl = _prctl()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The parent may have died between fork and prctl; then nobody would send the signal.
        if os.getppid() != parent_pid:
            os._exit(1)

    return arm


@functools.cache
def _setpriv() -> str | None:
    return shutil.which("setpriv") if sys.platform.startswith("linux") else None


def spawn_plan(command: str, args: list[str]) -> tuple[list[str], Callable[[], None] | None]:
    """The argv to execute and the `preexec_fn` (if any) so that the child dies with us.

    util-linux's `setpriv --pdeathsig` arms the signal and execs the server; it keeps the fast
    vfork spawn path, which a Python `preexec_fn` disables (a full fork of the host costs several
    milliseconds per server). Without setpriv, a `preexec_fn` calls prctl directly.
    """
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--", command, *args], None
    if sys.platform.startswith("linux"):
        return [command, *args], _linux_die_with_parent(os.getpid())
    return [command, *args], None


def resolve_command(command: str, path: str | None, cwd: str | None) -> str:
    """The program a server's `command` names, as the child would find it; FileNotFoundError if none."""
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = command if os.path.isabs(command) or cwd is None else os.path.join(cwd, command)
        found = shutil.which(candidate)
    else:
        found = shutil.which(command, path=path)
    if found is None:
        raise FileNotFoundError(command)
    return found


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by `pid` (our children lead their own groups)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
