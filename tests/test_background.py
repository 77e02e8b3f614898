"""Background work belongs to its owner's task group: it runs off the event loop, one job at a
time, and a cancelled owner stops the job at its next check instead of waiting for it."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import pytest

from hermes.background import Background

pytestmark = pytest.mark.anyio


async def test_jobs_run_in_order_off_the_event_loop() -> None:
    ran: list[tuple[str, bool]] = []
    done = anyio.Event()
    loop_thread = threading.get_ident()
    background = Background()
    for name in ("first", "second"):
        background.submit(lambda check, name=name: ran.append((name, threading.get_ident() != loop_thread)))
    background.submit(lambda check: anyio.from_thread.run_sync(done.set))
    async with anyio.create_task_group() as tasks:
        await tasks.start(background.run)
        await done.wait()
        tasks.cancel_scope.cancel()
    assert ran == [("first", True), ("second", True)]


async def test_a_cancelled_owner_stops_the_job_at_its_next_check() -> None:
    started, stopped = threading.Event(), threading.Event()
    release = threading.Event()

    def job(check: Callable[[], None]) -> None:
        started.set()
        try:
            while True:  # a long computation, looking between its batches
                release.wait(0.01)
                check()
        finally:
            stopped.set()

    background = Background()
    background.submit(job)
    async with anyio.create_task_group() as tasks:
        await tasks.start(background.run)
        await anyio.to_thread.run_sync(started.wait)
        tasks.cancel_scope.cancel()
    assert await anyio.to_thread.run_sync(stopped.wait, 30)
