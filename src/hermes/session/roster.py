"""What the session's parts (calls, the tool surface, upstream resources) read of the server set:
one small protocol, which `Lifecycle` is.

Typed against this instead of the session, each part says exactly what it depends on, and its
rules are tested against a roster of in-memory supervisors (`tests/supervisors.py`) without a
process.
"""

from __future__ import annotations

from typing import Protocol

from hermes.apps.status import AppStatus
from hermes.config.agent_settings import Permissions
from hermes.config.model import ServerConfig
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.mcp.supervisor import Supervisor
from hermes.tools.unavailable import Unavailable


class Roster(Protocol):
    @property
    def platform(self) -> str | None: ...

    def snapshots(self) -> dict[str, ConnectionSnapshot]:
        """Every server's latest snapshot, by name (sorted)."""
        ...

    def supervisor(self, name: str) -> Supervisor | None: ...

    def server_config(self, name: str) -> ServerConfig | None: ...

    def permissions(self) -> Permissions:
        """config.yaml's top-level `permissions:` (allow / ask / deny across servers)."""
        ...

    def app_bound(self, name: str) -> bool:
        """Whether the server is a plugin's, bound to a desktop app."""
        ...

    def platform_servers(self) -> set[str]:
        """The servers whose tools this session's platform gets."""
        ...

    def why(self, name: str) -> Unavailable | AppStatus:
        """Why a server offers no tools now."""
        ...
