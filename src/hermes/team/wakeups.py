"""Work that runs each time it is woken, and once more when stopped, so nothing pending is lost.

The team gateway's writers (the audit record, users' pins) queue in memory and write in the
background: a burst of changes is one write, and a replica that stops writes what is left (for a
bounded time, shielded from the cancellation that stops it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskStatus

LAST_CHANCE = 5.0  # seconds the last write may take when the replica stops


class Wakeups:
    def __init__(self, work: Callable[[], Awaitable[None]]) -> None:
        self._work = work
        self._woken = anyio.Event()

    def wake(self) -> None:
        self._woken.set()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        try:
            while True:
                await self._woken.wait()
                self._woken = anyio.Event()
                await self._work()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(LAST_CHANCE):
                await self._work()
