"""In-memory supervisors and a roster of them: the session's rules (calls, the tool surface,
upstream resources) tested without a process. Each fake answers from tables the test fills.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import mcp_types as types

from hermes.apps.status import AppStatus
from hermes.config.agent_settings import Permissions
from hermes.config.model import ServerConfig
from hermes.mcp.requests import UpstreamRequest
from hermes.mcp.snapshot import ConnectionSnapshot, ServerNotConnected
from hermes.mcp.states import ConnectionState
from hermes.mcp.supervisor import Supervisor
from hermes.mcp.tasks import Progress
from hermes.tools.unavailable import Unavailable

T = TypeVar("T")
Answer = Callable[[dict[str, Any]], types.CallToolResult]


def text_result(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def tool(name: str, description: str = "") -> types.Tool:
    return types.Tool(name=name, description=description or f"The {name} tool.", input_schema={"type": "object"})


class FakeSupervisor:
    """A server that is connected (or not) and answers calls from `answers` (tool -> function)."""

    def __init__(self, name: str, tools: list[types.Tool], answers: dict[str, Answer] | None = None,
                 state: ConnectionState = ConnectionState.CONNECTED, reason: str = "") -> None:
        self.name = name
        caps = types.ServerCapabilities(tools=types.ToolsCapability())
        self.snapshot = ConnectionSnapshot(name, state, reason=reason, tools=tuple(tools), capabilities=caps)
        self.answers = answers or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.looked_at_app = 0
        self.raises: BaseException | None = None

    async def call(self, tool: str, arguments: dict[str, Any], *,
                   on_progress: Progress | None = None) -> types.CallToolResult:
        if not self.snapshot.connected:
            raise ServerNotConnected(self.name, self.snapshot.state, self.snapshot.reason)
        self.calls.append((tool, arguments))
        if self.raises is not None:
            raise self.raises
        return self.answers[tool](arguments)

    async def request(self, request: UpstreamRequest[T]) -> T:
        raise ServerNotConnected(self.name, self.snapshot.state, "the fake offers no resources")

    async def look_at_app(self) -> None:
        self.looked_at_app += 1

    async def roots_changed(self) -> None:
        return None

    def stop(self) -> None:
        self.snapshot = replace(self.snapshot, state=ConnectionState.STOPPED)

    def revive(self) -> bool:
        return False


@dataclass
class FakeRoster:
    """The server set as the session's parts read it, from in-memory supervisors."""

    supervisors: dict[str, FakeSupervisor] = field(default_factory=dict)
    configs: dict[str, ServerConfig] = field(default_factory=dict)
    platform: str | None = None
    on_platform: set[str] | None = None  # None: every server
    rules: Permissions = field(default_factory=Permissions)

    def add(self, supervisor: FakeSupervisor, config: ServerConfig | None = None) -> FakeSupervisor:
        self.supervisors[supervisor.name] = supervisor
        self.configs[supervisor.name] = config or ServerConfig(command="fake")
        return supervisor

    def snapshots(self) -> dict[str, ConnectionSnapshot]:
        return {name: s.snapshot for name, s in sorted(self.supervisors.items())}

    def supervisor(self, name: str) -> Supervisor | None:
        return self.supervisors.get(name)

    def server_config(self, name: str) -> ServerConfig | None:
        return self.configs.get(name)

    def permissions(self) -> Permissions:
        return self.rules

    def app_bound(self, name: str) -> bool:
        return False

    def platform_servers(self) -> set[str]:
        return set(self.supervisors) if self.on_platform is None else set(self.on_platform)

    def why(self, name: str) -> Unavailable | AppStatus:
        snapshot = self.supervisors[name].snapshot
        return Unavailable(name, snapshot.state, snapshot.reason)
