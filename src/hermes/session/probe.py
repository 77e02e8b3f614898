"""Probing one server: a single connection attempt, reported with timings and the exact failure.

Used by `hermes mcp test`, `hermes mcp configure` and `hermes mcp install` (which is handed
`probe_server` by the CLI: the catalog sits below the session and never imports it).
"""

from __future__ import annotations

import anyio

from hermes.home import Home
from hermes.mcp.connection import RestartPolicy
from hermes.session.core import Session, SessionSettings
from hermes.session.status import ProbedTool, ProbeReport
from hermes.tools.filters import tool_allowed

PROBE = SessionSettings(include_disabled=True, policy=RestartPolicy(attempts=0))


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0]


async def probe(home: Home, name: str) -> ProbeReport:
    settings = SessionSettings(only=frozenset({name}), include_disabled=PROBE.include_disabled, policy=PROBE.policy)
    async with Session(home, settings) as session:
        connection = session.connections()[name]
        transport, state = connection.config.transport_name, connection.state
        if not connection.connected:
            return ProbeReport(name, transport, False, state, reason=session.redactor(connection.reason),
                               stderr_tail=session.redactor(connection.stderr_tail))
        info = connection.server_info
        return ProbeReport(
            name, transport, True, state,
            server_info=session.redactor(f"{info.name} {info.version}".strip()) if info else None,
            connect_ms=round((connection.connect_seconds or 0) * 1000, 1),
            tools=[ProbedTool(t.name, first_line(t.description), tool_allowed(t.name, connection.config.tools))
                   for t in connection.tools],
            warnings=list(session.warnings))


def probe_server(home: Home, name: str) -> ProbeReport:
    return anyio.run(probe, home, name)
