"""`hermes mcp serve`: one MCP server in front of a whole session, faithful to what it aggregates.

Any MCP client (an IDE, a desktop assistant, the MCP Inspector) gets hermes's filtered, redacted,
restarted and gated tools through one entry, and everything that is not hermes's own business passes
through untouched: tool titles, annotations, output schemas, execution hints, icons and `_meta`;
results' structured content and their images, audio, resources and links; progress (with the
client's own token); upstream resources, resource templates and prompts (names prefixed like tools)
and completions. What upstream servers ask of their client (sampling, elicitation, roots) is asked
of the client connected here, which is the one with a model and a user.

The session behind it is a normal long-running session: it publishes its control endpoint, so
`hermes mcp reload` reaches it, and after a change it tells its clients (list_changed on the
connection of handshake-era clients, `subscriptions/listen` streams for 2026-07-28 clients).
SIGINT and SIGTERM stop it cleanly, servers first.

`--only NAME --no-prefix` serves one server under its own tool and prompt names: hermes's gating,
redaction and restarts in front of a single server.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import signal
import sys
import weakref
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import anyio
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.subscriptions import ToolsListChanged
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send

from hermes import __version__
from hermes.home import Home
from hermes.live.control import publish_control
from hermes.live.stdin_lines import stdin_is_pollable, stdin_lines
from hermes.loopback import bind_loopback, serve_asgi
from hermes.mcp.handlers import ClientHandlers, path_roots
from hermes.mcp.sdk import client_connection
from hermes.session.core import Session, SessionSettings
from hermes.tools.deferred import SEARCH_TOOL, found_tools
from hermes.tools.naming import registered_name
from hermes.tools.surface import Surface, SurfaceTool

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Ctx = ServerRequestContext[Any]
NOTIFICATIONS = NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)
_SAMPLING = types.ClientCapabilities(sampling=types.SamplingCapability())
_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())
_ROOTS = types.ClientCapabilities(roots=types.RootsCapability())
CLIENT_ARRIVAL_WAIT = 10.0


class AggregatorServer(Server[Any]):
    """The SDK's low-level server, declaring the same capabilities on every transport.

    Streamable HTTP builds its `initialize` answer from `create_initialization_options()` with no
    arguments; stdio from what `run()` is given. Defaulting the notification options here makes
    both say `listChanged: true`, which is what hermes does.
    """

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> Any:
        return super().create_initialization_options(notification_options or NOTIFICATIONS, *args, **kwargs)


@dataclass(frozen=True)
class Naming:
    """How upstream names appear here: `mcp__<server>__<name>`, or as they are (`--no-prefix`)."""

    prefix: bool = True

    def exposed(self, server: str, name: str) -> str:
        return registered_name(server, name) if self.prefix else name


class Aggregator:
    """Adapts a `Session` to the SDK's low-level server handlers."""

    def __init__(self, *, deferred: bool = False, naming: Naming = Naming()) -> None:
        self._session: Session | None = None
        self.deferred = deferred
        self.naming = naming
        self._clients: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._subscribers: dict[str, weakref.WeakSet[Connection]] = {}  # resource URI -> subscribed clients
        # Upstream requests (sampling, elicitation, logs) carry nothing that says which call caused
        # them, so they go to the client whose call to that server is in flight, the latest first.
        self._calls: dict[str, list[Ctx]] = {}
        self._latest: Ctx | None = None
        self._exposed: tuple[Surface, dict[str, SurfaceTool]] | None = None  # (for which surface, name -> tool)
        self._client_arrived = anyio.Event()
        self._changed = anyio.Event()
        self._bus = InMemorySubscriptionBus()  # 2026-07-28 clients hear about changes only here
        self.server = AggregatorServer(
            "hermes", version=__version__,
            instructions="Tools of every MCP server configured in hermes, filtered and guarded.",
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources, on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource, on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe, on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt, on_completion=self._complete,
            on_set_logging_level=self._set_level, on_roots_list_changed=self._roots_changed,
            on_subscriptions_listen=ListenHandler(self._bus))
        self.server.add_notification_handler("notifications/initialized", types.NotificationParams,
                                             self._client_ready)

    def attach(self, session: Session) -> None:
        """The session to serve (created with this aggregator's `handlers()`)."""
        self._session = session
        session.on_surface_change(self._changed.set)

    @property
    def session(self) -> Session:
        assert self._session is not None, "attach() the session first"
        return self._session

    def handlers(self) -> ClientHandlers:
        """What the session's servers may ask, answered by the client connected here."""
        return ClientHandlers(sampling=self._forward_sampling, elicitation=self._forward_elicitation,
                              roots=self._forward_roots, logging=self._forward_log,
                              resource_updated=self._relay_update)

    def _seen(self, ctx: Ctx) -> None:
        self._latest = ctx
        connection = client_connection(ctx)
        if connection is not None:
            self._clients.add(connection)

    # -- tools -----------------------------------------------------------------------------------

    def _tools(self) -> dict[str, SurfaceTool]:
        """Exposed name -> tool; hermes's resource and prompt utility tools are left out here, since
        resources and prompts are offered as themselves. Built once per surface, not per request."""
        surface = self.session.surface()
        if self._exposed is None or self._exposed[0] is not surface:
            self._exposed = (surface, {self.naming.exposed(t.server, t.original): t for t in surface.tools.values()
                                       if t.kind == "tool"})
        return self._exposed[1]

    async def _list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        self._seen(ctx)
        if self.deferred:
            return types.ListToolsResult(tools=[self._search_tool()])
        tools = []
        for name, tool in self._tools().items():
            definition = tool.definition or types.Tool(name=name, input_schema=tool.input_schema)
            tools.append(definition.model_copy(update={"name": name}))
        return types.ListToolsResult(tools=tools)

    def _search_tool(self) -> types.Tool:
        return types.Tool(
            name=SEARCH_TOOL,
            description="Find tools by service and action; returns their names and input schemas, which you can "
                        "then call by name.\n\n" + self.session.deferred_catalog(),
            input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})

    def _search(self, query: str) -> types.CallToolResult:
        tools, text = self.session.tool_search(query)
        if not tools:
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        found = found_tools(tools)
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(found, indent=1))],
                                    structured_content={"tools": found})

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        self._seen(ctx)
        if self.deferred and params.name == SEARCH_TOOL:
            return self._search(str((params.arguments or {}).get("query", "")))
        tool = self._tools().get(params.name)
        registered = tool.name if tool is not None else params.name

        async def relay(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        server = tool.server if tool is not None else None
        with self._in_flight(server, ctx):
            outcome = await self.session.call(registered, dict(params.arguments or {}), on_progress=relay)
        if outcome.raw is not None:
            return outcome.raw
        payload = outcome.unavailable_payload or {"error": outcome.error}
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                    structured_content=payload, is_error=True)

    @contextlib.contextmanager
    def _in_flight(self, server: str | None, ctx: Ctx) -> Any:
        if server is None:
            yield
            return
        calls = self._calls.setdefault(server, [])
        calls.append(ctx)
        try:
            yield
        finally:
            calls.remove(ctx)

    def _context_for(self, server: str) -> Ctx | None:
        calls = self._calls.get(server)
        return calls[-1] if calls else self._latest

    # -- resources, templates, prompts, completions ------------------------------------------------

    async def _list_resources(self, ctx: Ctx, params: types.PaginatedRequestParams | None
                              ) -> types.ListResourcesResult:
        self._seen(ctx)
        routes, resources = {}, []
        for server, resource in await self.session.list_resources():
            if resource.uri in routes:
                continue  # the same URI from two servers: the first (by name) answers for it
            routes[resource.uri] = server
            resources.append(resource.model_copy(update={"name": self.naming.exposed(server, resource.name)}))
        return types.ListResourcesResult(resources=resources)

    async def _list_templates(self, ctx: Ctx, params: types.PaginatedRequestParams | None
                              ) -> types.ListResourceTemplatesResult:
        self._seen(ctx)
        return types.ListResourceTemplatesResult(resource_templates=[
            template.model_copy(update={"name": self.naming.exposed(server, template.name)})
            for server, template in await self.session.list_resource_templates()])

    async def _owner_of(self, uri: str) -> str:
        """Which server a URI belongs to: a listed resource first, then a matching template."""
        for server, resource in await self.session.list_resources():
            if str(resource.uri) == uri:
                return server
        for server, template in await self.session.list_resource_templates():
            if _template_matches(template.uri_template, uri):
                return server
        raise MCPError(types.INVALID_PARAMS, f"No MCP server behind hermes offers the resource {uri}")

    async def _read_resource(self, ctx: Ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        self._seen(ctx)
        uri = str(params.uri)
        server = await self._owner_of(uri)
        return await self._upstream(self.session.read_resource(server, uri))

    async def _subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        await self._upstream(self.session.subscribe_resource(await self._owner_of(uri), uri, True))
        client = client_connection(ctx)
        if client is not None:
            self._subscribers.setdefault(uri, weakref.WeakSet()).add(client)
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        client = client_connection(ctx)
        subscribers = self._subscribers.get(uri)
        if client is not None and subscribers is not None:
            subscribers.discard(client)
        if not subscribers:  # the last client let go: so does hermes, upstream
            self._subscribers.pop(uri, None)
            await self._upstream(self.session.subscribe_resource(await self._owner_of(uri), uri, False))
        return types.EmptyResult()

    async def _relay_update(self, server: str, uri: str) -> None:
        """An upstream resource changed: every client subscribed to it here hears so."""
        for client in list(self._subscribers.get(uri, ())):
            try:
                await client.send_resource_updated(uri)
            except Exception:  # a client that went away must not stop the others
                self._subscribers.get(uri, weakref.WeakSet()).discard(client)

    async def _prompts(self) -> dict[str, tuple[str, types.Prompt]]:
        return {self.naming.exposed(server, prompt.name): (server, prompt)
                for server, prompt in await self.session.list_prompts()}

    async def _list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        self._seen(ctx)
        return types.ListPromptsResult(prompts=[prompt.model_copy(update={"name": name})
                                                for name, (_, prompt) in (await self._prompts()).items()])

    async def _get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        self._seen(ctx)
        found = (await self._prompts()).get(params.name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"No prompt named '{params.name}' behind hermes")
        server, prompt = found
        return await self._upstream(self.session.get_prompt(server, prompt.name, params.arguments))

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        self._seen(ctx)
        ref = params.ref
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context else None
        if isinstance(ref, types.PromptReference):
            found = (await self._prompts()).get(ref.name)
            if found is None:
                return types.CompleteResult(completion=types.Completion(values=[]))
            server, prompt = found
            upstream_ref: types.PromptReference | types.ResourceTemplateReference = ref.model_copy(
                update={"name": prompt.name})
        else:
            server = next((s for s, t in await self.session.list_resource_templates() if t.uri_template == ref.uri),
                          "")
            if not server:
                return types.CompleteResult(completion=types.Completion(values=[]))
            upstream_ref = ref
        return await self._upstream(self.session.complete(server, upstream_ref, argument, context))

    async def _upstream(self, request: Awaitable[T]) -> T:
        """An upstream request; its failure reaches the client as an MCP error with a redacted message."""
        try:
            return await request
        except MCPError as exc:
            raise MCPError(exc.error.code, self.session.redactor(exc.error.message)) from None
        except Exception as exc:
            raise MCPError(types.INTERNAL_ERROR, self.session.redactor(f"{type(exc).__name__}: {exc}")) from None

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    async def _roots_changed(self, ctx: Ctx, params: types.NotificationParams | None) -> None:
        self._seen(ctx)
        await self.session.roots_changed()

    async def _client_ready(self, ctx: Ctx, params: types.NotificationParams | None) -> None:
        # Servers connected before this client asked for roots and got hermes's working folder;
        # now that a client with roots of its own is here, they ask again and get the client's.
        self._seen(ctx)
        self._client_arrived.set()
        if ctx.session.check_client_capability(_ROOTS):
            await self.session.roots_changed()

    # -- upstream requests, asked of the client connected here -------------------------------------

    async def _forward_sampling(self, server: str, params: types.CreateMessageRequestParams
                                ) -> types.CreateMessageResult | types.ErrorData:
        ctx = self._context_for(server)
        if ctx is None or not ctx.session.check_client_capability(_SAMPLING):
            return types.ErrorData(code=types.INVALID_REQUEST, message="The client connected to hermes mcp serve "
                                                                       "does not offer sampling.")
        return await self._ask(ctx, types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def _forward_elicitation(self, server: str, params: types.ElicitRequestParams
                                   ) -> types.ElicitResult | types.ErrorData:
        ctx = self._context_for(server)
        if ctx is None or not ctx.session.check_client_capability(_ELICITATION):
            return types.ElicitResult(action="decline")
        return await self._ask(ctx, types.ElicitRequest(params=params), types.ElicitResult)

    async def _forward_roots(self, server: str) -> list[types.Root]:
        if self._context_for(server) is None:
            # A server that starts faster than the client connects asks before anyone can answer;
            # the client that launched `serve` is moments away, so its answer is worth a short wait.
            with anyio.move_on_after(CLIENT_ARRIVAL_WAIT):
                await self._client_arrived.wait()
        ctx = self._context_for(server)
        if ctx is not None and ctx.session.check_client_capability(_ROOTS):
            answer = await self._ask(ctx, types.ListRootsRequest(), types.ListRootsResult)
            if isinstance(answer, types.ListRootsResult):
                return list(answer.roots)
        return path_roots(["."])

    async def _forward_log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        ctx = self._calls.get(server)
        if ctx:
            with contextlib.suppress(Exception):
                await ctx[-1].session.send_log_message(params.level, params.data, logger=params.logger or server,
                                                       related_request_id=ctx[-1].request_id)

    async def _ask(self, ctx: Ctx, request: Any, result_type: type[M]) -> M | types.ErrorData:
        # Tied to the call that caused it while that call runs (over HTTP it travels on that call's
        # stream); otherwise on the connection itself, since a finished request's stream is gone.
        in_flight = any(ctx in calls for calls in self._calls.values())
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id) if in_flight else None
        try:
            return await ctx.session.send_request(request, result_type, metadata=metadata)
        except MCPError as exc:
            return types.ErrorData(code=exc.error.code, message=exc.error.message)
        except Exception as exc:  # the client went away or answered nonsense: the server hears why
            return types.ErrorData(code=types.INTERNAL_ERROR,
                                   message=f"The client connected to hermes mcp serve did not answer: {exc}")

    # -- change notifications ----------------------------------------------------------------------

    async def announce_changes(self) -> None:
        """Tell every known client when the surface (and with it resources and prompts) changes."""
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            await self._bus.publish(ToolsListChanged())
            for client in list(self._clients):
                try:
                    await client.send_tool_list_changed()
                    await client.send_resource_list_changed()
                    await client.send_prompt_list_changed()
                except Exception:  # a client that went away must not stop the others
                    self._clients.discard(client)


def _template_matches(template: str, uri: str) -> bool:
    """Whether `uri` fits an RFC 6570 level-1 template (`{name}` stands for one path segment's text)."""
    pattern = "".join("[^/]+" if part.startswith("{") else re.escape(part)
                      for part in re.split(r"(\{[^}]*\})", template) if part)
    return re.fullmatch(pattern, uri) is not None


# -- transports ----------------------------------------------------------------------------------


async def _stop_on_signal(tasks: TaskGroup, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            tasks.cancel_scope.cancel()
            return


class BearerGuard:
    """Plain ASGI middleware (streamed responses pass through untouched): the printed token, or 401.

    The 401 carries `WWW-Authenticate: Bearer`, so a client knows a bearer token is what is missing
    (and that this is not an OAuth-protected resource to start a login against).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not secrets.compare_digest(given, self.expected):
                challenge = b'Bearer realm="hermes"' + (b', error="invalid_token"' if given else b"")
                body = json.dumps({"error": "unauthorized: use the bearer token hermes mcp serve printed"}).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge)]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


async def _serve_http(aggregator: Aggregator, port: int, token: str | None,
                      *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    app: ASGIApp = aggregator.server.streamable_http_app()
    if token is not None:
        app = BearerGuard(app, token)
    sock = bind_loopback(port)
    actual = sock.getsockname()[1]
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, app, sock)
        print(f"hermes MCP server on http://127.0.0.1:{actual}/mcp", file=sys.stderr, flush=True)
        if token is not None:
            print(f"Authorization: Bearer {token}", file=sys.stderr, flush=True)
        else:
            print("warning: no authorization (--no-auth): any process on this machine can use these tools",
                  file=sys.stderr, flush=True)
        task_status.started()
        await anyio.sleep_forever()


@dataclass(frozen=True)
class ServeOptions:
    http: bool = False
    port: int = 0
    platform: str | None = None
    deferred: bool = False
    only: str | None = None
    prefix: bool = True
    auth: bool = True
    start_wait: float | None = None  # how long to wait for slow servers before serving (they join later)


async def serve(home: Home, options: ServeOptions) -> None:
    # Signals are watched before any child starts, so a SIGTERM during start-up still stops cleanly.
    async with anyio.create_task_group() as outer:
        await outer.start(_stop_on_signal, outer)
        await _serve_session(home, options)
        outer.cancel_scope.cancel()


def _announce_missing_config(home: Home) -> None:
    if not home.config.exists():
        print(f"hermes mcp serve: no config found at {home.config} (HERMES_HOME={home.root}); serving no tools. "
              f"Set HERMES_HOME in the client's server entry, or add servers with `hermes mcp add`.",
              file=sys.stderr, flush=True)


async def _serve_session(home: Home, options: ServeOptions) -> None:
    _announce_missing_config(home)
    settings = SessionSettings(platform=options.platform, only=frozenset({options.only}) if options.only else None,
                               start_wait=options.start_wait)
    aggregator = Aggregator(deferred=options.deferred, naming=Naming(options.prefix))
    async with Session(home, settings, handlers=aggregator.handlers()) as session, \
            anyio.create_task_group() as tasks:
        aggregator.attach(session)
        await tasks.start(publish_control, session)
        tasks.start_soon(aggregator.announce_changes)
        if options.http:
            token = secrets.token_urlsafe(32) if options.auth else None
            if token:
                session.redactor.register(token)
            await tasks.start(_serve_http, aggregator, options.port, token)
            await anyio.sleep_forever()
        else:
            stdin = cast(Any, stdin_lines()) if stdin_is_pollable() else None
            async with stdio_server(stdin=stdin) as (read, write):
                await aggregator.server.run(read, write, aggregator.server.create_initialization_options())
            tasks.cancel_scope.cancel()


def run_serve(home: Home, options: ServeOptions) -> int:
    anyio.run(serve, home, options)
    return 0


__all__ = ["SEARCH_TOOL", "Aggregator", "ServeOptions", "run_serve", "serve"]
