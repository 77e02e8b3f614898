"""`hermes mcp serve`: one MCP server in front of a whole session, faithful to what it aggregates.

Any MCP client (an IDE, a desktop assistant, the MCP Inspector) gets hermes's filtered, redacted,
restarted and gated tools through one entry, and everything that is not hermes's own business passes
through untouched: tool titles, annotations, output schemas, icons and `_meta`; results'
structured content and their images, audio, resources and links; progress (with the
client's own token); upstream resources, resource templates and prompts (names prefixed like tools)
and completions. What upstream servers ask of their client (sampling, elicitation, roots) is asked
of the client connected here, which is the one with a model and a user.

A call whose upstream runs it as a task is followed by hermes to its end; a 2026-07-28 client
that declares the Tasks extension gets a task of its own for it (`served_tasks`), any other client
the call's result.

The parts, one job each: `naming` (exposed names), `forwarding` (tools, resources, prompts,
completions), `routing` (upstream requests to the right client), `announce` (change
notifications), `served_tasks` (the Tasks extension), `http` (the loopback HTTP app behind the
bearer guard). This module puts them together. The session behind it is a normal long-running
session: it publishes its control endpoint, so `hermes mcp reload` reaches it. SIGINT and
SIGTERM stop it cleanly, servers first.

`--only NAME --no-prefix` serves one server under its own tool and prompt names: hermes's gating,
redaction and restarts in front of a single server.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import ListenHandler

from hermes import __version__, interrupts
from hermes.home import Home
from hermes.live.announce import Announcer
from hermes.live.control import publish_control
from hermes.live.forwarding import CallRecorder, ExtraTools, Forwarder, SessionParts, Subscribers
from hermes.live.http import serve_http
from hermes.live.naming import Naming
from hermes.live.rounds import Rounds
from hermes.live.routing import ROOTS, Ctx, Router
from hermes.live.served_tasks import ServedTasks, TaskParams, TaskUpdateParams
from hermes.live.task_records import MemoryTaskRecords, TaskRecords
from hermes.mcp.task_extension import EXTENSION
from hermes.security.redact import Redactor
from hermes.session.core import OAuthFactory, Session, SessionSettings
from hermes.stdin_lines import stdin_is_pollable, stdin_lines
from hermes.tools.deferred import SEARCH_TOOL
from hermes.tools.pins import PinRecords

NOTIFICATIONS = NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True)


class AggregatorServer(Server[Any]):
    """The SDK's low-level server, declaring the same capabilities on every transport.

    Streamable HTTP builds its `initialize` answer from `create_initialization_options()` with no
    arguments; stdio from what `run()` is given. Defaulting the notification options here makes
    both say `listChanged: true`, which is what hermes does.
    """

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> Any:
        return super().create_initialization_options(notification_options or NOTIFICATIONS, *args, **kwargs)


class Aggregator:
    """The parts of `serve` put together around one session: the router and announcer (built before
    the session: its servers' questions and changes reach them), the forwarder (built on the session's
    parts), and what tells the session the client's roots changed."""

    def __init__(self, router: Router, announcer: Announcer, forwarder: Forwarder,
                 roots_changed: Callable[[], Awaitable[None]]) -> None:
        self.router = router
        self.announcer = announcer
        self.forwarder = f = forwarder
        self._tell_roots_changed = roots_changed
        self.server = AggregatorServer(
            "hermes", version=__version__,
            instructions="Tools of every MCP server configured in hermes, filtered and guarded.",
            on_list_tools=f.list_tools, on_list_resources=f.list_resources,
            on_list_resource_templates=f.list_templates, on_read_resource=f.read_resource,
            on_subscribe_resource=f.subscribe, on_unsubscribe_resource=f.unsubscribe,
            on_list_prompts=f.list_prompts, on_get_prompt=f.get_prompt, on_completion=f.complete,
            on_set_logging_level=self._set_level, on_roots_list_changed=self._roots_changed,
            on_subscriptions_listen=ListenHandler(self.announcer.bus), get_tool_input_schema=f.input_schema)
        self.server.add_notification_handler("notifications/initialized", types.NotificationParams,
                                             self._client_ready)
        # Registered as a request handler: its answer may also be a task (the extension's own result).
        self.server.add_request_handler("tools/call", types.CallToolRequestParams, f.call_tool)
        # The Tasks extension (2026-07-28): a task-supporting call of a client that declares it is a task.
        self.server.extensions[EXTENSION] = {}
        self.server.add_request_handler("tasks/get", TaskParams, f.tasks.get)
        self.server.add_request_handler("tasks/update", TaskUpdateParams, f.tasks.update)
        self.server.add_request_handler("tasks/cancel", TaskParams, f.tasks.cancel)
        # The state of an input-required round names a parked call: sealed, so a client can neither
        # forge one nor alter it (the SDK's lowlevel server leaves this boundary to its user).
        self.server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="hermes"))

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    async def _roots_changed(self, ctx: Ctx, params: types.NotificationParams | None) -> None:
        self.router.seen(ctx)
        await self._tell_roots_changed()

    async def _client_ready(self, ctx: Ctx, params: types.NotificationParams | None) -> None:
        # Servers connected before this client asked for roots and got an empty answer; now that a
        # client with roots of its own is here, they ask again and get the client's.
        self.router.seen(ctx)
        self.router.client_arrived.set()
        if ctx.session.check_client_capability(ROOTS):
            await self._tell_roots_changed()


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


def _announce_missing_config(home: Home) -> None:
    if not home.config.exists():
        print(f"hermes mcp serve: no config found at {home.config} (HERMES_HOME={home.root}); serving no tools. "
              f"Set HERMES_HOME in the client's server entry, or add servers with `hermes mcp add`.",
              file=sys.stderr, flush=True)


@asynccontextmanager
async def aggregating(home: Home, settings: SessionSettings, *, prefix: bool = True, deferred: bool = False,
                      environ: Mapping[str, str] | None = None, recorder: CallRecorder | None = None,
                      control: bool = True, redactor: Redactor | None = None, oauth: OAuthFactory | None = None,
                      pins: PinRecords | None = None, task_records: TaskRecords | None = None,
                      extra: Callable[[Session], ExtraTools] | None = None
                      ) -> AsyncIterator[tuple[Aggregator, Session]]:
    """A session and the aggregator in front of it, for as long as the block runs: what `serve` is
    for its one user, and what the team gateway runs for each of its users (`environ`: theirs;
    `recorder`: their calls' audit; `oauth`: their own OAuth tokens; `pins`: their tool pins;
    `task_records`: their tasks' records, shared by the replicas; `extra`: the gateway's own tools
    for them, made for the session; no control endpoint, which is one per HERMES_HOME)."""
    router = Router()
    announcer = Announcer(router)
    subscribers = Subscribers()
    # What the session's servers ask goes to the client connected here; their changes reach it too.
    handlers = router.handlers(resource_updated=subscribers.relay_update, list_changed=announcer.upstream_changed)
    async with Session(home, settings, handlers=handlers, environ=environ, redactor=redactor, oauth=oauth,
                       pins=pins) as session, \
            anyio.create_task_group() as tasks:
        session.tools.listen(announcer.changed)
        parts = SessionParts(session.tools, session.calls, session.upstream, session.redactor, session.roots_changed)
        served = ServedTasks(task_records if task_records is not None else MemoryTaskRecords(), tasks)
        forwarder = Forwarder(parts, Naming(prefix), router, subscribers, Rounds(tasks), served, deferred=deferred,
                              recorder=recorder, extra=extra(session) if extra is not None else None)
        aggregator = Aggregator(router, announcer, forwarder, session.roots_changed)
        if control:
            await tasks.start(publish_control, session)
        tasks.start_soon(aggregator.announcer.run)
        await tasks.start(served.run)
        try:
            yield aggregator, session
        finally:
            tasks.cancel_scope.cancel()


async def serve(home: Home, options: ServeOptions) -> None:
    _announce_missing_config(home)
    settings = SessionSettings(platform=options.platform, only=frozenset({options.only}) if options.only else None,
                               start_wait=options.start_wait)
    async with aggregating(home, settings, prefix=options.prefix, deferred=options.deferred) as (aggregator, session):
        if options.http:
            token = secrets.token_urlsafe(32) if options.auth else None
            if token:
                session.redactor.register(token)
            async with anyio.create_task_group() as tasks:
                await tasks.start(serve_http, aggregator.server.streamable_http_app(), options.port, token)
                await anyio.sleep_forever()
        else:
            stdin = cast(Any, stdin_lines()) if stdin_is_pollable() else None
            async with stdio_server(stdin=stdin) as (read, write):
                await aggregator.server.run(read, write, aggregator.server.create_initialization_options())


def run_serve(home: Home, options: ServeOptions) -> int:
    # A signal is how a server is told to stop: it stops cleanly, servers first, and exits 0.
    interrupts.run(serve, home, options, stop_on_signal=True)
    return 0


__all__ = ["SEARCH_TOOL", "Aggregator", "ServeOptions", "aggregating", "run_serve", "serve"]
