"""Running a command's async work under one signal policy.

Every command that runs async work goes through `run()`. While it runs, hermes itself catches
SIGINT and SIGTERM (no KeyboardInterrupt can fire in the middle of a cleanup):

- The first signal cancels the innermost *interruptible* scope: the command's work as a whole, or
  a part of it that asked to be stoppable on its own (a chat turn, through `interruptible()`).
  Cancelling lets every `finally` run, so servers are stopped and their processes reaped; the
  session's stop is shielded and quick, so the command is gone within about a second.
- A signal that arrives while an interrupted scope is still cleaning up is absorbed: the cleanup
  finishes, and no traceback is ever printed for it.
- A command whose work was interrupted raises `Interrupted` once its cleanup is done: exit 130
  for SIGINT (143 for SIGTERM). `hermes mcp serve` treats both as a request to stop and returns
  normally (`stop_on_signal=True`): for a server, being told to stop is how it ends.

The event loop only listens once it runs; before that (the loop being built) and after (the loop
being closed), a signal is written down instead (`_Held`) and handed to the policy once it
listens, or ends the command once the loop is gone. Python's own KeyboardInterrupt would fire at
whatever line runs at that moment, and one that lands in a weak reference's callback or a
finalizer is printed and dropped: the command would go on as if no key had been pressed. For the
same reason a Ctrl-C in the command's synchronous steps before the loop is written down too
(`hermes.sigint`), and handed to the policy in the same way.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from hermes import collection, sigint
from hermes.errors import HermesError, leaf

T = TypeVar("T")
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(HermesError):
    """The user (or the system) interrupted the command; its cleanup has run."""

    exit_code = 130

    def __init__(self, signum: int = signal.SIGINT) -> None:
        self.signum = signum
        if signum == signal.SIGTERM:
            self.exit_code = 143
        super().__init__("Interrupted.")


@dataclass
class Caught:
    """What `interruptible()` yields: whether a signal stopped that part of the work."""

    hit: bool = False
    signum: int | None = None


@dataclass
class _Policy:
    scopes: list[tuple[anyio.CancelScope, Caught]] = field(default_factory=list)
    # Signals with no part of the work left to stop: it is already stopping, or it has not begun
    # (the listener started a moment before the work's scope): the command must not go on.
    late: list[int] = field(default_factory=list)
    interrupted: bool = False  # a signal came while the loop listened

    def hit(self, signum: int) -> None:
        self.interrupted = True
        for scope, caught in reversed(self.scopes):
            if not caught.hit:
                caught.hit, caught.signum = True, signum
                scope.cancel()
                return
        # Everything is already stopping (the cleanup under way finishes as it is), or done.
        self.late.append(signum)


_current: ContextVar[_Policy | None] = ContextVar("hermes_interrupt_policy", default=None)


@contextlib.contextmanager
def interruptible() -> Iterator[Caught]:
    """A part of the work that a signal stops on its own, while the command goes on.

    Outside `run()` (a test calling the code directly) the block simply runs.
    """
    policy = _current.get()
    caught = Caught()
    with anyio.CancelScope() as scope:
        if policy is None:
            yield caught
            return
        policy.scopes.append((scope, caught))
        try:
            yield caught
        finally:
            policy.scopes.remove((scope, caught))


@contextlib.contextmanager
def stops_the_command() -> Iterator[None]:
    """A part of the work whose interruption ends the command, but only after the part's own
    cleanup ran while everything around it still runs: a call interrupted here is cancelled on its
    server (`notifications/cancelled`, `tasks/cancel`) over a live connection, not abandoned with it."""
    with interruptible() as caught:
        yield
    if caught.hit:
        raise Interrupted(caught.signum or signal.SIGINT)


@dataclass
class _Held:
    """Signals that arrived while the event loop was not listening, in order.

    While the loop closes, a signal after the user has already asked to stop (the work was
    interrupted, or a signal is already written down) goes to the handler from before the
    command: the close can wait on something nobody can cancel (a name lookup in the loop's
    thread pool), and a user who insists must be able to end the process as before.
    """

    signums: list[int] = field(default_factory=list)
    active: bool = False
    closing: bool = False
    interrupted: bool = False
    before: dict[int, Any] = field(default_factory=dict)

    def write_down(self, signum: int, _frame: object) -> None:
        if self.closing and (self.interrupted or self.signums):
            self.restore()
            if signum == signal.SIGTERM:
                sigint.as_python_would(signum)  # ends the process now, whatever the close waits on
            signal.raise_signal(signum)
            return
        self.signums.append(signum)

    def restore(self) -> None:
        for signum, handler in self.before.items():
            signal.signal(signum, handler)

    def take(self) -> list[int]:
        taken, self.signums = self.signums, []
        return taken

    def install(self) -> None:
        if self.active:
            for signum in _SIGNALS:
                signal.signal(signum, self.write_down)

    @contextlib.contextmanager
    def around_the_loop(self) -> Iterator[None]:
        # Signal handlers belong to the main thread; elsewhere (a test driving a command from a
        # worker thread) the loop cannot listen either, and Python's defaults stay.
        self.active = threading.current_thread() is threading.main_thread()
        if not self.active:
            yield
            return
        self.before = {signum: signal.getsignal(signum) for signum in _SIGNALS}
        self.install()
        # A Ctrl-C whose KeyboardInterrupt was dropped before (see `hermes.sigint`) came before the
        # loop listened, as one written down from now on does. Taken once ours are in place: one
        # dropped a moment earlier is not missed.
        self.signums[:0] = sigint.take()
        # What lived before the loop is not the loop's garbage: the collection after it walks only
        # what the loop made.
        gc.freeze()
        try:
            yield
        finally:
            # The loop's garbage (its tasks, streams, weak sets) is collected now, while a signal is
            # only written down: a finalizer that ran later, under the raising handler, would drop
            # a Ctrl-C (seen: the install's checklist then waited for an answer after the Ctrl-C).
            gc.collect()
            gc.unfreeze()
            self.restore()


async def _listen(policy: _Policy, held: _Held, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    try:
        with anyio.open_signal_receiver(*_SIGNALS) as signals:
            task_status.started()
            async for signum in signals:
                policy.hit(int(signum))
    finally:
        # The loop puts back Python's defaults when it stops listening; the loop's own closing is
        # still to come, and a signal during it is written down too.
        held.closing, held.interrupted = True, policy.interrupted
        held.install()


async def _guarded(work: Callable[..., Awaitable[T]], args: tuple[Any, ...], stop_on_signal: bool,
                   held: _Held) -> T | None:
    policy = _Policy()
    _current.set(policy)
    async with anyio.create_task_group() as tasks:
        await tasks.start(_listen, policy, held)
        result: T | None = None
        with interruptible() as caught:
            # A signal from before the loop listened stops the work at its first wait.
            for signum in held.take():
                policy.hit(signum)
            result = await work(*args)
        tasks.cancel_scope.cancel()
    if stop_on_signal:
        return result
    if caught.hit:
        raise Interrupted(caught.signum or signal.SIGINT)
    if policy.late:
        raise Interrupted(policy.late[0])
    return result


def run(work: Callable[..., Awaitable[T]], *args: Any, stop_on_signal: bool = False) -> T:
    """`anyio.run(work, *args)` under the signal policy above."""
    collection.long_work()
    held = _Held()
    try:
        with held.around_the_loop():
            result = anyio.run(_guarded, work, args, stop_on_signal, held)
    except BaseExceptionGroup as group:
        # The task group that listens for signals wraps what the work raised: a caller catching
        # one of hermes's own errors gets it as itself.
        cause = leaf(group)
        _stop_if_asked(held, stop_on_signal, cause)
        if isinstance(cause, HermesError):
            raise cause from None
        raise
    except Exception as failure:
        _stop_if_asked(held, stop_on_signal, failure)
        raise
    _stop_if_asked(held, stop_on_signal, None)
    return result  # type: ignore[return-value]  # None only when a signal stopped a server's work


def _stop_if_asked(held: _Held, stop_on_signal: bool, failure: BaseException | None) -> None:
    """A signal written down while the loop closed: the user asked to stop before the command moved
    on, and that is what it reports, whatever else the work ended with."""
    late = held.take()
    if late and not stop_on_signal and not isinstance(failure, Interrupted):
        raise Interrupted(late[0]) from None
