"""Each team user's own upstream servers on this replica: started on their first request, stopped
when idle.

A tenant is one user's session (their own stdio processes and HTTP connections, started with their
own credentials over the replica's environment, only the servers their policy names, their rules on
top of config.yaml's) with `serve`'s aggregator and a Streamable HTTP session manager in front of
it. A server's question (sampling, elicitation, roots) can therefore only reach that user's
clients. Tenants stop after `idle_minutes` without a request, and when more than `max_users` run,
the longest idle one stops first; a tenant whose user's access changed is replaced once idle.

Requests for a user whose tenant is starting wait for that one start. All tenants are tasks of the
`Tenants.run` task group, so they stop with the replica.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from hermes.config.team_settings import TeamSettings
from hermes.errors import HermesError, leaf
from hermes.home import Home
from hermes.security.redact import Redactor
from hermes.session.lifecycle import SessionSettings
from hermes.team.limits import RateLimits
from hermes.team.metrics import Metrics
from hermes.team.oauth_records import load_records
from hermes.team.pin_records import PinsWriter, StorePins, load_pins
from hermes.team.policy import Access, access_for
from hermes.team.recorder import AuditWriter, CallRecorder
from hermes.team.records import Rule, User
from hermes.team.sealing import Sealer
from hermes.team.signin import CALLBACK_PATH, SignInTool, UserOAuth
from hermes.team.store import TeamStore
from hermes.team.task_records import StoreTaskRecords
from hermes.team.user_home import UserHome


@dataclass
class Tenant:
    user: User
    access: Access
    app: Any  # the user's Streamable HTTP ASGI app
    last_used: float
    active: int = 0
    retired: bool = False
    stop: anyio.Event = field(default_factory=anyio.Event)
    # The user's OAuth records and sealed credentials as this replica's servers use them (a change
    # made elsewhere retires the tenant: their servers start anew with it).
    oauth_records: dict[str, dict[str, Any]] = field(default_factory=dict)
    credentials: dict[str, str] = field(default_factory=dict)
    running_tasks: Callable[[], int] = lambda: 0  # the user's calls running as tasks here

    @property
    def busy(self) -> bool:
        """A request in flight or a task running: stopping it now would lose work."""
        return self.active > 0 or self.running_tasks() > 0


@dataclass(frozen=True)
class TenantOptions:
    platform: str | None = None
    deferred: bool = False
    prefix: bool = True
    replica: str = ""


class Tenants:
    def __init__(self, home: Home, team: TeamSettings, store: TeamStore, sealer: Sealer, writer: AuditWriter,
                 metrics: Metrics, options: TenantOptions, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._home = home
        self._team = team
        self._store = store
        self._sealer = sealer
        self._writer = writer
        self._metrics = metrics
        self._options = options
        self._clock = clock
        self._limits = RateLimits(clock)
        self._tenants: dict[str, Tenant] = {}
        self._retiring: list[Tenant] = []  # replaced while their tasks still run: stopped once done
        self._starting: dict[str, anyio.Event] = {}
        self._rules: list[Rule] | None = None
        self._rules_at = 0.0
        self._tasks: TaskGroup | None = None
        # Where authorization servers send users back: the gateway's public address (any replica).
        self._callback_url = f"{team.public_origin}{CALLBACK_PATH}" if team.public_origin else None
        # The replica's library log (hermes.log) hides every user's secrets; each user's own
        # redactor tells it theirs.
        self.redactor = Redactor()
        self.in_flight = 0
        self.stopping = False  # draining: users whose servers do not run here are sent elsewhere
        self.idle = anyio.Event()  # set whenever no request is in flight (a drain waits on it)
        self.idle.set()

    # -- the owner ------------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            task_status.started()
            try:
                while True:
                    await anyio.sleep(self._team.refresh_seconds)
                    await self.refresh()
            finally:
                self.stopping = True
                tasks.cancel_scope.cancel()

    async def refresh(self) -> None:
        """Re-read the policy; retire tenants whose access changed, or whose user signed in (or had
        a token renewed) on another replica, idle ones, and those over the bound."""
        await self._read_rules()
        for tenant in list(self._tenants.values()):
            if self.access(tenant.user) != tenant.access or \
                    await load_records(self._store, self._sealer, tenant.user.name) != tenant.oauth_records or \
                    await self._store.credentials(tenant.user.name) != tenant.credentials:
                self._retire(tenant)
        self.reap()

    def reap(self) -> list[str]:
        """Stop tenants idle longer than `idle_minutes`, then the longest idle beyond `max_users`."""
        now = self._clock()
        stopped = []
        for tenant in [t for t in self._retiring if not t.busy]:
            self._stop(tenant)
        for tenant in sorted(self._tenants.values(), key=lambda t: t.last_used):
            over = len(self._tenants) > self._team.max_users
            idle_for = now - tenant.last_used
            if not tenant.busy and (tenant.retired or idle_for >= self._team.idle_minutes * 60 or over):
                stopped.append(tenant.user.name)
                self._stop(tenant)
        return stopped

    def _retire(self, tenant: Tenant) -> None:
        tenant.retired = True  # no new request uses it; it stops once its last request and task end
        if not tenant.busy:
            self._stop(tenant)
        elif tenant not in self._retiring:
            self._retiring.append(tenant)  # a new tenant may take its place; `reap` stops this one

    def _stop(self, tenant: Tenant) -> None:
        if self._tenants.get(tenant.user.name) is tenant:
            del self._tenants[tenant.user.name]
        if tenant in self._retiring:
            self._retiring.remove(tenant)
        tenant.stop.set()
        self._metrics.users.set(len(self._tenants))

    # -- access ----------------------------------------------------------------------------------

    async def rules(self) -> list[Rule]:
        """The team's rules, read again once they are `refresh_seconds` old."""
        if self._rules is None or self._clock() - self._rules_at >= self._team.refresh_seconds:
            return await self._read_rules()
        return self._rules

    async def _read_rules(self) -> list[Rule]:
        self._rules = await self._store.rules()
        self._rules_at = self._clock()
        return self._rules

    def access(self, user: User) -> Access:
        return access_for(user, self._rules or [], self._team.calls_per_minute)

    def serves(self, user: User) -> bool:
        """Whether `user`'s servers run on this replica now."""
        found = self._tenants.get(user.name)
        return found is not None and not found.retired

    def running(self) -> list[str]:
        return sorted(self._tenants)

    # -- requests --------------------------------------------------------------------------------

    @asynccontextmanager
    async def using(self, user: User, access: Access) -> AsyncIterator[Tenant]:
        """The user's tenant for one request (started if need be), given the user's access now;
        counted as in flight meanwhile."""
        self.in_flight += 1
        self.idle = anyio.Event() if self.idle.is_set() else self.idle
        try:
            tenant = await self._tenant(user, access)
            tenant.active += 1
            try:
                yield tenant
            finally:
                tenant.active -= 1
                tenant.last_used = self._clock()
                if tenant.retired and not tenant.busy:
                    self._stop(tenant)
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self.idle.set()

    async def _tenant(self, user: User, access: Access) -> Tenant:
        while True:
            found = self._tenants.get(user.name)
            if found is not None and not found.retired and found.access == access:
                return found
            if found is not None:
                self._retire(found)  # the same user with other access (a token's groups changed)
            starting = self._starting.get(user.name)
            if starting is None:
                break
            await starting.wait()
        self._starting[user.name] = event = anyio.Event()
        try:
            if self._tasks is None or self.stopping:
                raise HermesError("this replica is stopping; the next request goes to another")
            try:
                tenant: Tenant = await self._tasks.start(self._serve_user, user)
            except BaseExceptionGroup as group:  # the user's task groups wrap what failed their start
                cause = leaf(group)
                if isinstance(cause, HermesError):
                    raise cause from None
                raise
            self._tenants[user.name] = tenant
            self._metrics.users.set(len(self._tenants))
            self.reap()
            return tenant
        finally:
            del self._starting[user.name]
            event.set()

    async def _variables(self, user: User, sealed: dict[str, str]) -> tuple[dict[str, str], list[str]]:
        """What `${VAR}` sees for `user`: the team's shared variables from the replica's environment
        and `.env`, under the user's own credentials (`sealed`); and the credentials' values (to hide).

        Nothing else of the replica's: a user who has no credential of their own gets "not set",
        never whatever the host happened to hold."""
        from hermes.config.store import ConfigStore

        replica = await anyio.to_thread.run_sync(ConfigStore(self._home).variables)
        shared = {name: replica[name] for name in self._team.shared_variables if name in replica}
        opened = {}
        for name, one in sealed.items():
            value = self._sealer.open(user.name, name, one)
            if value is None:
                print(f"hermes team: {user.name}'s credential {name} does not open with team.secret_key "
                      f"(set it again with `hermes team credential set`)", file=sys.stderr, flush=True)
                continue
            opened[name] = value
        return shared | opened, [value for value in opened.values() if value]

    async def _serve_user(self, user: User, *, task_status: TaskStatus[Tenant] = anyio.TASK_STATUS_IGNORED) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

        from hermes.live.serve import aggregating

        await self.rules()
        access = self.access(user)
        sealed = await self._store.credentials(user.name)
        variables, secrets = await self._variables(user, sealed)
        options = self._options
        named = user.name.replace("{", "{{").replace("}", "}}")  # a token's claim may hold braces
        advice = (f"it is one of {named}'s own credentials here: an administrator sets it with "
                  f"`hermes team credential set {named} {{variable}}`")
        settings = SessionSettings(platform=options.platform, project=None, file_log=False, variables=variables,
                                   missing_variable=advice, server_globs=access.servers,
                                   extra_permissions=access.permissions)
        recorder = CallRecorder(user.name, access.calls_per_minute, self._limits, self._writer, self._metrics,
                                options.replica)
        home = UserHome.of(self._home, user.name)
        # The user's credentials and tokens never show in what is said to them, nor in the log.
        redactor = Redactor(secrets, also=self.redactor)
        records = await load_records(self._store, self._sealer, user.name)
        oauth = UserOAuth(home, user.name, self._store, self._sealer, redactor, records, self._callback_url)
        pins = PinsWriter(self._store, user.name)
        async with anyio.create_task_group() as background:  # the user's sign-ins and pin writes
            await background.start(pins.run)
            try:
                async with aggregating(home, settings, prefix=options.prefix, deferred=options.deferred,
                                       recorder=recorder, control=False, redactor=redactor,
                                       oauth=oauth.provider_for,
                                       pins=StorePins(await load_pins(self._store, user.name), pins),
                                       task_records=StoreTaskRecords(self._store, self._sealer, user.name),
                                       extra=lambda session: SignInTool(oauth, session, variables, background)
                                       ) as (aggregator, _):
                    manager = StreamableHTTPSessionManager(app=aggregator.server, security_settings=None,
                                                           session_idle_timeout=self._team.idle_minutes * 60,
                                                           max_sessions=self._team.sessions_per_user)
                    async with manager.run():
                        tenant = Tenant(user, access, StreamableHTTPASGIApp(manager), self._clock(),
                                        oauth_records=records, credentials=sealed,
                                        running_tasks=aggregator.forwarder.tasks.running)
                        task_status.started(tenant)
                        await tenant.stop.wait()
            finally:
                # A sign-in waiting for its user ends with their servers; the pins are written last.
                background.cancel_scope.cancel()
