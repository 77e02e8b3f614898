"""`hermes mcp serve --http --team`: one replica of the team gateway.

It listens first (so `/healthz` answers and `/readyz` says why it is not ready yet), then brings
the database schema up to date, retrying while the database is away (in a cluster it may start
after the replica). On SIGTERM or SIGINT it drains: `/readyz` turns 503 at once so the load
balancer stops sending new work, requests in flight finish (at most `drain_seconds`), then every
user's servers stop and the process exits 0. A second signal stops it at once.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass

import anyio
import anyio.to_thread

from hermes import interrupts
from hermes.config.store import ConfigStore
from hermes.config.team_settings import TeamSettings
from hermes.errors import UsageError
from hermes.home import Home
from hermes.loopback import bind_loopback, serve_asgi
from hermes.security.redacted_log import redacted_file_logging
from hermes.team.app import MCP_PATH, TeamApp
from hermes.team.auth import Authenticator
from hermes.team.metrics import Metrics
from hermes.team.recorder import AuditWriter
from hermes.team.sealing import Sealer
from hermes.team.sql_store import open_store
from hermes.team.store import TeamStore, TeamStoreError
from hermes.team.tenants import TenantOptions, Tenants

_MIGRATE_RETRY_MAX = 10.0


@dataclass(frozen=True)
class TeamServeOptions:
    host: str = "127.0.0.1"
    port: int = 0
    platform: str | None = None
    deferred: bool = False


def team_settings(home: Home) -> TeamSettings:
    """The `team:` settings with their `${VAR}`s filled (a ConfigError names what is missing)."""
    store = ConfigStore(home)
    return store.load().team_settings().resolved(store.variables(), home.config)


def team_store(home: Home, team: TeamSettings) -> TeamStore:
    return open_store(team.database, home.root / "team.db", home.config)


def replica_name() -> str:
    # In Kubernetes HOSTNAME is the pod's name: the audit record says which replica ran a call.
    return os.environ.get("HOSTNAME") or f"{socket.gethostname()}-{os.getpid()}"


async def _migrate(store: TeamStore, app: TeamApp) -> None:
    wait = 0.5
    while True:
        try:
            version = await store.migrate()
        except TeamStoreError as exc:
            print(f"hermes team: {exc}; trying again in {wait:g} s", file=sys.stderr, flush=True)
            await anyio.sleep(wait)
            wait = min(wait * 2, _MIGRATE_RETRY_MAX)
            continue
        app.schema_version = version
        if not await store.rules():
            print("hermes team: the policy has no rules yet, so users get no servers; give some with "
                  "`hermes team policy set '*' --servers '*'`", file=sys.stderr, flush=True)
        return


async def serve_team(home: Home, options: TeamServeOptions) -> None:
    team = await anyio.to_thread.run_sync(team_settings, home)
    store = team_store(home, team)
    sealer = Sealer(team.secret_key)
    metrics = Metrics()
    writer = AuditWriter(store, metrics)
    tenants = Tenants(home, team, store, sealer, writer, metrics,
                      TenantOptions(options.platform, options.deferred, replica=replica_name()))
    app = TeamApp(team, store, Authenticator(store, team.oauth), tenants, metrics)
    try:
        sock = bind_loopback(options.port, options.host)
    except OSError as exc:
        raise UsageError(f"The team gateway cannot listen on {options.host}:{options.port}: "
                         f"{exc.strerror or exc}.") from None
    # Library log lines (the SDK's OAuth trouble with its tracebacks, say) go to the replica's
    # hermes.log with every user's secrets hidden, never to stderr.
    home.ensure()
    try:
        with redacted_file_logging(home.logs / "hermes.log", tenants.redactor):
            async with anyio.create_task_group() as tasks:
                await tasks.start(writer.run)
                await tasks.start(tenants.run)
                await tasks.start(serve_asgi, app, sock)
                port = sock.getsockname()[1]
                print(f"hermes team gateway on http://{options.host}:{port}{MCP_PATH} (replica {replica_name()})",
                      file=sys.stderr, flush=True)
                await _migrate(store, app)
                with interrupts.interruptible() as caught:  # the first signal ends this part only
                    await anyio.sleep_forever()
                if caught.hit:
                    await _drain(app, tenants, team.drain_seconds)
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await store.close()


async def _drain(app: TeamApp, tenants: Tenants, seconds: int) -> None:
    app.draining = True
    tenants.stopping = True
    print(f"hermes team: draining ({tenants.in_flight} requests in flight, at most {seconds} s)",
          file=sys.stderr, flush=True)
    with anyio.move_on_after(seconds):
        await tenants.idle.wait()


def run_team(home: Home, options: TeamServeOptions) -> int:
    interrupts.run(serve_team, home, options, stop_on_signal=True)
    return 0
