"""The server side of the Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) for a test
server, with the tools the official conformance suite's tasks scenarios call.

The SDK's server offers no Tasks extension, so this one is written for the tests: it is installed
on an SDK server's low-level handlers (its `tools/list` and `tools/call` wrapped, `tasks/get`,
`tasks/update` and `tasks/cancel` added) and runs each task as an asyncio task of the server. The
upstream side of `hermes mcp serve`'s own tasks: hermes follows these as a client, and offers its
clients tasks of its own for them.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

EXTENSION = "io.modelcontextprotocol/tasks"
Ask = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Body = Callable[[dict[str, Any], Ask], Awaitable[types.CallToolResult]]
_FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _form(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Task:
    task_id: str
    created: float
    status: str = "working"
    updated: float = 0.0
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    asked: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    runner: asyncio.Task[None] | None = None

    def wire(self) -> dict[str, Any]:
        shown = {"taskId": self.task_id, "status": self.status, "createdAt": _iso(self.created),
                 "lastUpdatedAt": _iso(self.updated or self.created), "ttlMs": 600_000, "pollIntervalMs": 100}
        if self.status == "completed":
            shown["result"] = self.result
        elif self.status == "failed":
            shown["error"] = self.error
        elif self.status == "input_required":
            shown["inputRequests"] = dict(self.asked)
        return shown


class TaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses")


@dataclass(frozen=True)
class _Fixture:
    tool: types.Tool
    body: Body
    first_round: Callable[[types.CallToolRequestParams], types.InputRequiredResult | None] | None = None


def _declared(ctx: Any) -> bool:
    capabilities = ctx.session.client_capabilities
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and capabilities is not None and \
        EXTENSION in (capabilities.extensions or {})


class TaskFixtures:
    def __init__(self) -> None:
        self._fixtures: dict[str, _Fixture] = {}
        self._tasks: dict[str, _Task] = {}

    def add(self, name: str, description: str, body: Body, *, support: str | None = "optional",
            properties: dict[str, Any] | None = None, first_round: Any = None) -> None:
        execution = types.ToolExecution(task_support=support) if support else None  # type: ignore[arg-type]
        tool = types.Tool(name=name, description=description, execution=execution,
                          input_schema={"type": "object", "properties": properties or {}})
        self._fixtures[name] = _Fixture(tool, body, first_round)

    def install(self, server: Server[Any]) -> None:
        listing = server.get_request_handler("tools/list")
        calling = server.get_request_handler("tools/call")
        assert listing is not None and calling is not None

        async def list_tools(ctx: Any, params: Any) -> Any:
            listed = await listing.handler(ctx, params)
            return listed.model_copy(update={"tools": [*listed.tools, *(f.tool for f in self._fixtures.values())]})

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
            fixture = self._fixtures.get(params.name)
            if fixture is None:
                return await calling.handler(ctx, params)
            return await self._call(ctx, params, fixture)

        server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
        server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
        server.add_request_handler("tasks/get", TaskParams, self._get)
        server.add_request_handler("tasks/update", UpdateParams, self._update)
        server.add_request_handler("tasks/cancel", TaskParams, self._cancel)
        server.extensions[EXTENSION] = {}

    async def _call(self, ctx: Any, params: types.CallToolRequestParams, fixture: _Fixture) -> Any:
        arguments = dict(params.arguments or {})
        support = fixture.tool.execution.task_support if fixture.tool.execution else None
        if fixture.first_round is not None:
            round_one = fixture.first_round(params)
            if round_one is not None:
                return round_one
            arguments["_answers"] = {k: v.model_dump(mode="json", by_alias=True, exclude_none=True)
                                     for k, v in (params.input_responses or {}).items()}
        if support is None or not _declared(ctx):
            if support == "required":
                raise MCPError(types.MISSING_REQUIRED_CLIENT_CAPABILITY, f"{params.name} runs only as a task",
                               {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})
            return await fixture.body(arguments, _no_questions)
        now = time.time()
        task = _Task(secrets.token_hex(8), now)
        self._tasks[task.task_id] = task
        task.runner = asyncio.get_running_loop().create_task(self._run(task, fixture, arguments))
        return {"resultType": "task", **{k: v for k, v in task.wire().items() if k in (
            "taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")}}

    async def _run(self, task: _Task, fixture: _Fixture, arguments: dict[str, Any]) -> None:
        async def ask(requests: dict[str, Any]) -> dict[str, Any]:
            loop = asyncio.get_running_loop()
            task.answers = {key: loop.create_future() for key in requests}
            task.asked = dict(requests)
            task.status, task.updated = "input_required", time.time()
            answers = {key: await future for key, future in task.answers.items()}
            task.status, task.updated = "working", time.time()
            return answers

        try:
            result = await fixture.body(arguments, ask)
            task.status, task.result = "completed", result.model_dump(mode="json", by_alias=True, exclude_none=True)
        except MCPError as exc:
            task.status, task.error = "failed", {"code": exc.error.code, "message": exc.error.message}
        except asyncio.CancelledError:
            task.status = "cancelled"
        task.updated = time.time()

    def _task(self, params: TaskParams) -> _Task:
        task = self._tasks.get(params.task_id)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown task {params.task_id}")
        return task

    async def _get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        return {"resultType": "complete", **self._task(params).wire()}

    async def _update(self, ctx: Any, params: UpdateParams) -> types.EmptyResult:
        task = self._task(params)
        for key, answer in params.input_responses.items():
            future = task.answers.get(key)
            if future is not None and not future.done():
                future.set_result(answer)
                task.asked.pop(key, None)
        return types.EmptyResult(result_type="complete")

    async def _cancel(self, ctx: Any, params: TaskParams) -> types.EmptyResult:
        task = self._task(params)
        if task.runner is not None and not task.runner.done():
            task.runner.cancel()
            task.status, task.updated = "cancelled", time.time()
        return types.EmptyResult(result_type="complete")


async def _no_questions(requests: dict[str, Any]) -> dict[str, Any]:
    raise MCPError(types.INVALID_REQUEST, "this tool asks its questions only when it runs as a task")


def _accepted(answer: Any) -> dict[str, Any]:
    return answer.get("content") or {} if isinstance(answer, dict) and answer.get("action") == "accept" else {}


def conformance_tasks() -> TaskFixtures:
    """The fixtures the suite's tasks-* scenarios name (see the scenarios' descriptions)."""
    fixtures = TaskFixtures()

    async def greet(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        return _text(f"Hello, {arguments.get('name', 'World')}!")

    async def slow_compute(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        seconds = float(arguments.get("seconds") or 0)
        await asyncio.sleep(seconds)
        return _text(f"computed {arguments.get('label', '')} after {seconds:g} s")

    async def failing_job(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        await asyncio.sleep(0.2)
        return _text("the job failed", error=True)

    async def protocol_error_job(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        raise MCPError(types.INTERNAL_ERROR, "the job's worker crashed")

    async def confirm_delete(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        filename = arguments.get("filename", "")
        answers = await ask({"confirm": _form(f"Delete {filename}?", _FORM)})
        return _text(f"deleted {filename}" if _accepted(answers["confirm"]).get("confirm") else "kept it")

    async def multi_input(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        answers = await ask({"name": _form("Your name?", _NAME), "confirm": _form("Go ahead?", _FORM)})
        return _text(f"name={_accepted(answers['name']).get('name')} confirm={_accepted(answers['confirm'])}")

    def ask_name_first(params: types.CallToolRequestParams) -> types.InputRequiredResult | None:
        if "user_name" in (params.input_responses or {}):
            return None
        return types.InputRequiredResult(input_requests={"user_name": types.ElicitRequest(
            params=types.ElicitRequestFormParams(message="What is your name?", requested_schema=_NAME))})

    async def with_task(arguments: dict[str, Any], ask: Ask) -> types.CallToolResult:
        return _text(f"Hello, {_accepted(arguments['_answers'].get('user_name')).get('name')}!")

    fixtures.add("greet", "Say hello (never a task).", greet, support=None,
                 properties={"name": {"type": "string"}})
    fixtures.add("slow_compute", "Compute for `seconds` seconds (a task).", slow_compute,
                 properties={"seconds": {"type": "number"}, "label": {"type": "string"}})
    fixtures.add("failing_job", "A job whose tool fails (only as a task).", failing_job, support="required")
    fixtures.add("protocol_error_job", "A job whose worker crashes (a task).", protocol_error_job)
    fixtures.add("confirm_delete", "Delete a file once the user confirms (a task).", confirm_delete,
                 properties={"filename": {"type": "string"}})
    fixtures.add("multi_input", "Ask two questions at once (a task).", multi_input)
    fixtures.add("test_tool_with_task", "Ask a name, then greet as a task.", with_task, support="required",
                 first_round=ask_name_first)
    return fixtures
