"""Probing one server: a single connection attempt, reported with timings and the exact failure.

Used by `hermes mcp test`, `hermes mcp configure` and `hermes mcp install` (which is handed
`probe_server` by the CLI: the catalog sits below the session and never imports it).
"""

from __future__ import annotations

from hermes import interrupts
from hermes.config.model import ServerConfig
from hermes.errors import NoSuchServer
from hermes.home import Home
from hermes.mcp.connection import RestartPolicy
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.session.core import Session, SessionSettings
from hermes.session.status import ProbedTool, ProbeReport
from hermes.tools.filters import tool_allowed

PROBE = SessionSettings(include_disabled=True, policy=RestartPolicy(attempts=0))


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0]


async def probe(home: Home, name: str) -> ProbeReport:
    settings = SessionSettings(only=frozenset({name}), include_disabled=PROBE.include_disabled, policy=PROBE.policy)
    async with Session(home, settings) as session:
        snapshot = session.snapshots().get(name)
        config = session.server_config(name)
        if snapshot is not None and config is not None:
            return _report(session, name, snapshot, config)
    # The CLI checks the name first; the dashboard's forms may name anything. Raised out here: inside,
    # the session's task group would wrap it.
    raise NoSuchServer(name)


def _report(session: Session, name: str, snapshot: ConnectionSnapshot, config: ServerConfig) -> ProbeReport:
    transport, state = config.transport_name, snapshot.state
    sandbox, denials = snapshot.sandbox, list(snapshot.denials)
    if not snapshot.connected:
        return ProbeReport(name, transport, False, state, reason=session.redactor(snapshot.reason),
                           stderr_tail=session.redactor(snapshot.stderr_tail), sandbox=sandbox, denials=denials)
    info = snapshot.server_info
    return ProbeReport(
        name, transport, True, state, sandbox=sandbox, denials=denials, protocol=snapshot.protocol,
        server_info=session.redactor(f"{info.name} {info.version}".strip()) if info else None,
        connect_ms=round((snapshot.connect_seconds or 0) * 1000, 1),
        tools=[ProbedTool(t.name, first_line(t.description), tool_allowed(t.name, config.tools))
               for t in snapshot.tools],
        warnings=list(session.warnings))


def probe_server(home: Home, name: str) -> ProbeReport:
    return interrupts.run(probe, home, name)
