"""The typed seam between a server's supervisor and everyone else: an immutable snapshot.

A supervisor publishes a new `ConnectionSnapshot` whenever anything about its server changes
(state, tools, the app behind it) and calls its owner's `on_change`. Readers outside `hermes.mcp`
see only snapshots; the supervisor's own mutable state stays inside it. Everything in a snapshot
that came from a server or a runtime file was redacted before it was published.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mcp_types as types

from hermes.apps.liveness import AppFacts
from hermes.errors import HermesError
from hermes.mcp.states import OFFERING_TOOLS, ConnectionState


@dataclass(frozen=True)
class ConnectionSnapshot:
    name: str
    state: ConnectionState
    reason: str = ""  # why it is not connected (the last failure), in the user's terms
    stderr_tail: str = ""  # the last lines a stdio server wrote before it failed
    tools: tuple[types.Tool, ...] = ()  # as the server last listed them (unfiltered)
    capabilities: types.ServerCapabilities | None = None
    server_info: types.Implementation | None = None
    connect_seconds: float | None = None  # spawn (or open) to tools listed, of the current connection
    restarts: int = 0
    attempts: int = 0  # connection attempts that connected or failed so far
    pid: int | None = None  # the stdio child of the current connection
    live_pid: int | None = None  # for an app-bound server: the app process the connection goes to
    app_bound: bool = False  # the endpoint comes from an app's runtime file
    app: AppFacts | None = None  # the last look at the app's runtime file (app-bound servers)
    protocol: str = ""  # the MCP revision the connection speaks ("2026-07-28", "2025-11-25", ...)
    sandbox: str = ""  # how the stdio server's sandbox stands, in words ("on (network none)", "off (…)")
    denials: tuple[str, ...] = ()  # what its sandbox refused it, each as a sentence for the user
    # Every call asks for its tool's definition (does it run as a task?): by name, not by a scan of
    # a list that some servers make hundreds long. The first of two same-named tools, as listed.
    _by_name: dict[str, types.Tool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {tool.name: tool for tool in reversed(self.tools)})

    @property
    def connected(self) -> bool:
        return self.state is ConnectionState.CONNECTED

    @property
    def offers_tools(self) -> bool:
        """Its tools belong on the surface: connected, or idle until the first call starts it."""
        return self.state in OFFERING_TOOLS

    def tool(self, name: str) -> types.Tool | None:
        return self._by_name.get(name)


class ServerNotConnected(HermesError):
    """A request to a server that is not connected; carries why."""

    def __init__(self, server: str, state: ConnectionState, reason: str, stderr_tail: str = "") -> None:
        self.server = server
        self.state = state
        self.reason = reason
        self.stderr_tail = stderr_tail
        super().__init__(f"Server '{server}' is {state.value}: {reason}")
