"""The Tasks extension offered by `serve` to its 2026-07-28 clients (`io.modelcontextprotocol/tasks`).

A client that declares the extension (for its connection or in one request's `_meta`) and calls a
tool whose upstream runs it as a task gets a task of its own: the call answers with a
`CreateTaskResult` the moment the upstream made it a task, and goes on in `serve`'s task group.
`tasks/get` answers its status, its questions (`input_required`: what the upstream asks, keyed as
it keyed them), then its result (a tool's own error stays a `completed` result with `isError`; a
call hermes could not make is `failed` with a JSON-RPC error). `tasks/update` answers questions
(some or all), `tasks/cancel` stops it, upstream too. A call that asks its questions before its
upstream made it a task keeps those as input-required rounds.

Each change is written to the task's record (`task_records`) by the task's follower, and clients
are told only what was written: a `tasks/get` right after the `CreateTaskResult` finds the task,
no client sees a state go back, and where the records are shared (the team gateway's database)
any replica answers for a task another one runs, and hands that one the answers and cancels it is
sent (it looks for them twice a second while it runs tasks). A task whose replica stopped saying
it runs it is reported failed. A call that finished wins over a cancel that came after it.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.jsonrpc import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from hermes.live.rounds import Parked, read_answers, wire
from hermes.live.routing import Ctx
from hermes.live.task_records import TaskCreated, TaskRecord, TaskRecords, TaskStatus
from hermes.mcp.describe import one_line
from hermes.mcp.task_extension import EXTENSION

TTL_MS = 3_600_000  # how long an ended task's record is kept after its last change
POLL_INTERVAL_MS = 500  # what clients are told to poll at
MAX_RUNNING = 64  # tasks at once; past that, calls are answered without one (as before the extension)
LOOK_EVERY = 0.5  # seconds between looks for answers and cancels handed over through shared records
STALE_AFTER = 60.0  # a task whose process has not said it runs it for this long has stopped with it
LAST_WRITE = 5.0  # seconds the record of a task cut short by a stop may take to write
SAVE_AGAIN = 0.5  # seconds before a record whose write failed is written again
ASKING = "waiting for answers to the tool's questions"
STOPPED = {"code": types.INTERNAL_ERROR, "message": "hermes stopped before this task finished; call the tool again"}
_REQUIRED = types.MissingRequiredClientCapabilityErrorData(
    required_capabilities=types.ClientCapabilities(extensions={EXTENSION: {}}))


class TaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId", min_length=1, max_length=256)


class TaskUpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


def declared(ctx: Ctx) -> bool:
    """Whether this request's client declared the extension (for its connection or this request)."""
    capabilities = ctx.session.client_capabilities
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and capabilities is not None and \
        EXTENSION in (capabilities.extensions or {})


@dataclass(eq=False)
class _Running:
    """A task this process runs: its call, and the record as last written (what clients are told)."""

    parked: Parked
    written: TaskRecord
    cancelled: bool = False


class ServedTasks:
    def __init__(self, records: TaskRecords, tasks: anyio.abc.TaskGroup, *,
                 clock: Callable[[], float] = time.time) -> None:
        """`tasks`: where the tasks' followers run (serve's task group, which also runs the calls)."""
        self.records = records
        self._tasks = tasks
        self._clock = clock
        self._running: dict[str, _Running] = {}
        self._escalating: set[Parked] = set()  # made tasks by their upstream, not adopted yet

    # -- calls -----------------------------------------------------------------------------------

    def running(self) -> int:
        return len(self._running)

    def escalating(self, parked: Parked) -> Callable[[], None]:
        """What hears that the upstream made `parked`'s call a task: it becomes one here too while
        fewer than `MAX_RUNNING` run (counted when it happens, so a burst of calls cannot pass the
        bound); past that it goes on as an ordinary call."""
        def heard() -> None:
            self._escalating = {p for p in self._escalating if not p.done.is_set()}  # given up before adopted
            if len(self._running) + len(self._escalating) < MAX_RUNNING:
                self._escalating.add(parked)
                parked.escalate()

        return heard

    async def adopt(self, parked: Parked) -> TaskCreated:
        """The call `parked` is a task from now on: kept (durably) before the client hears of it."""
        self._escalating.discard(parked)
        now = self._clock()
        record = TaskRecord(secrets.token_urlsafe(18), TaskStatus.WORKING, now, now, TTL_MS, POLL_INTERVAL_MS)
        running = self._running[record.task_id] = _Running(parked, record)
        try:
            await self.records.create(record)
        except BaseException:
            del self._running[record.task_id]
            parked.cancel()
            raise
        self._tasks.start_soon(self._follow, running)
        return TaskCreated.of(record)

    def _state(self, running: _Running) -> TaskRecord:
        """The task as it is now (the written record itself, while nothing it says has changed).
        A call that finished wins over a cancel that came after it."""
        parked, written, now = running.parked, running.written, self._clock()
        if parked.done.is_set() and parked.result is not None:
            state = written.changed(TaskStatus.COMPLETED, at=now, result=wire(parked.result))
        elif running.cancelled:
            state = written.changed(TaskStatus.CANCELLED, at=now)
        elif parked.done.is_set():
            state = written.changed(TaskStatus.FAILED, at=now, error=_error(parked.failure))
        elif questions := parked.send_unanswered():
            state = written.changed(TaskStatus.INPUT_REQUIRED, at=now, message=ASKING,
                                    input_requests={key: wire(q) for key, q in questions.items()})
        else:
            state = written.changed(TaskStatus.WORKING, at=now)
        same = (state.status, state.input_requests) == (written.status, written.input_requests)
        return written if same else state

    async def _follow(self, running: _Running) -> None:
        """Write each change of a running task to its record, until it ends; clients are told only
        what was written. A write that fails (the database away for a moment) is tried again."""
        parked = running.parked
        try:
            while True:
                seen = parked.version
                state = self._state(running)
                if state is not running.written:
                    try:
                        written = await self.records.save(state)
                    except Exception:
                        await anyio.sleep(SAVE_AGAIN)
                        continue
                    if written is None:
                        if state.status.terminal:
                            return  # it ended elsewhere first (cancelled through another replica)
                        self._cancel(running)
                        continue
                    running.written = state = written
                if state.status.terminal:
                    return
                await parked.change(seen)
        finally:
            self._running.pop(running.written.task_id, None)
            parked.cancel()
            if not running.written.status.terminal:
                # `serve` (or this replica) stops under the task: whoever asks next hears so at once.
                with anyio.CancelScope(shield=True), anyio.move_on_after(LAST_WRITE), \
                        contextlib.suppress(Exception):
                    await self.records.save(running.written.changed(TaskStatus.FAILED, at=self._clock(),
                                                                    error=STOPPED))

    def _cancel(self, running: _Running) -> None:
        running.cancelled = True
        running.parked.cancel()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Where records are shared: take the answers and cancels other processes handed over, and
        say that this one still runs its tasks."""
        task_status.started()
        if not self.records.shared:
            return
        while True:
            await anyio.sleep(LOOK_EVERY)
            if not self._running:
                continue
            try:
                handed = await self.records.pending(list(self._running), self._clock())
            except Exception:  # the database is away for a moment: the next look tries again
                continue
            for task_id, pending in handed.items():
                running = self._running.get(task_id)
                if running is None:
                    continue
                if pending.cancelled:
                    self._cancel(running)
                elif pending.responses:
                    running.parked.answer(pending.responses, strict=False)

    # -- the extension's methods ------------------------------------------------------------------

    async def get(self, ctx: Ctx, params: TaskParams) -> dict[str, Any]:
        _require(ctx, params)
        running = self._running.get(params.task_id)
        if running is not None and self.records.shared:
            # Cancelled through another replica a moment ago: said so here too, at once.
            found = await self.records.get(params.task_id)
            if found is not None and found[0].status is TaskStatus.CANCELLED:
                self._cancel(running)
                return {"resultType": "complete", **found[0].detailed()}
        record = running.written if running is not None else await self._stored(params.task_id)
        return {"resultType": "complete", **record.detailed()}

    async def update(self, ctx: Ctx, params: TaskUpdateParams) -> types.EmptyResult:
        _require(ctx, params)
        running = self._running.get(params.task_id)
        if running is not None:
            running.parked.answer(params.input_responses)
            return types.EmptyResult(result_type="complete")
        record = await self._stored(params.task_id)
        if record.status is TaskStatus.INPUT_REQUIRED:
            # An answer of the wrong kind is refused here, not dropped by the replica running the task.
            asked = record.input_requests or {}
            answers = read_answers(params.input_responses, asked)
            if answers:
                await self.records.answer(params.task_id, {k: wire(v) for k, v in answers.items()})
                # What is still asked, at once (the replica running it writes the same once it takes them).
                left = {k: v for k, v in asked.items() if k not in answers}
                await self.records.save(record.changed(
                    TaskStatus.INPUT_REQUIRED if left else TaskStatus.WORKING, at=self._clock(),
                    message=ASKING if left else None, input_requests=left or None))
        return types.EmptyResult(result_type="complete")

    async def cancel(self, ctx: Ctx, params: TaskParams) -> types.EmptyResult:
        _require(ctx, params)
        running = self._running.get(params.task_id)
        if running is not None and running.parked.done.is_set():
            return types.EmptyResult(result_type="complete")  # it finished: its end is about to be written
        if running is not None:
            self._cancel(running)
        found = await self.records.cancel(params.task_id, self._clock())
        if found is None and running is None:
            raise _unknown(params.task_id)
        if running is not None and found is not None and found.status is TaskStatus.CANCELLED:
            running.written = found  # written: the next tasks/get says so, here as anywhere
        return types.EmptyResult(result_type="complete")

    async def _stored(self, task_id: str) -> TaskRecord:
        found = await self.records.get(task_id)
        if found is None:
            raise _unknown(task_id)
        record, alive_at = found
        if not record.status.terminal and self.records.shared and self._clock() - alive_at > STALE_AFTER:
            # The replica running it stopped (killed, or its database connection gone for good).
            written = await self.records.save(record.changed(TaskStatus.FAILED, at=self._clock(), error=STOPPED))
            if written is not None:
                return written
            found = await self.records.get(task_id)  # it wrote its end just now after all
            if found is None:
                raise _unknown(task_id)
            record = found[0]
        return record


def _require(ctx: Ctx, params: TaskParams) -> None:
    """A tasks/* request may be served: a 2026-07-28 client that declared the extension, whose
    `Mcp-Name` header (what a proxy routes by; required over HTTP) names the task its body names."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found")
    if not declared(ctx):
        raise MCPError(types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                       f"tasks/* needs the {EXTENSION} extension, which this request's client did not declare",
                       wire(_REQUIRED))
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return  # not over HTTP: no routing headers
    routed = headers.get(MCP_NAME_HEADER)
    if routed is None:
        raise MCPError(HEADER_MISMATCH, "A tasks/* request needs the Mcp-Name header, naming its taskId")
    if decode_header_value(routed.strip()) != params.task_id:
        raise MCPError(HEADER_MISMATCH, "The Mcp-Name header names another task than the request's taskId")


def _unknown(task_id: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, f"No task '{one_line(task_id, 80)}' is known here (it never was, it "
                                          f"expired, or it is another user's)")


def _error(failure: BaseException | None) -> dict[str, Any]:
    if isinstance(failure, MCPError):
        return dict(wire(failure.error))
    return {"code": types.INTERNAL_ERROR, "message": "the call was given up" if failure is None
            else f"the call failed ({type(failure).__name__})"}


__all__ = ["MAX_RUNNING", "ServedTasks", "TaskParams", "TaskUpdateParams", "declared"]
