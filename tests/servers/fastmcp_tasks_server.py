"""A fastmcp server offering the Tasks extension (`fastmcp-tasks`, SEP-2663), over stdio; run in the
venv of `tests/bridges/fastmcp-tasks.txt`. Its task tools: `slow_compute` (sleeps, then answers; on
cancellation it writes the file named by `CANCEL_MARKER`) and `confirm_delete` (asks a question
through the task's `input_required` state, then answers with what it was told); `greet` runs
synchronously."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fastmcp import Context, FastMCP
from fastmcp_tasks import TasksExtension
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

mcp = FastMCP("fastmcp-tasks-server")
mcp.add_extension(TasksExtension())


@mcp.tool(task=True)
async def slow_compute(seconds: float) -> str:
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        marker = os.environ.get("CANCEL_MARKER")
        if marker:
            Path(marker).write_text("cancelled")
        raise
    return f"computed after {seconds} s"


@mcp.tool(task=True)
async def confirm_delete(path: str, ctx: Context) -> str | InputRequiredResult:
    answers = ctx.input_responses or {}
    if "confirm" not in answers:
        form = ElicitRequestFormParams(message=f"Delete {path}?", requested_schema={
            "type": "object", "properties": {"ok": {"type": "boolean", "default": True}}})
        return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=form)})
    answer = answers["confirm"]
    return f"{answer.action}: {answer.content}"


@mcp.tool
def greet(name: str) -> str:
    return f"Hello, {name}!"


if __name__ == "__main__":
    mcp.run(show_banner=False)
