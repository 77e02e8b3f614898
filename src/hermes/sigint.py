"""Ctrl-C while a command runs its synchronous steps, outside any event loop.

There Python's own way is the right one: a KeyboardInterrupt at the line that runs, and the
command unwinds through its `finally` blocks. But a KeyboardInterrupt that lands in a weak
reference's callback or an object's finalizer is printed and dropped (seen in CI: a Ctrl-C while
`hermes mcp install` loaded its probe fell into `WeakSet._remove`, and the probe went on waiting for
its server). hermes's handler raises it as Python's does and also writes the signal down: the next
event loop the command runs (`interrupts.run`) takes a signal written down as one that came before it
listened, and its work stops at its first wait.

The record lives in this process's one handler, as the signal itself does; this module imports
nothing heavy, since the handler goes in before the command line loads.
"""

from __future__ import annotations

import signal
import threading


class _Unheard:
    def __init__(self) -> None:
        self.signums: list[int] = []

    def interrupt(self, signum: int, _frame: object) -> None:
        self.signums.append(signum)
        raise KeyboardInterrupt


_UNHEARD = _Unheard()


def watch() -> None:
    """Put hermes's handler in place of Python's (main thread only, where handlers live)."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _UNHEARD.interrupt)


def take() -> list[int]:
    """The Ctrl-Cs that came outside an event loop since the last look; a KeyboardInterrupt that
    went its normal way has already ended the command, so what is still here was dropped."""
    taken, _UNHEARD.signums = _UNHEARD.signums, []
    return taken


def pending() -> bool:
    return bool(_UNHEARD.signums)
