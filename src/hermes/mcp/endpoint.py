"""The endpoint-resolver seam: where an HTTP server lives, asked afresh on every connect.

The default resolver returns the configured URL and headers. App-bound servers plug in a resolver
that reads the app's runtime file instead, so a reconnect always goes to the app's current port
with its current token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes.config.resolve import ResolvedServer


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    # What identifies this endpoint's current incarnation (an app's pid, port and token); a change
    # means the server behind it restarted and the connection must be made again.
    identity: Any = None

    def __repr__(self) -> str:
        # Header values are credentials; never let them reach a log line or a traceback.
        return f"Endpoint(url={self.url!r}, headers=<{len(self.headers)} hidden>)"


class EndpointResolver(Protocol):
    async def resolve(self, server: ResolvedServer) -> Endpoint: ...


class ConfiguredEndpoint:
    """The URL and headers written in the config (after `${VAR}` interpolation)."""

    async def resolve(self, server: ResolvedServer) -> Endpoint:
        assert server.url is not None
        return Endpoint(server.url, dict(server.headers))
