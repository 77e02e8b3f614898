"""What the rest of hermes may do with one server's supervisor: the seam between a session and
the processes and connections it runs.

`ServerConnection` is the one that runs servers; `tests/supervisors.py` holds an in-memory one,
so the rules built on top (calls, the tool surface, upstream resources) are tested without a
process. Everything a reader needs is in the published `snapshot`, replaced whole on each change.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import mcp_types as types

from hermes.mcp.requests import UpstreamRequest
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.mcp.tasks import Progress

T = TypeVar("T")


class Supervisor(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def snapshot(self) -> ConnectionSnapshot:
        """The latest published state, tools and capabilities (`ServerNotConnected` explains a missing one)."""
        ...

    async def call(self, tool: str, arguments: dict[str, Any], *,
                   on_progress: Progress | None = None) -> types.CallToolResult:
        """Call one tool; raises `ServerNotConnected` when there is no connection to call it on."""
        ...

    async def request(self, request: UpstreamRequest[T]) -> T:
        """Resources, prompts and completions (see `hermes.mcp.requests`)."""
        ...

    async def look_at_app(self) -> None:
        """Look at an app-bound server's runtime file now (before saying why its tools are missing)."""
        ...

    async def roots_changed(self) -> None:
        """Tell the server the client's roots changed."""
        ...

    def stop(self) -> None:
        """Stop for good; the supervisor's task ends once the process is gone."""
        ...

    def revive(self) -> bool:
        """A failed or parked server's fresh start; True if it was waiting for one."""
        ...
