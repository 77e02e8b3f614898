"""Ctrl-C and SIGTERM while a command runs its synchronous steps, outside any event loop.

There hermes unwinds as Python does for a Ctrl-C: a KeyboardInterrupt at the line that runs, and
every `finally` on the way out runs (an install's undo puts config.yaml and .env back). SIGTERM
unwinds the same way (`Terminated`, exit 143) instead of killing the process between two writes.

A KeyboardInterrupt that lands in a weak reference's callback or an object's finalizer is printed
and dropped by Python (seen in CI: a Ctrl-C while `hermes mcp install` loaded its probe fell into
`WeakSet._remove`, and the probe went on waiting for its server). So the handler also writes the
signal down: the next event loop the command runs (`interrupts.run`) takes one that was dropped as
a signal that came before it listened, and a prompt (`raise_if_dropped`) does not wait for an
answer after one.

The record lives in this process's one handler, as the signal itself does. The handler goes in
before the command line loads, through `_signal` (loaded with the interpreter): the `signal`
module's enums cost a listing 1.5 ms it would not otherwise spend.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module behind `signal`; typeshed has no stub
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

SIGINT: int = _signal.SIGINT
SIGTERM: int = _signal.SIGTERM
STOPPING = (SIGINT, SIGTERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM in a command's synchronous steps: it unwinds as a Ctrl-C does."""


def exit_code(stop: KeyboardInterrupt) -> int:
    return 128 + SIGTERM if isinstance(stop, Terminated) else 128 + SIGINT


class _Unheard:
    def __init__(self) -> None:
        self.signums: list[int] = []

    def interrupt(self, signum: int, _frame: object) -> None:
        self.signums.append(signum)
        raise Terminated if signum == SIGTERM else KeyboardInterrupt


_UNHEARD = _Unheard()
_PYTHONS_OWN: dict[int, Any] = {SIGINT: _signal.default_int_handler, SIGTERM: _signal.SIG_DFL}


def watch() -> None:
    """Put hermes's handler in place of Python's (main thread only, where handlers live)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOPPING:
        if _signal.getsignal(signum) == _PYTHONS_OWN[signum]:  # not one a parent chose (SIG_IGN under nohup)
            _signal.signal(signum, _UNHEARD.interrupt)


def as_python_would(signum: int) -> None:
    """Python's own handler back in place of hermes's, for a signal that must act as it would
    without hermes (a SIGTERM the user repeats while a loop's close is stuck: it ends the process)."""
    if _signal.getsignal(signum) == _UNHEARD.interrupt:
        _signal.signal(signum, _PYTHONS_OWN[signum])


def take() -> list[int]:
    """The signals that came outside an event loop since the last look; one whose KeyboardInterrupt
    went its normal way has already ended the command, so what is still here was dropped."""
    taken, _UNHEARD.signums = _UNHEARD.signums, []
    return taken


def pending() -> bool:
    return bool(_UNHEARD.signums)


def raise_if_dropped() -> None:
    """Before and after a prompt: a Ctrl-C dropped since the last look ends the command here, rather
    than leaving a question on the screen that the user already said no to."""
    taken = take()
    if taken:
        raise Terminated if taken[0] == SIGTERM else KeyboardInterrupt


@contextlib.contextmanager
def held() -> Iterator[None]:
    """A step that must not be cut short (putting back files a command half changed): a Ctrl-C or
    SIGTERM during it is written down, and acts as soon as the step is done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    before = {signum: _signal.getsignal(signum) for signum in STOPPING}
    for signum in STOPPING:
        _signal.signal(signum, lambda signum, _frame: came.append(signum))
    try:
        yield
    finally:
        for signum, handler in before.items():
            _signal.signal(signum, handler)
        if came:
            _signal.raise_signal(came[0])
