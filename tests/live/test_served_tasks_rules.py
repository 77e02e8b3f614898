"""The rules of `serve`'s tasks that need no process: records kept in memory (expiry, a bound), a
task whose process stopped saying it runs it, and answers and cancels handed over through shared
records. The calls are real `Parked` calls; the clock is a test's; the records are the in-memory
ones (made `shared` where the rule is about other processes)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.abc import TaskGroup
from mcp.shared.exceptions import MCPError

from hermes.live import served_tasks
from hermes.live.rounds import Parked
from hermes.live.served_tasks import ServedTasks, TaskParams, TaskUpdateParams
from hermes.live.task_records import MAX_KEPT, MAX_KEPT_BYTES, MemoryTaskRecords, TaskRecord, TaskStatus

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class SharedRecords(MemoryTaskRecords):
    """Records other processes read: here, the test plays the other process."""

    shared = True  # type: ignore[assignment]


@asynccontextmanager
async def _serving(records: MemoryTaskRecords, clock: Clock | None = None
                   ) -> AsyncIterator[tuple[ServedTasks, TaskGroup]]:
    """Tasks kept in `records`, and the group their calls run in; everything stops with the block."""
    async with anyio.create_task_group() as group:
        yield ServedTasks(records, group, clock=clock or time.time), group
        group.cancel_scope.cancel()


def _ctx(*, tasks: bool = True, name: str | None = None) -> Any:
    """A request's context as the rules read it; `name`: its Mcp-Name header (over stdio: none)."""
    extensions = {"io.modelcontextprotocol/tasks": {}} if tasks else None
    return SimpleNamespace(protocol_version="2026-07-28",
                           session=SimpleNamespace(client_capabilities=types.ClientCapabilities(extensions=extensions)),
                           request=SimpleNamespace(headers={"mcp-name": name}) if name else None)


async def _question(parked: Parked) -> Any:
    return await parked.ask(types.ElicitRequest(params=types.ElicitRequestFormParams(
        message="Go on?", requested_schema={"type": "object", "properties": {}})), "go")

async def _until(tasks: ServedTasks, task_id: str, status: str) -> dict[str, Any]:
    """Ask for the task (as a client polls) until it has `status`."""
    with anyio.fail_after(10):
        while (found := await tasks.get(_ctx(), TaskParams(taskId=task_id)))["status"] != status:
            await anyio.sleep(0)
    return found


async def _until_followed(tasks: ServedTasks) -> None:
    """Until no task runs: each one's follower has written its end."""
    with anyio.fail_after(10):
        while tasks.running():
            await anyio.sleep(0)



async def test_memory_records_expire_and_keep_at_most_their_bound() -> None:
    clock = Clock()
    records = MemoryTaskRecords(clock)
    first = TaskRecord("first", TaskStatus.COMPLETED, clock.now, clock.now, 60_000, 500)
    await records.create(first)
    assert await records.get("first") == (first, clock.now)
    clock.now += 61
    assert await records.get("first") is None  # past its ttl
    for number in range(MAX_KEPT + 5):
        await records.create(TaskRecord(f"t{number}", TaskStatus.COMPLETED, clock.now, clock.now + number,
                                        60_000, 500))
    assert await records.get("t0") is None and await records.get(f"t{MAX_KEPT + 4}") is not None
    assert sum([await records.get(f"t{n}") is not None for n in range(MAX_KEPT + 5)]) == MAX_KEPT


async def test_memory_records_bound_what_results_weigh_and_never_forget_a_running_task() -> None:
    clock = Clock()
    records = MemoryTaskRecords(clock)
    running = TaskRecord("running", TaskStatus.WORKING, clock.now, clock.now, 60_000, 500)
    await records.create(running)
    large = {"content": [{"type": "text", "text": "x" * (4 * 1024 * 1024)}]}
    for number in range(40):  # 160 MiB of results, each task ending in turn
        clock.now += 1
        started = TaskRecord(f"big{number}", TaskStatus.WORKING, clock.now, clock.now, 3_600_000, 500)
        await records.create(started)
        assert await records.save(started.changed(TaskStatus.COMPLETED, at=clock.now, result=large))
    kept = [n for n in range(40) if await records.get(f"big{n}") is not None]
    assert kept == list(range(40 - len(kept), 40)) and 4 * len(kept) <= MAX_KEPT_BYTES // (1024 * 1024)
    clock.now += 3600
    assert await records.get("running") is not None  # running an hour past its ttl: still its record


async def test_a_burst_of_calls_becomes_at_most_the_bound_of_tasks() -> None:
    async with _serving(MemoryTaskRecords()) as (tasks, _):
        calls = [Parked(f"p{n}", "tools/call") for n in range(served_tasks.MAX_RUNNING + 10)]
        for parked in calls:  # every upstream makes its call a task before any is adopted
            tasks.escalating(parked)()
        assert sum(parked.escalated for parked in calls) == served_tasks.MAX_RUNNING
        calls[0].done.set()  # one given up before it was adopted frees its place
        late = Parked("late", "tools/call")
        tasks.escalating(late)()
        assert late.escalated


async def test_a_task_whose_process_went_quiet_is_failed_and_one_cancelled_elsewhere_stops() -> None:
    clock = Clock()
    records = SharedRecords(clock)
    async with _serving(records, clock) as (tasks, group):
        # Another replica's task: its record says working, and that replica stopped saying so.
        elsewhere = TaskRecord("elsewhere", TaskStatus.WORKING, clock.now, clock.now, 3_600_000, 500)
        await records.create(elsewhere)
        clock.now += served_tasks.STALE_AFTER - 1
        assert (await tasks.get(_ctx(), TaskParams(taskId="elsewhere")))["status"] == "working"
        clock.now += 2
        failed = await tasks.get(_ctx(), TaskParams(taskId="elsewhere"))
        assert failed["status"] == "failed" and "stopped before this task finished" in failed["error"]["message"]

        # This process's task, asking a question; another replica cancels it through the records.
        parked = Parked("p", "tools/call")
        group.start_soon(parked.run, lambda: _question(parked), lambda _: None)
        created = await tasks.adopt(parked)
        await _until(tasks, created.task_id, "input_required")
        await records.cancel(created.task_id, clock.now)
        assert (await tasks.get(_ctx(), TaskParams(taskId=created.task_id)))["status"] == "cancelled"
        await parked.done.wait()  # the call itself was stopped
        await _until_followed(tasks)  # and its follower is done with it
        stored = await records.get(created.task_id)
        assert stored is not None and stored[0].status is TaskStatus.CANCELLED


async def test_answers_handed_over_resume_the_task_and_malformed_ones_are_refused() -> None:
    clock = Clock()
    records = SharedRecords(clock)
    async with _serving(records, clock) as (tasks, group):
        parked = Parked("p", "tools/call")

        async def call() -> types.CallToolResult:
            answer = await _question(parked)
            said = answer.action if isinstance(answer, types.ElicitResult) else "nothing"
            return types.CallToolResult(content=[types.TextContent(type="text", text=said)])

        group.start_soon(parked.run, call, lambda _: None)
        created = await tasks.adopt(parked)
        params = TaskParams(taskId=created.task_id)
        await _until(tasks, created.task_id, "input_required")
        sampled = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
        for wrong in ({"x": 1}, sampled, {"roots": []}):  # not an answer; answers of other questions
            with pytest.raises(MCPError) as malformed:
                await tasks.update(_ctx(), TaskUpdateParams(taskId=created.task_id, inputResponses={"go": wrong}))
            assert malformed.value.error.code == types.INVALID_PARAMS
        assert (await tasks.get(_ctx(), params))["status"] == "input_required"  # still waiting for its answer
        with pytest.raises(MCPError) as misrouted:
            await tasks.get(_ctx(name="another"), params)
        assert misrouted.value.error.code == -32020
        with pytest.raises(MCPError) as undeclared:
            await tasks.get(_ctx(tasks=False), params)
        assert undeclared.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY

        # Another replica's tasks/update lands in the records; this one takes it on its next look.
        assert await records.answer(created.task_id, {"go": {"action": "accept", "content": {}}})
        group.start_soon(tasks.run)
        await parked.done.wait()
        done = await _until(tasks, created.task_id, "completed")
        assert done["result"]["content"][0]["text"] == "accept"


class SlowRecords(MemoryTaskRecords):
    """Records whose writes take a moment (as a database's do), and whose first write fails."""

    def __init__(self) -> None:
        super().__init__()
        self.failed_once = False

    async def save(self, record: TaskRecord) -> TaskRecord | None:
        await anyio.sleep(0.01)  # the call may finish meanwhile
        if not self.failed_once:
            self.failed_once = True
            raise OSError("the database is away for a moment")
        return await super().save(record)


async def test_a_change_made_while_a_record_is_written_is_written_too_and_a_failed_write_is_retried() -> None:
    records = SlowRecords()
    async with _serving(records) as (tasks, group):
        parked = Parked("p", "tools/call")
        finish = anyio.Event()

        async def call() -> types.CallToolResult:
            await _question(parked)
            await finish.wait()
            return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

        group.start_soon(parked.run, call, lambda _: None)
        created = await tasks.adopt(parked)
        params = TaskParams(taskId=created.task_id)
        await _until(tasks, created.task_id, "input_required")
        await tasks.update(_ctx(), TaskUpdateParams(taskId=created.task_id, inputResponses={
            "go": {"action": "accept", "content": {}}}))
        finish.set()  # the call ends while the answer's state is being written
        await _until_followed(tasks)
        stored = await records.get(created.task_id)
        assert records.failed_once and stored is not None and stored[0].status is TaskStatus.COMPLETED
        assert (await tasks.get(_ctx(), params))["result"]["content"][0]["text"] == "done"
