"""The server set of one session: which servers should run, their supervisors, start, reload, stop.

`Lifecycle.apply` turns a config into the desired servers (config.yaml, a trusted project's,
enabled plugins'), `start` gives each a supervisor in the session's task group, `reload` applies
only the difference (added, removed, restarted, revived), and `stop` waits until every stopped
server has let go of its process. Declared servers pass the app gate first; the gate's verdict is
kept for `why`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from hermes.apps.declaration import LivenessKind
from hermes.apps.gate import Gate, app_gate
from hermes.apps.host import Host
from hermes.apps.status import AppStatus
from hermes.config.agent_settings import Permissions
from hermes.config.model import HermesConfig, ServerConfig
from hermes.config.project import load_project
from hermes.config.resolve import ResolvedServer, resolve_server
from hermes.errors import InterpolationError
from hermes.home import Home
from hermes.mcp.connection import RestartPolicy, ServerConnection
from hermes.mcp.endpoint import LiveEndpointSource
from hermes.mcp.handlers import ClientHandlers, ServerCallbacks
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.mcp.supervisor import Supervisor
from hermes.mcp.transports import TransportOpener
from hermes.plugins.registry import LoadedPlugins, load_enabled
from hermes.security.redact import Redactor
from hermes.session.servers import (
    BUILTIN_SOURCE,
    DesiredServer,
    builtin_definitions,
    check_toolsets,
    desired_servers,
)
from hermes.session.why import PUBLISH_GRACE, why_unavailable
from hermes.tools.filters import filter_warnings
from hermes.tools.toolsets import builtin_toolsets, servers_for_platform, shown_server
from hermes.tools.unavailable import Unavailable


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
    # Where the agent's own file and terminal tools work (a gateway room's folder); None: the
    # working directory.
    workdir: Path | None = None
    # Start only the servers whose tools this platform gets (a gateway room: a server hidden from
    # its platform, with its credentials, has no reason to run for it).
    platform_only: bool = False
    # Libraries' log lines go to HERMES_HOME/logs/hermes.log through this session's redactor; False
    # where the owner of many sessions (the gateway) keeps that log once for all of them.
    file_log: bool = True
    # A team gateway's user: only the servers their policy names (globs) run for them, and their
    # policy's rules come on top of config.yaml's `permissions:` (a deny anywhere still wins).
    server_globs: tuple[str, ...] | None = None
    extra_permissions: Permissions = field(default_factory=Permissions)
    # What `${VAR}` sees, exactly (a team user's credentials and the team's shared variables);
    # None: `.env` under the environment, as for one person.
    variables: Mapping[str, str] | None = None
    # How a `${VAR}` that is not set gets set, when not in the environment or `.env` ("{variable}"
    # is filled in): a team user's credential is set by an administrator.
    missing_variable: str | None = None


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


class Lifecycle:
    """The server set, and what the session's parts read of it (it is their `Roster`)."""

    def __init__(self, home: Home, settings: SessionSettings, host: Host, opener: TransportOpener,
                 handlers: ClientHandlers, redactor: Redactor) -> None:
        self.home = home
        self.settings = settings
        self.host = host
        self.config = HermesConfig()
        self._permissions = _with_team(self.config.permissions, settings.extra_permissions)
        self.desired: dict[str, DesiredServer] = {}
        self.gates: dict[str, Gate] = {}
        self.plugins = LoadedPlugins()  # the enabled plugins as of the last (re)load
        self.warnings: list[str] = []
        self._opener = opener
        self._handlers = handlers
        self._redactor = redactor
        self._listeners: list[Callable[[str | None], None]] = []
        self._connections: dict[str, ServerConnection] = {}
        self._finished: dict[str, anyio.Event] = {}
        self._variables: dict[str, str] = {}
        self._tasks: TaskGroup | None = None

    def listen(self, listener: Callable[[str | None], None]) -> None:
        """Hear of every change: a server's name (its state or tools), None (the set changed)."""
        self._listeners.append(listener)

    def _on_change(self, server: str | None) -> None:
        for listener in self._listeners:
            listener(server)

    # -- what the session's parts read (`session.roster.Roster`) ----------------------------------

    @property
    def platform(self) -> str | None:
        return self.settings.platform

    def snapshots(self) -> dict[str, ConnectionSnapshot]:
        """Every server's latest snapshot, by name (sorted)."""
        return {name: connection.snapshot for name, connection in sorted(self._connections.items())}

    def supervisor(self, name: str) -> Supervisor | None:
        return self._connections.get(name)

    def server_config(self, name: str) -> ServerConfig | None:
        """The configuration a server runs with (from config.yaml, a project or its plugin), or None."""
        desired = self.desired.get(name)
        return desired.config if desired is not None else None

    def source_of(self, name: str) -> str:
        desired = self.desired.get(name)
        return desired.source if desired else "unknown"

    def permissions(self) -> Permissions:
        return self._permissions

    def app_bound(self, name: str) -> bool:
        desired = self.desired.get(name)
        return desired is not None and desired.declaration is not None

    def platform_servers(self) -> set[str]:
        """The servers whose tools this session's platform gets (`platform_toolsets`)."""
        return servers_for_platform(self.snapshots(), self.config.platform_toolsets, self.platform)

    def why(self, name: str) -> Unavailable | AppStatus:
        """Why server `name` offers no tools now (see `hermes.session.why`)."""
        return why_unavailable(self._connections[name].snapshot, self.desired.get(name), self.gates.get(name),
                               os_name=self.host.os_name, now=time.monotonic(), grace=self.settings.publish_grace)

    def apply(self, config: HermesConfig, variables: Mapping[str, str]) -> None:
        """Which servers should run for this config (nothing starts or stops here); a toolset name
        under platform_toolsets that names nothing is a ConfigError, and nothing changes."""
        plugins = load_enabled(self.home, config)
        project = load_project(self.home, self.settings.project) if self.settings.project else None
        check_toolsets(config, plugins, self.home.config, project)
        self.config = config
        # Read on every verdict (each call, each tool of a rebuilt surface): merged once here.
        self._permissions = _with_team(config.permissions, self.settings.extra_permissions)
        self._opener.sandbox_mode = config.mcp.sandbox
        self._variables = dict(variables)
        self.desired = desired_servers(config, plugins, only=self.settings.only,
                                       include_disabled=self.settings.include_disabled, project=project,
                                       builtins=builtin_toolsets(config.platform_toolsets, self.platform),
                                       workdir=self.settings.workdir).servers
        if self.settings.server_globs is not None:
            globs = self.settings.server_globs
            self.desired = {name: server for name, server in self.desired.items()
                            if any(fnmatchcase(name, glob) for glob in globs)}
        if self.settings.platform_only:
            offered = servers_for_platform(self.desired, config.platform_toolsets, self.platform)
            self.desired = {name: server for name, server in self.desired.items() if name in offered}
        self.plugins = plugins
        self.warnings = [w for d in self.desired.values() for w in filter_warnings(d.name, d.config.tools)]
        self.warnings += plugins.warnings

    async def start(self, tasks: TaskGroup, names: list[str], *, wait: float | None = None) -> None:
        """Supervise these servers in `tasks`; wait (at most `wait` seconds) for their first attempts."""
        self._tasks = tasks
        variables = self._variables
        started: list[ServerConnection] = []
        for name in names:
            desired = self.desired[name]

            def resolve(desired: DesiredServer = desired) -> ResolvedServer:
                try:
                    return resolve_server(desired.name, desired.config, variables)
                except InterpolationError as exc:
                    advice = self.settings.missing_variable
                    if advice is None:
                        raise
                    raise InterpolationError(exc.server, exc.variable, advice.format(variable=exc.variable)) from None

            connection = self._connection_for(desired, resolve)
            finished = anyio.Event()
            self._connections[name] = connection
            self._finished[name] = finished
            tasks.start_soon(_supervise, connection, finished)
            started.append(connection)
        with anyio.move_on_after(math.inf if wait is None else wait):
            for connection in started:
                await connection.first_attempt()
        self._on_change(None)

    def _connection_for(self, desired: DesiredServer, resolve: Callable[[], ResolvedServer]) -> ServerConnection:
        """A supervisor for one server; a declared server first passes the app gate."""
        declaration = desired.declaration
        endpoint: LiveEndpointSource | None = None
        disabled = desired.disabled_reason
        self.gates.pop(desired.name, None)
        if declaration is not None and disabled is None:
            gate = app_gate(declaration, self.host, desired.app_name or desired.name)
            self.gates[desired.name] = gate
            if gate.refusal is not None:
                disabled = gate.refusal.sentence
            else:
                spec = declaration.liveness_for(self.host.os_name)
                if spec is not None and spec.kind is LivenessKind.SERVER_JSON:
                    endpoint = LiveEndpointSource(declaration.server, spec, self.host, self._redactor,
                                                  gate.availability.path)
        callbacks = ServerCallbacks(desired.name, self._handlers, roots=desired.config.roots,
                                    log=self.home.server_log(desired.name), redactor=self._redactor,
                                    sampling=desired.config.sampling)
        # The agent's own toolsets start on their first call: a session that never reads a file
        # does not pay for a server that would (the suite runs thousands of sessions).
        idle_tools = builtin_definitions(shown_server(desired.name)) if desired.source == BUILTIN_SOURCE else None
        return ServerConnection(desired.name, desired.config, resolve, self._opener, policy=self.settings.policy,
                                on_change=self._on_change, callbacks=callbacks, endpoint=endpoint,
                                disabled_reason=disabled, watch_interval=self.settings.watch_interval,
                                idle_tools=idle_tools)

    async def stop(self, names: list[str]) -> None:
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

    async def restart(self, name: str) -> ConnectionSnapshot:
        """Stop one server and start it afresh (`/mcp reconnect`); waits for its first attempt."""
        assert self._tasks is not None, "start() first"
        await self.stop([name])
        await self.start(self._tasks, [name])
        return self._connections[name].snapshot

    async def stop_all(self) -> None:
        await self.stop(list(self._connections))

    async def reload(self, config: HermesConfig, variables: Mapping[str, str]) -> ReloadReport:
        """Apply only the difference to the new config; a broken config never gets this far."""
        assert self._tasks is not None, "start() first"
        old = self.desired
        self.apply(config, variables)
        report = ReloadReport()
        regated: list[str] = []
        revived: dict[str, int] = {}
        for name in sorted(set(old) | set(self.desired)):
            before, after = old.get(name), self.desired.get(name)
            if after is None:
                report.removed.append(name)
            elif before is None:
                report.added.append(name)
            elif before != after:
                report.restarted.append(name)
            else:
                report.unchanged.append(name)
                connection = self._connections[name]
                if self._gate_changed(after):
                    regated.append(name)
                    report.revived.append(name)
                else:
                    attempts = connection.snapshot.attempts
                    if connection.revive():
                        report.revived.append(name)
                        revived[name] = attempts
        await self.stop(report.removed + report.restarted + regated)
        await self.start(self._tasks, report.added + report.restarted + regated)
        for name, attempts in revived.items():
            await self._connections[name].next_attempt(attempts)
        self._on_change(None)
        return report

    def _gate_changed(self, desired: DesiredServer) -> bool:
        """An app installed, updated or removed since the last check changes what may start."""
        before = self.gates.get(desired.name)
        if desired.declaration is None or before is None:
            return False
        now = app_gate(desired.declaration, self.host, desired.app_name or desired.name)
        return now.open != before.open or now.availability != before.availability


async def _supervise(connection: ServerConnection, finished: anyio.Event) -> None:
    try:
        await connection.run()
    finally:
        finished.set()


def _with_team(mine: Permissions, team: Permissions) -> Permissions:
    """config.yaml's rules with a team user's on top; the team's entries marked as theirs."""
    if not (team.allow or team.ask or team.deny):
        return mine
    theirs = frozenset((*team.allow, *team.ask, *team.deny)) - frozenset((*mine.allow, *mine.ask, *mine.deny))
    return Permissions(mine.allow + team.allow, mine.ask + team.ask, mine.deny + team.deny, theirs)
