"""Work that runs off the event loop, owned by whoever runs `Background.run` in its task group.

Computing the tools' meaning vectors takes seconds of CPU the first time; it must neither block
the event loop nor outlive the session that asked for it. A job is queued with `submit` (from the
event loop, synchronously: a surface is rebuilt in sync code) and runs in a worker thread awaited
by the owner's task, one at a time; cancelling the owner's task group cancels the job, which
stops at its next `check()` (between batches) instead of holding the process open at exit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.abc import TaskStatus

# A job: given `check`, which raises once its owner is cancelled (call it between pieces of work).
Job = Callable[[Callable[[], None]], None]


def run_inline(job: Job) -> None:
    """For callers without an event loop (tests, benches, scripts): the job runs now, uncancellable."""
    job(lambda: None)


class Background:
    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[Job](math.inf)

    def submit(self, job: Job) -> None:
        """Queue `job` (never blocks); it runs once `run` has started, or never if its owner stops first."""
        self._send.send_nowait(job)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run queued jobs one at a time until cancelled (start it in the owner's task group)."""
        task_status.started()
        async with self._receive:
            async for job in self._receive:
                await anyio.to_thread.run_sync(job, anyio.from_thread.check_cancelled, abandon_on_cancel=True)
