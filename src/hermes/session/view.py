"""What the session's parts (calls, upstream, status) read of the session: one small protocol.

The parts are built by `Session` and handed the session itself; typing them against this view
instead of the class keeps the imports pointing one way (core -> parts) and says exactly what
each part depends on.
"""

from __future__ import annotations

from typing import Protocol

from hermes.apps.status import AppStatus
from hermes.config.model import ServerConfig
from hermes.home import Home
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.security.redact import Redactor
from hermes.session.lifecycle import Lifecycle
from hermes.tools.pins import ChangedTool
from hermes.tools.surface import Surface
from hermes.tools.unavailable import Unavailable


class SessionView(Protocol):
    home: Home
    redactor: Redactor
    lifecycle: Lifecycle

    @property
    def platform(self) -> str | None: ...

    def surface(self) -> Surface: ...

    def snapshots(self) -> dict[str, ConnectionSnapshot]: ...

    def server_config(self, name: str) -> ServerConfig | None: ...

    def source_of(self, name: str) -> str: ...

    def platform_servers(self) -> set[str]: ...

    def why(self, name: str) -> Unavailable | AppStatus: ...

    def held_back(self) -> list[ChangedTool]:
        """Tools whose definitions changed since they were pinned (kept from the model until accepted)."""
