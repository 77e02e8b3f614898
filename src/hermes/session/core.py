"""One running host: config -> connections -> tool surface; calls, reload and shutdown.

A `Session` is an async context manager. Entering it reads the config, starts every enabled server
in parallel and waits until each one has either connected or failed (each bounded by its own
`connect_timeout`, so one slow server never holds up the rest for longer than its own budget).
Leaving it stops every server at once and waits until each child process is gone.

The work is split by job: `Lifecycle` owns the server set (start, reload, stop), `ToolSurface`
keeps what a model sees (rebuilt after any change a connection reports; held-back tools, the
deferred catalog and search, listeners), `Calls` turns a registered name into one `CallResult`,
`Upstream` serves resources and prompts to `serve`, and `why.why_unavailable` decides, purely, why
a server's tools are missing. The parts read the server set as a `Roster` (which `Lifecycle` is),
never the session, and supervisors only as `Supervisor`s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.to_thread
import httpx2

from hermes.apps.host import Host, local_host
from hermes.apps.status import AppStatus
from hermes.background import Background
from hermes.config.model import ServerConfig
from hermes.config.resolve import ResolvedServer
from hermes.config.store import ConfigStore
from hermes.home import Home
from hermes.mcp.children import Watchdog
from hermes.mcp.handlers import ClientHandlers
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.mcp.tasks import Progress
from hermes.mcp.transports import TransportOpener
from hermes.plugins.registry import LoadedPlugins
from hermes.security.redact import Redactor
from hermes.security.redacted_log import redacted_file_logging
from hermes.session.calls import Calls
from hermes.session.lifecycle import Lifecycle, ReloadReport, SessionSettings
from hermes.session.status import ServerStatus, status_rows
from hermes.session.surfacing import ToolSurface
from hermes.session.upstream import Upstream
from hermes.tools.call_result import CallResult
from hermes.tools.naming import registered_name
from hermes.tools.permissions import Asker, Permission, Verdict
from hermes.tools.pins import ChangedTool, PinRecords
from hermes.tools.results import ResultFiles
from hermes.tools.surface import Surface, SurfaceTool
from hermes.tools.unavailable import Unavailable
from hermes.tools.utilities import UtilityKind

__all__ = ["OAuthFactory", "ReloadReport", "Session", "SessionSettings"]

# An OAuth server's `httpx` auth for a connection: (the server, its URL, told why a call was refused).
OAuthFactory = Callable[[ResolvedServer, str, Callable[[Exception], None]], httpx2.Auth]


class Session:
    def __init__(self, home: Home, settings: SessionSettings | None = None, *, host: Host | None = None,
                 environ: Mapping[str, str] | None = None, handlers: ClientHandlers | None = None,
                 redactor: Redactor | None = None, oauth: OAuthFactory | None = None,
                 pins: PinRecords | None = None) -> None:
        """`handlers`: what servers may ask of their client (sampling, elicitation, roots), answered
        by whoever owns the model and the user (the session only routes); `redactor`: the caller's,
        when it redacts too (a model provider built before the session); `oauth`: how an OAuth
        server's credentials are found (HERMES_HOME's token files by default; a team user's own);
        `pins`: where tool pins live (HERMES_HOME's file by default; a team user's record)."""
        self.home = home
        self.settings = settings or SessionSettings()
        self.handlers = handlers or ClientHandlers()
        self.host = host or local_host()
        self.store = ConfigStore(home)
        self.redactor = redactor or Redactor()
        self._environ = dict(os.environ if environ is None else environ)
        self._watchdog = Watchdog()
        opener = TransportOpener(self.redactor, home.logs, self._environ, self._watchdog, oauth or self._oauth_for,
                                 windows=self.host.os_name == "win32", hermes_home=home.root)
        self._opener = opener
        self.lifecycle = lifecycle = Lifecycle(home, self.settings, self.host, opener, self.handlers, self.redactor)
        # Encoding the tools' meaning runs in the session's task group, and stops with it.
        self._background = Background()
        self.tools = ToolSurface(lifecycle, known_tools=home.known_tools, tool_pins=pins or home.tool_pins,
                                 tool_vectors=home.tool_vectors, start=self._background.submit)
        lifecycle.listen(self.tools.changed)
        self.calls = Calls(lifecycle, self.redactor, ResultFiles(home.cache, home.results),
                           surface=self.tools.current, held_back=self.tools.changed_tools,
                           verdict=self._verdict)
        self.upstream = Upstream(lifecycle, self.redactor, denied=self._upstream_denied)
        self._stack: AsyncExitStack | None = None

    @property
    def platform(self) -> str | None:
        return self.settings.platform

    @property
    def warnings(self) -> list[str]:
        """What is likely wrong in the configuration: from reading it, and from the servers' tool lists."""
        return self.lifecycle.warnings + self.tools.warnings()

    @property
    def plugins(self) -> LoadedPlugins:
        return self.lifecycle.plugins

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> Session:
        def read() -> None:
            """The files that decide the servers, read off the event loop (a gateway's other rooms go on)."""
            config = self.store.load()
            variables = self._variables()  # a broken .env fails here, whole
            self.home.ensure()
            self.lifecycle.apply(config, variables)  # a config error is raised as itself, before any task runs

        await anyio.to_thread.run_sync(read)
        async with AsyncExitStack() as stack:
            if self.settings.file_log:
                stack.enter_context(redacted_file_logging(self.home.logs / "hermes.log", self.redactor))
            tasks = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tasks.cancel_scope.cancel)  # the background work, once the servers have stopped
            stack.push_async_callback(self._stop_all)
            await tasks.start(self._background.run)
            try:
                await self.lifecycle.start(tasks, list(self.lifecycle.desired), wait=self.settings.start_wait)
            except BaseException as exc:
                _hurry_if_interrupted(self._watchdog, type(exc))
                raise
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        _hurry_if_interrupted(self._watchdog, exc_type)
        if self._stack is not None:
            await self._stack.__aexit__(exc_type, exc, tb)
            self._stack = None

    async def _stop_all(self) -> None:
        with anyio.CancelScope(shield=True):
            with self._watchdog.sessions.together():  # one reading of /proc for every server stopped
                await self.lifecycle.stop_all()
            await anyio.to_thread.run_sync(self._watchdog.close)

    def _oauth_for(self, server: ResolvedServer, url: str, told_why: Callable[[Exception], None]) -> httpx2.Auth:
        """A non-interactive OAuth provider: refreshes stored tokens, never opens a browser."""
        from hermes.mcp.oauth.provider import build_provider

        return build_provider(self.home, server.name, url, server.config.oauth, redactor=self.redactor,
                              on_refused=told_why)

    async def reload(self) -> ReloadReport:
        """Re-read the config and apply only the difference; a broken config changes nothing."""
        config = self.store.load()
        return await self.lifecycle.reload(config, self._variables())

    def _variables(self) -> Mapping[str, str]:
        given = self.settings.variables
        return dict(given) if given is not None else self.store.variables(self._environ)

    async def reconnect(self, name: str) -> ConnectionSnapshot:
        """Restart one server now (a fresh process or connection); its snapshot once it connected or failed."""
        return await self.lifecycle.restart(name)

    # -- what is configured and what runs -------------------------------------------------------

    def snapshots(self) -> dict[str, ConnectionSnapshot]:
        """Every server's latest snapshot, by name (sorted)."""
        return self.lifecycle.snapshots()

    def server_config(self, name: str) -> ServerConfig | None:
        """The configuration a server runs with (from config.yaml, a project or its plugin), or None."""
        return self.lifecycle.server_config(name)

    def source_of(self, name: str) -> str:
        return self.lifecycle.source_of(name)

    def held_back(self) -> list[ChangedTool]:
        return self.tools.changed_tools()

    def platform_servers(self) -> set[str]:
        return self.lifecycle.platform_servers()

    # -- the surface -----------------------------------------------------------------------------

    def surface(self) -> Surface:
        """What a model sees now (see `session.surfacing` for held-back tools, the catalog, search)."""
        return self.tools.current()

    # -- why tools are missing -------------------------------------------------------------------

    def why(self, name: str) -> Unavailable | AppStatus:
        """Why server `name` offers no tools now (see `hermes.session.why`)."""
        return self.lifecycle.why(name)

    def unavailable(self) -> list[Unavailable | AppStatus]:
        """Servers on this platform whose tools are missing from the surface, with the reason."""
        allowed = self.platform_servers()
        return [self.why(name) for name, snapshot in self.snapshots().items()
                if name in allowed and not snapshot.offers_tools]

    def status(self) -> list[ServerStatus]:
        """Per server: state, tools on the surface, last error and why it is unavailable."""
        return status_rows(self.lifecycle, self.surface())

    # -- calls -----------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any], *, on_progress: Progress | None = None,
             asker: Asker | None = None, cautious: bool = False) -> Coroutine[Any, Any, CallResult]:
        """Call a tool of the surface by its registered name; `on_progress` hears the server's progress;
        a tool that asks runs only on `asker`'s yes (see `hermes.tools.permissions`). Awaited as
        `Calls.call` itself: a coroutine of its own here would be one more frame resumed at every
        turn of every call."""
        return self.calls.call(name, arguments, on_progress=on_progress, asker=asker, cautious=cautious)

    def _verdict(self, tool: SurfaceTool, cautious: bool) -> Verdict:
        return self.tools.verdict(tool, cautious=cautious)

    def _upstream_denied(self, server: str, kind: Literal["resources", "prompts"]) -> bool:
        """Resources and prompts served as MCP (`serve`) follow the rules of the tools that read them."""
        reader: UtilityKind = "read_resource" if kind == "resources" else "get_prompt"
        tool = SurfaceTool(registered_name(server, reader), server, reader, reader, "", {})
        return self._verdict(tool, False).permission is Permission.DENY

    async def roots_changed(self) -> None:
        """The roots the client offers changed: every connected server is told, and asks again."""
        async with anyio.create_task_group() as tasks:
            for name in self.snapshots():
                connection = self.lifecycle.supervisor(name)
                if connection is not None:
                    tasks.start_soon(connection.roots_changed)


def _hurry_if_interrupted(watchdog: Watchdog, exc_type: type[BaseException] | None) -> None:
    if exc_type is not None and issubclass(exc_type, (KeyboardInterrupt, anyio.get_cancelled_exc_class())):
        watchdog.hurry = True  # interrupted: the user is waiting for the prompt back
