"""How one connection attempt ends, and the few synchronisation pieces the supervisor waits on.

An attempt learns how it ended from its `Mailbox`: whoever saw the end posts a typed outcome, and
the first one posted wins.

    Exited           the stdio child exited, or a call found the connection closed
    EndpointChanged  the app behind an app-bound server restarted (new pid, port or token)
    AppGone          the app's endpoint went away while connected
    Stopped          the session stopped this server
    Failed           the attempt never connected (returned by the attempt itself)
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import anyio

from hermes.apps.liveness import AppFacts


@dataclass(frozen=True)
class RestartPolicy:
    attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    healthy_after: float = 60.0

    def delay(self, failures_in_row: int, rng: random.Random) -> float:
        """Doubling from `base_delay`, capped, with jitter so crashed servers don't restart in step."""
        capped = min(self.max_delay, self.base_delay * 2 ** (failures_in_row - 1))
        return float(capped * rng.uniform(0.5, 1.0))


@dataclass(frozen=True)
class Exited:
    reason: str


@dataclass(frozen=True)
class EndpointChanged:
    pass


@dataclass(frozen=True)
class AppGone:
    facts: AppFacts


@dataclass(frozen=True)
class Stopped:
    pass


@dataclass(frozen=True)
class Failed:
    reason: str
    app: AppFacts | None = None  # set when the app's endpoint is why (the supervisor then waits for it)


Ended = Exited | EndpointChanged | AppGone | Stopped | Failed


class Mailbox:
    """Where an attempt learns how it ended: the first outcome posted wins."""

    def __init__(self) -> None:
        self.outcome: Ended | None = None
        self._posted = anyio.Event()

    def post(self, outcome: Ended) -> None:
        if self.outcome is None:
            self.outcome = outcome
            self._posted.set()

    async def wait(self) -> Ended:
        await self._posted.wait()
        assert self.outcome is not None
        return self.outcome


class Signal:
    """A level-triggered wake-up: `set()` before `wait()` is not lost; `wait()` consumes it."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self, timeout: float = math.inf) -> None:
        with anyio.move_on_after(timeout):
            await self._event.wait()
        if self._event.is_set():
            self._event = anyio.Event()


class Counter:
    """A counter others can wait on ("until more than N attempts have finished")."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = anyio.Event()

    def bump(self) -> None:
        self.count += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def beyond(self, count: int) -> None:
        while self.count <= count:
            await self._changed.wait()
