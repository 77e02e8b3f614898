"""Calling a tool as an MCP task (tools whose `execution.taskSupport` is `required` or `optional`).

The 2025-11-25 task flow: `tools/call` with a `task` field answers at once with a task id; the
client polls `tasks/get` (the server suggests an interval) and, once the task is done (or needs
input, which the server asks for through the connection, as elicitation), fetches the result with
`tasks/result`. A call that outlives its timeout cancels the task on the server (`tasks/cancel`).
Status messages are reported as progress, so a long task is not silent.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT

from hermes.mcp.sdk import TimedOut, send_raw_request
from hermes.mcp.task_watch import task_created

Progress = ProgressFnT  # async (progress, total, message) -> None
# How long the server keeps a finished task's result for us (ms); comfortably past any poll.
TASK_TTL_MS = 600_000
_MIN_POLL = 0.1
_MAX_POLL = 5.0
_DONE = {"completed", "failed", "cancelled", "input_required"}


def runs_as_task(tool: types.Tool | None) -> bool:
    execution = tool.execution if tool is not None else None
    return execution is not None and execution.task_support in ("required", "optional")


async def call_as_task(client: Client, name: str, arguments: dict[str, Any], *, timeout: float,
                       on_progress: Progress | None = None) -> types.CallToolResult:
    """Run the tool as a task to its end; raises `TimedOut` (task cancelled) past `timeout`."""
    raw = await send_raw_request(client, "tools/call", {"name": name, "arguments": arguments,
                                                        "task": {"ttl": TASK_TTL_MS}}, timeout=timeout)
    if "task" not in raw:
        # A server may run an optional-task tool directly; then this is the result itself.
        return types.CallToolResult.model_validate(raw)
    task = types.CreateTaskResult.model_validate(raw).task
    task_id = task.task_id
    task_created()
    session = client.session
    try:
        with anyio.fail_after(timeout):
            status, message, interval = task.status, task.status_message, task.poll_interval
            steps = 0
            while status not in _DONE:
                if on_progress is not None and message:
                    steps += 1
                    await on_progress(float(steps), None, message)
                await anyio.sleep(min(_MAX_POLL, max(_MIN_POLL, (interval or 1000) / 1000)))
                current = await session.send_request(
                    types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult)
                status, message, interval = current.status, current.status_message, current.poll_interval
            # `tasks/result` waits for the end itself, also through an input_required detour.
            return await session.send_request(
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
                types.CallToolResult)
    except TimeoutError:
        await _cancel(session, task_id)
        raise TimedOut(f"task {task_id} of tool '{name}' timed out after {timeout:g} s") from None
    except BaseException:
        await _cancel(session, task_id)
        raise


async def _cancel(session: Any, task_id: str) -> None:
    """Best effort: the server may already have ended or forgotten the task."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(5), contextlib.suppress(Exception):
        await session.send_request(
            types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)), types.CancelTaskResult)
