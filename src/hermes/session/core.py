"""One running host: config -> connections -> tool surface; calls, reload and shutdown.

A `Session` is an async context manager. Entering it reads the config, starts every enabled server
in parallel and waits until each one has either connected or failed (each bounded by its own
`connect_timeout`, so one slow server never holds up the rest for longer than its own budget).
Leaving it stops every server at once and waits until each child process is gone.

The surface is rebuilt lazily after any change a connection reports (linear in the number of
tools); listeners registered with `on_surface_change` hear about every change.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from hermes.apps.declaration import LivenessKind
from hermes.apps.gate import Gate, app_gate
from hermes.apps.host import Host, local_host
from hermes.apps.states import AppState
from hermes.apps.status import AppStatus
from hermes.config.model import HermesConfig, ServerConfig
from hermes.config.project import load_project
from hermes.config.resolve import ResolvedServer, resolve_server
from hermes.config.store import ConfigStore
from hermes.errors import HermesError
from hermes.home import Home
from hermes.mcp.children import Watchdog
from hermes.mcp.connection import RestartPolicy, ServerConnection, ServerNotConnected
from hermes.mcp.describe import describe_failure
from hermes.mcp.endpoint import PUBLISH_GRACE, LiveEndpointSource
from hermes.mcp.handlers import ClientHandlers, ServerCallbacks
from hermes.mcp.states import WAITING_FOR_RELOAD, ConnectionState
from hermes.mcp.tasks import Progress
from hermes.mcp.transports import TransportOpener
from hermes.plugins.registry import LoadedPlugins, load_enabled
from hermes.security.redact import Redactor
from hermes.security.redacted_log import redacted_file_logging
from hermes.session.known_tools import KnownToolCounts
from hermes.session.servers import DesiredServer, desired_servers
from hermes.session.status import ServerStatus
from hermes.tools import utilities
from hermes.tools.deferred import HiddenServer, SearchIndex, catalog_text
from hermes.tools.filters import filter_warnings, tool_allowed
from hermes.tools.naming import owners, registered_name
from hermes.tools.results import RenderedResult, redact_result, render_result
from hermes.tools.surface import ServerTools, Surface, SurfaceTool, build_surface, server_entries
from hermes.tools.toolsets import servers_for_platform
from hermes.tools.unavailable import Unavailable
from hermes.validation import suggestion

T = TypeVar("T")


@dataclass(frozen=True)
class SessionSettings:
    platform: str | None = None  # whose platform_toolsets apply
    only: frozenset[str] | None = None  # start only these servers (a probe, `tools call`)
    include_disabled: bool = False  # start them even when disabled (a probe)
    policy: RestartPolicy = field(default_factory=RestartPolicy)
    watch_interval: float = 0.5  # how often an app-bound server's runtime file is checked
    publish_grace: float = PUBLISH_GRACE  # how long a running app may take to write its runtime file
    # Where a project's `.hermes/config.yaml` is looked for (and its parents up to the repository
    # root); None: no project scope.
    project: Path | None = field(default_factory=Path.cwd)
    # How long entering the session waits for the servers' first attempts; None: until each has
    # connected or failed. A listing passes a few seconds: the slowest server shows as `starting`.
    start_wait: float | None = None


@dataclass
class ReloadReport:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    restarted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    revived: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, list[str]]:
        return {"added": self.added, "removed": self.removed, "restarted": self.restarted,
                "unchanged": self.unchanged, "revived": self.revived}


@dataclass(frozen=True)
class CallOutcome:
    """The answer to one tool call: a result, an unavailable payload, or a plain error."""

    result: RenderedResult | None = None
    unavailable: Unavailable | AppStatus | None = None
    error: str | None = None
    # The server's own answer (error text redacted), for clients that take MCP content as it is.
    raw: types.CallToolResult | None = None
    no_such_tool: bool = False  # the name is not a tool of any configured server (the CLI exits 3)

    @property
    def unavailable_payload(self) -> dict[str, Any] | None:
        """What a model gets for an unavailable tool (SPEC 5.5), or None."""
        return self.unavailable.payload() if self.unavailable is not None else None

    @property
    def is_error(self) -> bool:
        return self.result is None or self.result.is_error

    @property
    def text(self) -> str:
        if self.result is not None:
            return self.result.text
        if self.unavailable is not None:
            return self.unavailable.sentence
        return self.error or ""

    def to_json(self) -> dict[str, Any]:
        if self.result is not None:
            return self.result.to_json()
        if self.unavailable is not None:
            return {"is_error": True, **self.unavailable.payload()}
        return {"is_error": True, "error": self.error}


class Session:
    def __init__(self, home: Home, settings: SessionSettings | None = None, *, host: Host | None = None,
                 environ: Mapping[str, str] | None = None, handlers: ClientHandlers | None = None) -> None:
        self.home = home
        self.settings = settings or SessionSettings()
        # What servers may ask of their client (sampling, elicitation, roots): answered by whoever
        # owns the model and the user; the session only routes.
        self.handlers = handlers or ClientHandlers()
        self.host = host or local_host()
        self.store = ConfigStore(home)
        self.redactor = Redactor()
        self.warnings: list[str] = []
        self.plugin_errors: list[str] = []
        self.plugins = LoadedPlugins()  # the enabled plugins as of the last (re)load
        self._environ = dict(os.environ if environ is None else environ)
        self._cache_dir = home.cache  # computed once: building paths shows up in per-call cost
        self._watchdog = Watchdog()
        self._opener = TransportOpener(self.redactor, home.logs, self._environ, self._watchdog, self._oauth_for,
                                       windows=self.host.os_name == "win32")
        self._known_tools = KnownToolCounts(home.known_tools)
        self._config = HermesConfig()
        self._desired: dict[str, DesiredServer] = {}
        self._gates: dict[str, Gate] = {}
        self._connections: dict[str, ServerConnection] = {}
        self._finished: dict[str, anyio.Event] = {}
        self._surface: Surface | None = None
        self._search: SearchIndex | None = None
        self._listeners: list[Callable[[], None]] = []
        self._stack: AsyncExitStack | None = None
        self._variables: dict[str, str] = {}
        self._tasks: TaskGroup | None = None

    @property
    def platform(self) -> str | None:
        return self.settings.platform

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> Session:
        config = self.store.load()
        self._variables = self.store.variables(self._environ)  # a broken .env fails here, whole
        self.home.ensure()
        async with AsyncExitStack() as stack:
            stack.enter_context(redacted_file_logging(self.home.logs / "hermes.log", self.redactor))
            self._tasks = await stack.enter_async_context(anyio.create_task_group())
            stack.push_async_callback(self._stop_all)
            try:
                self._apply_config(config)
                await self._start(list(self._desired), wait=self.settings.start_wait)
            except BaseException as exc:
                self._hurry_if_interrupted(type(exc))
                raise
            self._stack = stack.pop_all()
        return self

    def _hurry_if_interrupted(self, exc_type: type[BaseException] | None) -> None:
        if exc_type is not None and issubclass(exc_type, (KeyboardInterrupt, anyio.get_cancelled_exc_class())):
            self._watchdog.hurry = True  # interrupted: the user is waiting for the prompt back

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._hurry_if_interrupted(exc_type)
        if self._stack is not None:
            await self._stack.__aexit__(exc_type, exc, tb)
            self._stack = None

    async def _stop_all(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._stop(list(self._connections))
            await anyio.to_thread.run_sync(self._watchdog.close)

    def _apply_config(self, config: HermesConfig) -> None:
        plugins = load_enabled(self.home, config)
        project = load_project(self.home, self.settings.project) if self.settings.project else None
        self._config = config
        self._desired = desired_servers(config, plugins, only=self.settings.only,
                                        include_disabled=self.settings.include_disabled, project=project).servers
        self.plugins = plugins
        self.plugin_errors = plugins.errors
        self.warnings = [w for d in self._desired.values() for w in filter_warnings(d.name, d.config.tools)]
        self.warnings += plugins.warnings

    async def _start(self, names: list[str], *, wait: float | None = None) -> None:
        assert self._tasks is not None
        variables = self._variables
        started: list[ServerConnection] = []
        for name in names:
            desired = self._desired[name]

            def resolve(desired: DesiredServer = desired) -> ResolvedServer:
                return resolve_server(desired.name, desired.config, variables)

            connection = self._connection_for(desired, resolve)
            finished = anyio.Event()
            self._connections[name] = connection
            self._finished[name] = finished
            self._tasks.start_soon(self._supervise, connection, finished)
            started.append(connection)
        with anyio.move_on_after(math.inf if wait is None else wait):
            for connection in started:
                await connection.first_attempt_done.wait()
        self._changed(None)

    def _oauth_for(self, server: ResolvedServer, url: str, told_why: Callable[[Exception], None]) -> httpx2.Auth:
        """A non-interactive OAuth provider: refreshes stored tokens, never opens a browser."""
        from hermes.mcp.oauth.provider import build_provider

        return build_provider(self.home, server.name, url, server.config.oauth, redactor=self.redactor,
                              on_refused=told_why)

    def _connection_for(self, desired: DesiredServer, resolve: Callable[[], ResolvedServer]) -> ServerConnection:
        """A supervisor for one server; a declared server first passes the app gate."""
        declaration = desired.declaration
        endpoint: LiveEndpointSource | None = None
        disabled = desired.disabled_reason
        refused: AppState | None = None
        self._gates.pop(desired.name, None)
        if declaration is not None and disabled is None:
            gate = app_gate(declaration, self.host, desired.app_name or desired.name)
            self._gates[desired.name] = gate
            if gate.refusal is not None:
                disabled, refused = gate.refusal.sentence, gate.refusal.state
            else:
                spec = declaration.liveness_for(self.host.os_name)
                if spec is not None and spec.kind is LivenessKind.SERVER_JSON:
                    endpoint = LiveEndpointSource(declaration.server, spec, self.host, self.redactor,
                                                  gate.availability.path, app_name=desired.app_name,
                                                  publish_grace=self.settings.publish_grace)
        callbacks = ServerCallbacks(desired.name, self.handlers, roots=desired.config.roots,
                                    log=self.home.server_log(desired.name), redactor=self.redactor)
        return ServerConnection(desired.name, desired.config, resolve, self._opener, policy=self.settings.policy,
                                on_change=self._changed, callbacks=callbacks, endpoint=endpoint,
                                disabled_reason=disabled, app_state=refused,
                                watch_interval=self.settings.watch_interval)

    @staticmethod
    async def _supervise(connection: ServerConnection, finished: anyio.Event) -> None:
        try:
            await connection.run()
        finally:
            finished.set()

    async def _stop(self, names: list[str]) -> None:
        """Stop these servers all at once and wait until every one has let go of its process."""
        finished = []
        for name in names:
            connection = self._connections.pop(name, None)
            event = self._finished.pop(name, None)
            if connection is not None and event is not None:
                connection.stop()
                finished.append(event)
        for event in finished:
            await event.wait()

    async def reload(self) -> ReloadReport:
        """Re-read the config and apply only the difference; a broken config changes nothing."""
        config = self.store.load()
        self._variables = self.store.variables(self._environ)
        old = self._desired
        self._apply_config(config)
        report = ReloadReport()
        regated: list[str] = []
        revived: dict[str, int] = {}
        for name in sorted(set(old) | set(self._desired)):
            before, after = old.get(name), self._desired.get(name)
            if after is None:
                report.removed.append(name)
            elif before is None:
                report.added.append(name)
            elif before != after:
                report.restarted.append(name)
            else:
                report.unchanged.append(name)
                if self._gate_changed(after):
                    regated.append(name)
                    report.revived.append(name)
                else:
                    connection = self._connections[name]
                    attempts = connection.attempts.count
                    if connection.revive():
                        report.revived.append(name)
                        revived[name] = attempts
        await self._stop(report.removed + report.restarted + regated)
        await self._start(report.added + report.restarted + regated)
        for name, attempts in revived.items():
            await self._connections[name].next_attempt(attempts)
        self._changed(None)
        return report

    def _gate_changed(self, desired: DesiredServer) -> bool:
        """An app installed, updated or removed since the last check changes what may start."""
        before = self._gates.get(desired.name)
        if desired.declaration is None or before is None:
            return False
        now = app_gate(desired.declaration, self.host, desired.app_name or desired.name)
        return now.open != before.open or now.availability != before.availability

    # -- the surface -----------------------------------------------------------------------------

    def on_surface_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self, server: str | None) -> None:
        """A connection changed state or tools: rebuild the surface; tell listeners if it differs."""
        before = self._surface
        self._surface = None
        self._search = None
        connection = self._connections.get(server) if server else None
        if connection is not None and connection.connected:
            entries = server_entries(self._server_tools(connection))
            self._known_tools.remember(connection.name, [t.name for t in entries])
        if before is not None and self._listeners and before.same_as(self.surface()):
            return  # a server started connecting, say: nothing a model sees has changed
        for listener in self._listeners:
            listener()

    @staticmethod
    def _server_tools(connection: ServerConnection) -> ServerTools:
        caps = connection.capabilities
        return ServerTools(connection.name, connection.config.tools, list(connection.tools),
                           bool(caps and caps.resources), bool(caps and caps.prompts))

    def _platform_servers(self) -> set[str]:
        return servers_for_platform(self._connections, self._config.platform_toolsets, self.platform)

    def surface(self) -> Surface:
        if self._surface is None:
            allowed = self._platform_servers()
            self._surface = build_surface(self._server_tools(c) for name, c in sorted(self._connections.items())
                                          if name in allowed and c.connected)
        return self._surface

    def hidden_servers(self) -> list[HiddenServer]:
        """Declared servers on this platform whose tools are all hidden, with the reason."""
        allowed = self._platform_servers()
        hidden = []
        for name, connection in sorted(self._connections.items()):
            desired = self._desired.get(name)
            if name in allowed and not connection.connected and desired and desired.declaration is not None:
                hidden.append(HiddenServer(name, self._known_tools.counts.get(name),
                                           self._unavailable(connection).sentence))
        return hidden

    def deferred_catalog(self) -> str:
        return catalog_text(self.surface(), self.hidden_servers())

    def tool_search(self, query: str) -> tuple[list[SurfaceTool], str]:
        surface = self.surface()
        if self._search is None or self._search.surface is not surface:
            self._search = SearchIndex(surface)
        return self._search.search(self.hidden_servers(), query)

    def unavailable(self) -> list[Unavailable | AppStatus]:
        """Servers on this platform whose tools are missing from the surface, with the reason."""
        allowed = self._platform_servers()
        return [self._unavailable(connection) for name, connection in sorted(self._connections.items())
                if name in allowed and not connection.connected]

    def _unavailable(self, connection: ServerConnection) -> Unavailable | AppStatus:
        """Why a server's tools are missing, from what was observed (SPEC 5.5).

        The app's states come from the gate (not installed, too old, unsupported OS) and from the
        runtime file (not running, no usable endpoint). `hermes_not_connected` only when the app
        runs, its runtime file is valid and its endpoint answers, yet this session's connection to
        that endpoint failed. A server process that fails (a stdio bridge, or a declared server
        with no runtime file to watch) is a plain failed or parked server, with its stderr.
        """
        desired = self._desired.get(connection.name)
        if desired is not None and desired.declaration is not None and desired.disabled_reason is None:
            gate = self._gates.get(desired.name)
            if gate is not None and gate.refusal is not None:
                return gate.refusal
            if connection.app_state is not None:
                return self._app_status(desired, connection.app_state, connection.reason)
            endpoint_failed = connection.state in WAITING_FOR_RELOAD | {ConnectionState.RESTARTING}
            if connection.app_bound and not connection.config.is_stdio and endpoint_failed:
                return self._app_status(desired, AppState.HERMES_NOT_CONNECTED, connection.reason)
        return Unavailable(connection.name, connection.state,
                           self.redactor(connection.reason or "it has not connected yet"),
                           self.redactor(connection.stderr_tail), remote=not connection.config.is_stdio,
                           untrusted=desired is not None and desired.untrusted)

    def _app_status(self, desired: DesiredServer, state: AppState, detail: str) -> AppStatus:
        declaration = desired.declaration
        assert declaration is not None
        gate = self._gates.get(desired.name)
        availability = gate.availability if gate else None
        return AppStatus(desired.name, state, desired.app_name or desired.name,
                         availability.version if availability else None,
                         availability.path if availability else None,
                         declaration.requires.min_version, self.host.os_name, self.redactor(detail) or None)

    def server_config(self, name: str) -> ServerConfig | None:
        """The configuration a server runs with (from config.yaml or its plugin), or None."""
        desired = self._desired.get(name)
        return desired.config if desired is not None else None

    def connections(self) -> dict[str, ServerConnection]:
        return dict(self._connections)

    def status(self) -> list[ServerStatus]:
        """Per server: state, tools on the surface, last error and why it is unavailable."""
        surface = self.surface()
        allowed = self._platform_servers()
        rows: list[ServerStatus] = []
        for name, connection in sorted(self._connections.items()):
            state: ConnectionState | AppState = connection.state
            unavailable: dict[str, Any] | None = None
            if not connection.connected:
                missing = self._unavailable(connection)
                unavailable = missing.payload()
                if isinstance(missing, AppStatus):
                    state = missing.state
            app: dict[str, Any] | None = None
            desired = self._desired.get(name)
            if desired is not None and desired.declaration is not None:
                gate = self._gates.get(name)
                app = {"name": desired.app_name or name, "availability": gate.availability.describe() if gate else None}
            seconds = connection.connect_seconds
            rows.append(ServerStatus(
                name=name, source=self.source_of(name), transport=connection.config.transport_name, state=state,
                tools=len(surface.for_server(name)), tools_offered=len(connection.tools),
                restarts=connection.restarts, pid=connection.pid if connection.connected else None,
                connect_ms=round(seconds * 1000, 1) if seconds else None, on_platform=name in allowed,
                unavailable=unavailable, app=app))
        return rows

    def source_of(self, name: str) -> str:
        desired = self._desired.get(name)
        return desired.source if desired else "unknown"

    # -- calls -----------------------------------------------------------------------------------

    async def roots_changed(self) -> None:
        """The roots the client offers changed: every connected server is told, and asks again."""
        async with anyio.create_task_group() as tasks:
            for connection in self._connections.values():
                tasks.start_soon(connection.roots_changed)

    async def call(self, name: str, arguments: dict[str, Any], *, on_progress: Progress | None = None) -> CallOutcome:
        """Call a tool of the surface by its registered name; `on_progress` hears the server's progress."""
        tool = self.surface().tools.get(name)
        if tool is None:
            return self._not_on_surface(name)
        connection = self._connections.get(tool.server)
        if connection is None:
            return CallOutcome(error=f"MCP server '{tool.server}' was removed; run `hermes tools list`.")
        if not connection.connected:
            return CallOutcome(unavailable=self._unavailable(connection))
        if tool.kind == "tool" and not tool_allowed(tool.original, connection.config.tools):
            return CallOutcome(error=_filtered(tool.original, tool.server))
        try:
            if tool.kind == "tool":
                raw = redact_result(await connection.call_tool(tool.original, arguments, on_progress=on_progress),
                                    self.redactor)
                return CallOutcome(result=render_result(raw, cache=self._cache_dir, server=tool.server), raw=raw)
            return CallOutcome(result=await self._utility(connection, tool, arguments))
        except ServerNotConnected:
            return CallOutcome(unavailable=self._unavailable(connection))
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                return CallOutcome(error=f"The connection to MCP server '{tool.server}' closed during the call; "
                                         f"hermes reconnects by itself, so try again shortly.")
            if exc.error.code == REQUEST_TIMEOUT:
                return CallOutcome(error=f"Tool '{tool.original}' of MCP server '{tool.server}' timed out after "
                                         f"{connection.config.timeout:g} s; the call was cancelled on the server.")
            return CallOutcome(error=self.redactor(f"MCP server '{tool.server}' answered with an error: "
                                                   f"{exc.error.message}"))
        except HermesError as exc:  # already in the user's terms, e.g. a sign-in for more scope
            return CallOutcome(error=self.redactor(str(exc)))
        except Exception as exc:
            if not connection.connected:
                return CallOutcome(unavailable=self._unavailable(connection))
            return CallOutcome(error=self.redactor(f"Calling '{tool.original}' on MCP server '{tool.server}' "
                                                   f"failed: {describe_failure(exc)}"))

    async def _utility(self, connection: ServerConnection, tool: SurfaceTool, arguments: dict[str, Any]
                       ) -> RenderedResult:
        if tool.kind == "list_resources":
            rendered = utilities.resource_listing(await connection.list_resources())
        elif tool.kind == "read_resource":
            rendered = utilities.resource_contents(await connection.read_resource(str(arguments.get("uri", ""))))
        elif tool.kind == "list_prompts":
            rendered = utilities.prompt_listing(await connection.list_prompts())
        else:
            prompt = await connection.get_prompt(str(arguments.get("name", "")),
                                                 utilities.prompt_arguments(arguments))
            rendered = utilities.prompt_messages(prompt)
        structured = self.redactor.value(rendered.structured) if rendered.structured is not None else None
        return RenderedResult(self.redactor(rendered.text), structured, rendered.is_error)

    # -- resources, prompts and completions, for clients that take them as MCP (serve) -----------

    def _offering(self, kind: str) -> list[ServerConnection]:
        """Connected servers on this platform that offer `resources` or `prompts` and may show them."""
        allowed = self._platform_servers()
        found = []
        for name, connection in sorted(self._connections.items()):
            caps = connection.capabilities
            if name not in allowed or not connection.connected or caps is None:
                continue
            rule = connection.config.tools
            offers = caps.resources and rule.resources if kind == "resources" else caps.prompts and rule.prompts
            if offers:
                found.append(connection)
        return found

    async def _gather(self, kind: str, fetch: Callable[[ServerConnection], Awaitable[list[T]]]
                      ) -> list[tuple[str, T]]:
        """(server, item) from every server offering `kind`, asked at once; a failing one adds nothing."""
        results: dict[str, list[T]] = {}

        async def one(connection: ServerConnection) -> None:
            with contextlib.suppress(Exception):
                results[connection.name] = await fetch(connection)

        async with anyio.create_task_group() as tasks:
            for connection in self._offering(kind):
                tasks.start_soon(one, connection)
        return [(server, item) for server in sorted(results) for item in results[server]]

    async def list_resources(self) -> list[tuple[str, types.Resource]]:
        return await self._gather("resources", _resources)

    async def list_resource_templates(self) -> list[tuple[str, types.ResourceTemplate]]:
        return await self._gather("resources", _templates)

    async def list_prompts(self) -> list[tuple[str, types.Prompt]]:
        return await self._gather("prompts", _prompts)

    def _server(self, name: str, kind: str) -> ServerConnection:
        for connection in self._offering(kind):
            if connection.name == name:
                return connection
        raise ServerNotConnected(name, self._connections[name].state if name in self._connections
                                 else ConnectionState.STOPPED, f"it offers no {kind} now")

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult:
        result = await self._server(server, "resources").read_resource(uri)
        contents = [c.model_copy(update={"text": self.redactor(c.text)}) if isinstance(c, types.TextResourceContents)
                    else c for c in result.contents]
        return result.model_copy(update={"contents": contents})

    async def subscribe_resource(self, server: str, uri: str, subscribe: bool) -> None:
        await self._server(server, "resources").subscribe_resource(uri, subscribe)

    def _redacted_text(self, content: types.TextContent) -> types.TextContent:
        return content.model_copy(update={"text": self.redactor(content.text)})

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        result = await self._server(server, "prompts").get_prompt(name, arguments)
        messages = [m.model_copy(update={"content": self._redacted_text(m.content)})
                    if isinstance(m.content, types.TextContent) else m for m in result.messages]
        return result.model_copy(update={"messages": messages})

    async def complete(self, server: str, ref: types.PromptReference | types.ResourceTemplateReference,
                       argument: dict[str, str], context: dict[str, str] | None) -> types.CompleteResult:
        kind = "prompts" if isinstance(ref, types.PromptReference) else "resources"
        return await self._server(server, kind).complete(ref, argument, context)

    def _not_on_surface(self, name: str) -> CallOutcome:
        """Why `name` is not a tool on the surface, as precisely as can be told."""
        for server in owners(name, self._connections):
            connection = self._connections[server]
            if server not in self._platform_servers():
                return CallOutcome(error=f"MCP server '{server}' is not enabled for platform '{self.platform}'.")
            if not connection.connected:
                return CallOutcome(unavailable=self._unavailable(connection))
            for skipped in self.surface().skipped:
                if skipped.name == name:
                    return CallOutcome(error=f"Tool '{name}' was skipped: {skipped.why}.")
            for tool in connection.tools:
                if registered_name(server, tool.name) == name:
                    return CallOutcome(error=_filtered(tool.name, server))
            hint = suggestion(name, list(self.surface().tools))
            return CallOutcome(error=f"MCP server '{server}' has no tool named '{name}'{hint}.", no_such_tool=True)
        hint = suggestion(name, list(self.surface().tools))
        return CallOutcome(error=f"No tool named '{name}'{hint}. Run `hermes tools list` to see the tool surface.",
                           no_such_tool=True)


async def _resources(connection: ServerConnection) -> list[types.Resource]:
    return list((await connection.list_resources()).resources)


async def _templates(connection: ServerConnection) -> list[types.ResourceTemplate]:
    return list((await connection.list_resource_templates()).resource_templates)


async def _prompts(connection: ServerConnection) -> list[types.Prompt]:
    return list((await connection.list_prompts()).prompts)


def _filtered(tool: str, server: str) -> str:
    return f"Tool '{tool}' of MCP server '{server}' is filtered out by tools.include/exclude in config.yaml."
