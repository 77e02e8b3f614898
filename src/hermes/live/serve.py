"""`hermes mcp serve`: one MCP server that offers a whole session's tool surface.

Any MCP client (an IDE, a desktop assistant, the MCP Inspector) gets hermes's filtered, redacted,
restarted and gated tools through one entry. The session behind it is a normal long-running
session: it publishes its control endpoint, so `hermes mcp reload` reaches it, and after any change
of the surface it tells its clients with `notifications/tools/list_changed`.

Change notifications ride the connection of handshake-era clients, whose connections are
remembered from their requests, and the `subscriptions/listen` streams of 2026-07-28 clients.
SIGINT and SIGTERM stop the session cleanly (children first).
"""

from __future__ import annotations

import json
import secrets
import signal
import sys
import weakref
from typing import Any, cast

import anyio
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import ToolsListChanged
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from hermes import __version__
from hermes.home import Home
from hermes.live.control import publish_control
from hermes.live.stdin_lines import stdin_is_pollable, stdin_lines
from hermes.loopback import bind_loopback, serve_asgi
from hermes.mcp.sdk import client_connection
from hermes.session.core import Session, SessionSettings


class SurfaceServer:
    """Adapts a `Session` to the SDK's low-level server handlers."""

    def __init__(self, session: Session, *, deferred: bool = False) -> None:
        self.session = session
        self.deferred = deferred
        self._clients: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._changed = anyio.Event()
        # 2026-07-28 clients hear about changes only through a subscriptions/listen stream.
        self._bus = InMemorySubscriptionBus()
        self.server: Server[Any] = Server(
            "hermes", version=__version__,
            instructions="Tools of every MCP server configured in hermes, filtered and guarded.",
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus))
        session.on_surface_change(self._changed.set)

    def _remember(self, ctx: ServerRequestContext[Any]) -> None:
        # `ctx.session` is a per-request proxy; the connection behind it is what lives as long as
        # the client does, and its standalone channel is where unsolicited notifications go.
        connection = client_connection(ctx)
        if connection is not None:
            self._clients.add(connection)

    async def _list_tools(self, ctx: ServerRequestContext[Any],
                          params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        self._remember(ctx)
        if self.deferred:
            return types.ListToolsResult(tools=[self._search_tool()])
        tools = [types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
                 for t in self.session.surface().tools.values()]
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
        found = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(found, indent=1))],
                                    structured_content={"tools": found})

    async def _call_tool(self, ctx: ServerRequestContext[Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        self._remember(ctx)
        if self.deferred and params.name == SEARCH_TOOL:
            return self._search(str((params.arguments or {}).get("query", "")))
        outcome = await self.session.call(params.name, dict(params.arguments or {}))
        if outcome.result is not None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.result.text)],
                                        structured_content=outcome.result.structured,
                                        is_error=outcome.result.is_error)
        payload = outcome.unavailable.payload() if outcome.unavailable is not None else {"error": outcome.error}
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                    structured_content=payload, is_error=True)

    async def announce_changes(self) -> None:
        """Send `tools/list_changed` to every known client whenever the surface changes."""
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            await self._bus.publish(ToolsListChanged())
            for client in list(self._clients):
                try:
                    await client.send_tool_list_changed()
                except Exception:  # a client that went away must not stop the others
                    self._clients.discard(client)

    def init_options(self) -> Any:
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))


async def _stop_on_signal(tasks: TaskGroup, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            tasks.cancel_scope.cancel()
            return


class _BearerGuard:
    """Plain ASGI middleware so streamed responses pass through untouched."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not secrets.compare_digest(given, self.expected):
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _serve_http(surface: SurfaceServer, port: int, token: str,
                      *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    app = surface.server.streamable_http_app()
    sock = bind_loopback(port)
    actual = sock.getsockname()[1]
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, _BearerGuard(app, token), sock)
        print(f"hermes MCP server on http://127.0.0.1:{actual}/mcp", file=sys.stderr, flush=True)
        print(f"Authorization: Bearer {token}", file=sys.stderr, flush=True)
        task_status.started()
        await anyio.sleep_forever()


SEARCH_TOOL = "tool_search"


async def serve(home: Home, *, http: bool, port: int, platform: str | None, deferred: bool = False) -> None:
    # Signals are watched before any child starts, so a SIGTERM during start-up still stops cleanly.
    async with anyio.create_task_group() as outer:
        await outer.start(_stop_on_signal, outer)
        await _serve_session(home, http=http, port=port, platform=platform, deferred=deferred)
        outer.cancel_scope.cancel()


async def _serve_session(home: Home, *, http: bool, port: int, platform: str | None, deferred: bool) -> None:
    async with Session(home, SessionSettings(platform=platform)) as session, anyio.create_task_group() as tasks:
        surface = SurfaceServer(session, deferred=deferred)
        await tasks.start(publish_control, session)
        tasks.start_soon(surface.announce_changes)
        if http:
            token = secrets.token_urlsafe(32)
            session.redactor.register(token)
            await tasks.start(_serve_http, surface, port, token)
            await anyio.sleep_forever()
        else:
            stdin = cast(Any, stdin_lines()) if stdin_is_pollable() else None
            async with stdio_server(stdin=stdin) as (read, write):
                await surface.server.run(read, write, surface.init_options())
            tasks.cancel_scope.cancel()


def run_serve(home: Home, *, http: bool, port: int, platform: str | None, deferred: bool = False) -> int:
    anyio.run(lambda: serve(home, http=http, port=port, platform=platform, deferred=deferred))
    return 0
