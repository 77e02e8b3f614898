"""Typed reports about a session's servers: one row of `hermes mcp status`, one probe.

Both travel as JSON (`--json`, the control endpoint); a status row from another process is read back
with `ServerStatus.from_json`, so a wrong key is a type error here instead of a `KeyError` in a printer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from hermes.apps.states import AppState
from hermes.mcp.states import ConnectionState

if TYPE_CHECKING:
    from hermes.session.lifecycle import Lifecycle
    from hermes.tools.surface import Surface


@dataclass(frozen=True)
class ServerStatus:
    name: str
    source: str
    transport: str
    state: ConnectionState | AppState  # the connection's, or the app's when the app is why it is down
    tools: int  # tools of this server on the surface
    tools_offered: int  # tools the server offered (before filters)
    restarts: int
    pid: int | None
    connect_ms: float | None
    on_platform: bool
    unavailable: dict[str, Any] | None = None  # the payload a model gets when calling its tools
    app: dict[str, Any] | None = None  # {name, availability} for an app-bound server
    protocol: str = ""  # the MCP revision a connected server speaks
    sandbox: str = ""  # how a stdio server's sandbox stands

    @property
    def why_unavailable(self) -> str:
        return str(self.unavailable.get("error", "")) if self.unavailable else ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["state"] = self.state.value
        for optional in ("unavailable", "app"):
            if data[optional] is None:
                del data[optional]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ServerStatus:
        def number(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        def optional_dict(key: str) -> dict[str, Any] | None:
            value = data.get(key)
            return value if isinstance(value, dict) else None

        pid = data.get("pid")
        connect_ms = data.get("connect_ms")
        return cls(str(data.get("name", "?")), str(data.get("source", "")), str(data.get("transport", "")),
                   _state(data.get("state")), number("tools"), number("tools_offered"), number("restarts"),
                   pid if isinstance(pid, int) else None,
                   float(connect_ms) if isinstance(connect_ms, (int, float)) else None,
                   bool(data.get("on_platform", True)), optional_dict("unavailable"), optional_dict("app"))


def _state(value: Any) -> ConnectionState | AppState:
    text = str(value)
    if text in ConnectionState.__members__.values():
        return ConnectionState(text)
    if text in AppState.__members__.values():
        return AppState(text)
    return ConnectionState.FAILED  # an answer from another version of hermes we cannot read


@dataclass(frozen=True)
class ProbedTool:
    name: str
    description: str  # its first line
    selected: bool  # allowed by the server's tools.include/exclude


@dataclass(frozen=True)
class ProbeReport:
    """One connection attempt to one server: what `hermes mcp test` shows."""

    name: str
    transport: str
    ok: bool
    state: ConnectionState
    server_info: str | None = None
    connect_ms: float | None = None
    tools: list[ProbedTool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    reason: str | None = None
    stderr_tail: str | None = None
    sandbox: str = ""  # how a stdio server's sandbox stood ("on (network none)", "off (…)")
    protocol: str = ""  # the MCP revision the connection spoke
    denials: list[str] = field(default_factory=list)  # what its sandbox refused it during the attempt

    @property
    def selected(self) -> int:
        return sum(1 for tool in self.tools if tool.selected)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "transport": self.transport, "ok": self.ok,
                                "state": self.state.value}
        if self.ok:
            data |= {"server_info": self.server_info, "connect_ms": self.connect_ms, "protocol": self.protocol,
                     "tools": [asdict(t) for t in self.tools], "selected": self.selected, "warnings": self.warnings}
        else:
            data |= {"reason": self.reason, "stderr_tail": self.stderr_tail}
        if self.sandbox:
            data |= {"sandbox": self.sandbox, "sandbox_denials": self.denials}
        return data


def status_rows(servers: Lifecycle, surface: Surface) -> list[ServerStatus]:
    """One row per server: state, tools on `surface`, last error, why unavailable."""
    from hermes.apps.status import AppStatus

    allowed = servers.platform_servers()
    rows: list[ServerStatus] = []
    for name, snapshot in servers.snapshots().items():
        state: ConnectionState | AppState = snapshot.state
        unavailable: dict[str, Any] | None = None
        if not snapshot.offers_tools:
            missing = servers.why(name)
            unavailable = missing.payload()
            if isinstance(missing, AppStatus):
                state = missing.state
        desired = servers.desired.get(name)
        app: dict[str, Any] | None = None
        if desired is not None and desired.declaration is not None:
            gate = servers.gates.get(name)
            app = {"name": desired.app_name or name, "availability": gate.availability.describe() if gate else None}
        seconds = snapshot.connect_seconds
        rows.append(ServerStatus(
            name=name, source=servers.source_of(name),
            transport=desired.config.transport_name if desired else "unknown", state=state,
            tools=len(surface.for_server(name)), tools_offered=len(snapshot.tools), restarts=snapshot.restarts,
            pid=snapshot.pid if snapshot.connected else None,
            connect_ms=round(seconds * 1000, 1) if seconds else None, on_platform=name in allowed,
            unavailable=unavailable, app=app, protocol=snapshot.protocol if snapshot.connected else "",
            sandbox=snapshot.sandbox))
    return rows
