"""The MCP requests `serve` answers by forwarding them to the session: tools, resources, resource
templates, prompts and completions, each under its exposed name.

Everything that is not hermes's business passes through as the upstream server gave it (tool
definitions, structured results, media); hermes's filters, gates and redaction apply on the way.
Failures of upstream requests reach the client as MCP errors with redacted messages.
"""

from __future__ import annotations

import contextlib
import json
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

import mcp_types as types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hermes.live.naming import Naming
from hermes.live.rounds import Escalated, Rounds
from hermes.live.routing import Ctx, Router
from hermes.live.served_tasks import ServedTasks, declared
from hermes.live.task_records import TaskCreated
from hermes.mcp import task_watch
from hermes.mcp.sdk import client_connection
from hermes.mcp.tasks import runs_as_task
from hermes.security.redact import Redactor
from hermes.session.calls import Calls
from hermes.session.surfacing import ToolSurface
from hermes.session.upstream import Upstream
from hermes.tools.call_result import CallResult, Ok, Shown, ToolError
from hermes.tools.deferred import SEARCH_TOOL, search_answer
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool

T = TypeVar("T")
# How much of a call's arguments the question shows the client's user.
_SHOWN_ARGUMENTS = 600
R = TypeVar("R", bound=types.Result)


class Subscribers:
    """Which clients connected here subscribed to which upstream resource (by URI); relays updates.
    Built before the session, whose servers' updates it hears."""

    def __init__(self) -> None:
        self._by_uri: dict[str, weakref.WeakSet[Connection]] = {}

    def add(self, uri: str, client: Connection) -> None:
        self._by_uri.setdefault(uri, weakref.WeakSet()).add(client)

    def remove(self, uri: str, client: Connection | None) -> bool:
        """Let `client` go of `uri`; True when no client is left on it (hermes lets go upstream too)."""
        subscribers = self._by_uri.get(uri)
        if client is not None and subscribers is not None:
            subscribers.discard(client)
        if subscribers:
            return False
        self._by_uri.pop(uri, None)
        return True

    async def relay_update(self, server: str, uri: str) -> None:
        """An upstream resource changed: every client subscribed to it here hears so."""
        for client in list(self._by_uri.get(uri, ())):
            try:
                await client.send_resource_updated(uri)
            except Exception:  # a client that went away must not stop the others
                self._by_uri.get(uri, weakref.WeakSet()).discard(client)


@dataclass(frozen=True)
class SessionParts:
    """What `serve` forwards to, of one session: its tool surface, calls, upstream resources and
    prompts, and its redactor."""

    tools: ToolSurface
    calls: Calls
    upstream: Upstream
    redactor: Redactor
    roots_changed: Callable[[], Awaitable[None]]  # tells every server the client's roots changed


class CallRecorder(Protocol):
    """What wraps each tool call that really runs (the team gateway: rate limit, audit, metrics)."""

    async def call(self, tool: str, server: str | None, run: Callable[[], Awaitable[CallResult]]) -> CallResult: ...


# Asks the calling client's user something on behalf of a server (the router's `elicitation`).
Ask = Callable[[str, types.ElicitRequestParams], Awaitable[types.ElicitResult | types.ErrorData]]


class ExtraTools(Protocol):
    """Tools the host itself offers beside the servers' (the team gateway's sign-in)."""

    def tools(self) -> list[types.Tool]: ...

    def tool(self, name: str) -> types.Tool | None:
        """The one of `tools()` named `name`, cheaply (asked on every call)."""
        ...

    async def call(self, name: str, arguments: dict[str, Any], ask: Ask) -> types.CallToolResult: ...


class Forwarder:
    def __init__(self, session: SessionParts, naming: Naming, router: Router, subscribers: Subscribers,
                 rounds: Rounds, tasks: ServedTasks, *, deferred: bool = False, recorder: CallRecorder | None = None,
                 extra: ExtraTools | None = None) -> None:
        """`rounds`: calls of 2026-07-28 clients waiting for their answers; `tasks`: the calls that
        became tasks; `recorder`: wraps each call; `extra`: the host's own tools."""
        self.tasks = tasks
        self.recorder = recorder
        self.extra = extra
        self.session = session
        self.naming = naming
        self.router = router
        self.deferred = deferred
        self.rounds = rounds
        self._subscribers = subscribers

    # -- tools -----------------------------------------------------------------------------------

    async def list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        self.router.seen(ctx)
        extra = self.extra.tools() if self.extra is not None else []
        if self.deferred:
            return types.ListToolsResult(tools=[self._search_tool(), *extra])
        tools = list(extra)
        with_tasks = declared(ctx)
        for name, tool in self.naming.tools(self.session.tools.current()).items():
            definition = tool.definition or types.Tool(name=name, input_schema=tool.input_schema)
            update: dict[str, object] = {"name": name}
            if runs_as_task(definition) and not with_tasks:
                # hermes runs the task upstream itself and answers the call when it is done: to a client
                # without the Tasks extension it is an ordinary tool (one that needs tasks would be
                # refused by it); a client with the extension gets a task of its own.
                update["execution"] = None
            tools.append(definition.model_copy(update=update))
        return types.ListToolsResult(tools=tools)

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """A listed tool's input schema by its exposed name: what the SDK checks a 2026-07-28 call's
        `Mcp-Param-*` headers against (without it the SDK lists every tool on every call)."""
        own = self.extra.tool(name) if self.extra is not None else None
        if own is not None:
            return own.input_schema
        if self.deferred:
            return self._search_tool().input_schema if name == SEARCH_TOOL else None
        tool = self.naming.tools(self.session.tools.current()).get(name)
        return tool.input_schema if tool is not None else None

    def _search_tool(self) -> types.Tool:
        return types.Tool(
            name=SEARCH_TOOL,
            description="Find tools by service and action; returns their names and input schemas, which you can "
                        "then call by name.\n\n" + self.session.tools.catalog(),
            input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})

    async def _search(self, query: str) -> types.CallToolResult:
        tools, text = await self.session.tools.search(query)
        answer = search_answer(tools, text)
        if answer is None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        shown = answer if "note" in answer else answer["tools"]
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(shown, indent=1))],
                                    structured_content=answer)

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult | TaskCreated:
        self.router.seen(ctx)
        if self.deferred and params.name == SEARCH_TOOL:
            return await self._search(str((params.arguments or {}).get("query", "")))
        extra = self.extra
        if extra is not None and extra.tool(params.name) is not None:
            async def run_own() -> CallResult:
                answer = await extra.call(params.name, dict(params.arguments or {}), self.router.elicitation)
                text = "".join(block.text for block in answer.content if isinstance(block, types.TextContent))
                return ToolError(Shown(text), raw=answer) if answer.is_error else Ok(Shown(text))

            async def own() -> types.CallToolResult:
                # The host's own tools are recorded and limited like any other.
                result = await (run_own() if self.recorder is None else self.recorder.call(params.name, None, run_own))
                return result.to_mcp()

            return await self._asking(ctx, "tools/call", params, None, own)
        tool = self.naming.tools(self.session.tools.current()).get(params.name)
        registered = tool.name if tool is not None else params.name
        server = tool.server if tool is not None else None

        async def relay(progress: float, total: float | None, message: str | None) -> None:
            with contextlib.suppress(Exception):  # a parked call's first request may have ended
                await ctx.session.report_progress(progress, total, message)

        async def run() -> CallResult:
            if server is not None:
                # A server told "no roots" before this client came asks again now, within this call.
                await self.router.settle_roots(server, ctx, self.session.roots_changed)
            return await self.session.calls.call(registered, dict(params.arguments or {}), on_progress=relay,
                                                 asker=self._confirm)

        # Any call may become a task: the upstream decides (2026-07-28 lists no task support), and a
        # client that declared the extension gets a task the moment the upstream made one.
        as_task = tool is not None and declared(ctx)

        async def work() -> types.CallToolResult:
            result = await (run() if self.recorder is None else self.recorder.call(registered, server, run))
            if isinstance(result, ToolError) and result.raw is None and self.router.call_became_task():
                # Not the tool's own error but a call hermes could not make: a task says so as `failed`.
                raise MCPError(types.INTERNAL_ERROR, result.text)
            return result.to_mcp()

        return await self._asking(ctx, "tools/call", params, server, work, as_task=as_task)

    async def _confirm(self, tool: SurfaceTool, arguments: dict[str, Any], verdict: Verdict) -> str | None:
        """A tool a rule says asks: the calling client's user is asked (an elicitation form in that
        call), since the client agent's own approval knows nothing of hermes's rules."""
        shown = json.dumps(arguments, ensure_ascii=False)
        shown = shown if len(shown) <= _SHOWN_ARGUMENTS else shown[:_SHOWN_ARGUMENTS] + "…"
        question = types.ElicitRequestFormParams(
            message=f"hermes asks before running {tool.name} ({verdict.because}) with {shown}. Accept to run it.",
            requested_schema={"type": "object", "properties": {}})
        answer = await self.router.elicitation(tool.server, question)
        if isinstance(answer, types.ElicitResult) and answer.action == "accept":
            return None
        # A client that cannot show a form declines for its user, so no yes was given either way.
        return f"Not run: {tool.name} asks first ({verdict.because}) and the client's user did not accept it " \
               f"(a client without elicitation cannot be asked)."

    async def _asking(self, ctx: Ctx, method: str, params: types.InputResponseRequestParams, server: str | None,
                      work: Callable[[], Awaitable[R]], *, as_task: bool = False) -> R | types.InputRequiredResult:
        """A request whose upstream may ask its client something on the way (a tool call, a prompt,
        a resource read): the question goes to this request's client, on the request's stream for a
        handshake-era client, as input-required rounds for a 2026-07-28 one. `as_task`: the call
        becomes a task once its upstream makes it one."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            with self.router.in_flight(server, ctx):
                return await work()
        run: Callable[[], Awaitable[R]] | None = None
        if params.request_state:
            parked = self.rounds.resumed(params.request_state, dict(params.input_responses or {}), method)
        else:
            # Answers a client sends with its first request are kept for the questions they name.
            parked = self.rounds.start(method, dict(params.input_responses or {}))

            async def started() -> R:
                with self.router.in_flight(server, ctx, parked), \
                        task_watch.listening(self.tasks.escalating(parked)) if as_task else contextlib.nullcontext():
                    return await work()

            run = started
        outcome = await self.rounds.call(parked, run)
        if isinstance(outcome, Escalated):
            # Only a tool call escalates (`as_task`); its answer is the extension's own result type.
            return cast(R, await self.tasks.adopt(parked))
        return outcome

    # -- resources and templates -----------------------------------------------------------------

    async def list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        self.router.seen(ctx)
        seen, resources = set(), []
        for server, resource in await self.session.upstream.list_resources():
            if resource.uri in seen:
                continue  # the same URI from two servers: the first (by name) answers for it
            seen.add(resource.uri)
            resources.append(resource.model_copy(update={"name": self.naming.exposed(server, resource.name)}))
        return types.ListResourcesResult(resources=resources)

    async def list_templates(self, ctx: Ctx, params: types.PaginatedRequestParams | None
                             ) -> types.ListResourceTemplatesResult:
        self.router.seen(ctx)
        return types.ListResourceTemplatesResult(resource_templates=[
            template.model_copy(update={"name": self.naming.exposed(server, template.name)})
            for server, template in await self.session.upstream.list_resource_templates()])

    async def _owner_of(self, uri: str) -> str:
        """Which server a URI belongs to: a listed resource first, then a matching template."""
        upstream = self.session.upstream
        for server, resource in await upstream.list_resources():
            if str(resource.uri) == uri:
                return server
        for server, template in await upstream.list_resource_templates():
            if _template_matches(template.uri_template, uri):
                return server
        raise MCPError(types.INVALID_PARAMS, f"No MCP server behind hermes offers the resource {uri}", {"uri": uri})

    async def read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult | types.InputRequiredResult:
        self.router.seen(ctx)
        uri = str(params.uri)
        server = None if params.request_state else await self._owner_of(uri)
        return await self._asking(ctx, "resources/read", params, server,
                                  lambda: self._upstream(self.session.upstream.read_resource(str(server), uri)))

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        await self._upstream(self.session.upstream.subscribe(await self._owner_of(uri), uri, True))
        client = client_connection(ctx)
        if client is not None:
            self._subscribers.add(uri, client)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        if self._subscribers.remove(uri, client_connection(ctx)):  # the last client let go: so does hermes
            await self._upstream(self.session.upstream.subscribe(await self._owner_of(uri), uri, False))
        return types.EmptyResult()

    # -- prompts and completions -----------------------------------------------------------------

    async def _prompts(self) -> dict[str, tuple[str, types.Prompt]]:
        return {self.naming.exposed(server, prompt.name): (server, prompt)
                for server, prompt in await self.session.upstream.list_prompts()}

    async def list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        self.router.seen(ctx)
        return types.ListPromptsResult(prompts=[prompt.model_copy(update={"name": name})
                                                for name, (_, prompt) in (await self._prompts()).items()])

    async def get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams
                         ) -> types.GetPromptResult | types.InputRequiredResult:
        self.router.seen(ctx)
        found = (await self._prompts()).get(params.name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"No prompt named '{params.name}' behind hermes")
        server, prompt = found
        return await self._asking(ctx, "prompts/get", params, server, lambda: self._upstream(
            self.session.upstream.get_prompt(server, prompt.name, params.arguments)))

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        self.router.seen(ctx)
        ref = params.ref
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context else None
        nothing = types.CompleteResult(completion=types.Completion(values=[]))
        if isinstance(ref, types.PromptReference):
            found = (await self._prompts()).get(ref.name)
            if found is None:
                return nothing
            server, prompt = found
            upstream_ref: types.PromptReference | types.ResourceTemplateReference = ref.model_copy(
                update={"name": prompt.name})
        else:
            templates = await self.session.upstream.list_resource_templates()
            server = next((s for s, t in templates if t.uri_template == ref.uri), "")
            if not server:
                return nothing
            upstream_ref = ref
        return await self._upstream(self.session.upstream.complete(server, upstream_ref, argument, context))

    async def _upstream(self, request: Awaitable[T]) -> T:
        """An upstream request; its failure reaches the client as an MCP error with a redacted message."""
        try:
            return await request
        except MCPError as exc:
            redactor = self.session.redactor
            raise MCPError(exc.error.code, redactor(exc.error.message), redactor.value(exc.error.data)) from None
        except Exception as exc:
            raise MCPError(types.INTERNAL_ERROR, self.session.redactor(f"{type(exc).__name__}: {exc}")) from None


def _template_matches(template: str, uri: str) -> bool:
    try:
        return UriTemplate.parse(template).match(uri) is not None
    except (InvalidUriTemplate, ValueError):
        return False


__all__ = ["Forwarder", "SessionParts", "Subscribers"]
