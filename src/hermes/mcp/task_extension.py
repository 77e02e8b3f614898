"""The Tasks extension of the 2026-07-28 revision (`io.modelcontextprotocol/tasks`, SEP-2663), client side.

hermes declares the extension on every 2026-07-28 connection, so a server that offers it may run
any `tools/call` as a task: the call answers at once with a `CreateTaskResult` (`resultType:
"task"`) instead of the tool's result. The SDK hands that shape to this extension's claim, which
finishes the call: it polls `tasks/get` at the interval the server asks for (bounded both ways),
answers an `input_required` task's questions with the connection's own handlers (the same
approval, limits and forms as any server request) through `tasks/update`, and returns the result
`tasks/get` inlines once the task is `completed`. A `failed` task raises the server's error; a
call that outlives its timeout, or is abandoned, cancels the task on the server (`tasks/cancel`)
first. The task id goes in the `Mcp-Name` header of each of those requests, as the revision asks.

The 2025-11-25 task flow (a `task` hint on `tools/call`, `tasks/result`) is `mcp/tasks.py`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client.context import ClientRequestContext
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value
from pydantic import TypeAdapter, ValidationError

from hermes.errors import leaf
from hermes.mcp.describe import one_line
from hermes.mcp.sdk import TimedOut, send_session_request
from hermes.mcp.task_watch import task_created

EXTENSION = "io.modelcontextprotocol/tasks"
_MIN_POLL = 0.05
_MAX_POLL = 5.0
_DEFAULT_TIMEOUT = 300.0
_MAX_INPUT_ROUNDS = 50
_MAX_QUESTIONS = 32  # in one round: each may be a form the user must fill in
_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


class CreateTaskResult(types.Result):
    """The answer of a `tools/call` the server runs as a task (a flat `Result & Task`)."""

    result_type: Literal["task"] = "task"
    task_id: str
    # Read leniently (`_interval` bounds the interval): a task whose advice is odd is still one
    # hermes can follow, and cancel.
    status: object = None
    status_message: object = None
    poll_interval_ms: object = None
    ttl_ms: object = None


class TasksExtension(ClientExtension):
    """Declares the extension and finishes the calls a server turned into tasks."""

    identifier = EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreateTaskResult, resolve=finish_task),)


async def finish_task(created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
    session = ctx.session
    task = created.task_id
    shown = one_line(task, 80)  # the server's id, as the messages show it
    timeout = ctx.read_timeout_seconds or _DEFAULT_TIMEOUT
    done = False
    task_created()
    try:
        with anyio.fail_after(timeout):
            result = await _follow(session, task, shown, _interval(created.poll_interval_ms))
        done = True
        return result
    except TimeoutError:
        raise TimedOut(f"the task '{shown}' ran past {timeout:g} s and was cancelled") from None
    finally:
        if not done:  # timed out, failed to poll, or the call was abandoned: the server stops the work
            with anyio.CancelScope(shield=True), anyio.move_on_after(5), contextlib.suppress(Exception):
                await _send(session, "tasks/cancel", task)


async def _follow(session: ClientSession, task: str, shown: str, interval: float) -> types.CallToolResult:
    rounds = 0
    polls = 0
    while True:
        detail = await _send(session, "tasks/get", task)
        if not isinstance(detail, dict):
            raise MCPError(types.INTERNAL_ERROR, f"tasks/get for the task '{shown}' answered no object")
        status = detail.get("status")
        interval = _interval(detail.get("pollIntervalMs"), interval)
        if status == "completed":
            try:
                return types.CallToolResult.model_validate(detail.get("result") or {})
            except ValidationError as exc:
                raise MCPError(types.INTERNAL_ERROR, f"the task '{shown}' completed with a malformed result "
                                                     f"({exc.error_count()} problems)") from None
        if status == "failed":
            found = detail.get("error")
            error: dict[str, Any] = found if isinstance(found, dict) else {}
            said = one_line(error.get("message"))
            raise MCPError(types.INTERNAL_ERROR, f"the task '{shown}' failed" + (f": {said}" if said else ""))
        if status == "cancelled":
            raise MCPError(types.INTERNAL_ERROR, f"the server cancelled the task '{shown}'")
        if status == "input_required":
            rounds += 1
            if rounds > _MAX_INPUT_ROUNDS:
                raise MCPError(types.INTERNAL_ERROR, f"the task '{shown}' asked for input more than "
                                                     f"{_MAX_INPUT_ROUNDS} times")
            answers = await _answers(session, detail.get("inputRequests"))
            if answers:
                await _send(session, "tasks/update", task, inputResponses=answers)
                continue
        # The server's interval, reached gently: a task that is done in a moment is seen in a moment.
        await anyio.sleep(min(interval, _MIN_POLL * 2 ** min(polls, 16)))
        polls += 1


async def _answers(session: ClientSession, requests: object) -> dict[str, Any]:
    """Each question answered by the connection's handlers, keyed as the server keyed it."""
    if not isinstance(requests, dict):
        return {}
    if len(requests) > _MAX_QUESTIONS:
        raise MCPError(types.INVALID_PARAMS, f"the task asked {len(requests)} questions at once; hermes answers "
                                             f"at most {_MAX_QUESTIONS}")
    parsed: dict[str, types.InputRequest] = {}
    for key, raw in requests.items():
        try:
            parsed[str(key)] = _INPUT_REQUEST.validate_python(raw)
        except ValidationError:
            raise MCPError(types.INVALID_PARAMS, f"the task asked an input request hermes cannot read ({key!r})") \
                from None
    answers: dict[str, Any] = {}

    async def answer(key: str, request: types.InputRequest) -> None:
        params = getattr(request, "params", None)
        context = ClientRequestContext(session=session, request_id=key, meta=params.meta if params else None)
        found = await session.dispatch_input_request(context, request)
        if isinstance(found, types.ErrorData):
            raise MCPError(found.code, found.message, found.data)
        answers[key] = found.model_dump(mode="json", by_alias=True, exclude_none=True)

    # The questions of one round are asked side by side, as the SDK asks an input-required round's:
    # whoever answers (a client of `serve`) may see them all at once and answer them in any order.
    try:
        async with anyio.create_task_group() as asking:
            for key, request in parsed.items():
                asking.start_soon(answer, key, request)
    except BaseExceptionGroup as group:
        raise leaf(group) from None
    return answers


def _interval(milliseconds: object, current: float = 1.0) -> float:
    if isinstance(milliseconds, int | float) and math.isfinite(milliseconds) and milliseconds >= 0:
        return min(max(milliseconds / 1000, _MIN_POLL), _MAX_POLL)
    return current


async def _send(session: ClientSession, method: str, task: str, **params: Any) -> dict[str, Any]:
    return await send_session_request(session, method, {"taskId": task, **params},
                                      headers={MCP_NAME_HEADER: encode_header_value(task)})
