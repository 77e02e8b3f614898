"""Keeping child processes from outliving hermes.

Each stdio server starts in its own process group (so a shutdown can kill it and everything it
started) and, on Linux, with a parent-death signal so that even a SIGKILLed host takes its children
with it. The kernel ties that signal to the thread that forked, which for us is always the event
loop's thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _linux_die_with_parent(parent_pid: int) -> Callable[[], None]:
    def arm() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # The parent may have died between fork and prctl; then nobody would send the signal.
        if os.getppid() != parent_pid:
            os._exit(1)

    return arm


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that arms the parent-death signal, where the OS has one."""
    if sys.platform.startswith("linux"):
        return _linux_die_with_parent(os.getpid())
    return None


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by `pid` (our children lead their own groups)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
