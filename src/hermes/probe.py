"""Probing one server: a single connection attempt, reported with timings and the exact failure.

Used by `hermes mcp test`, `hermes mcp configure` and `hermes mcp install`.
"""

from __future__ import annotations

from typing import Any

import anyio

from hermes.home import Home
from hermes.mcp.connection import RestartPolicy
from hermes.session import Session
from hermes.tools.filters import tool_allowed


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0]


def probe_server(home: Home, name: str) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with Session(home, only={name}, ignore_disabled=True,
                           policy=RestartPolicy(attempts=0)) as session:
            connection = session.connections()[name]
            report: dict[str, Any] = {
                "name": name,
                "transport": connection.config.transport_name,
                "ok": connection.connected,
                "state": connection.state.value,
            }
            if connection.connected:
                info = connection.server_info
                report["server_info"] = f"{info.name} {info.version}".strip() if info else None
                report["connect_ms"] = round((connection.connect_seconds or 0) * 1000, 1)
                tools = [{"name": t.name, "description": first_line(t.description),
                          "selected": tool_allowed(t.name, connection.config.tools)} for t in connection.tools]
                report["tools"] = tools
                report["selected"] = sum(1 for t in tools if t["selected"])
                report["warnings"] = session.warnings
            else:
                report["reason"] = session.redactor(connection.reason)
                report["stderr_tail"] = session.redactor(connection.stderr_tail)
            return report

    return anyio.run(run)
