"""Where a server lives, asked afresh on every connect: the config, or an app's runtime file.

`ConfiguredEndpoint` returns the URL and headers written in the config. An app-bound server gets a
`LiveEndpoint` source instead, which reads the app's runtime file on every connect (never a cached
or configured URL), registers the token with the redactor before building the `Authorization`
header, and can be watched: its `identity()` changes when the app restarts (new pid, port or
token), and raises `LiveEndpointUnavailable` when the app goes away. Files are read in a worker
thread, so a hostile runtime file can never stall the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import anyio.to_thread

from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import Host
from hermes.apps.liveness import LiveEndpoint, resolve_live_endpoint
from hermes.config.resolve import ResolvedServer
from hermes.security.redact import Redactor

Identity = tuple[str, int, str | None]


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    # The incarnation of the app behind an app-bound endpoint (url, pid, token); None otherwise.
    identity: Identity | None = None

    def __repr__(self) -> str:
        # Header values are credentials; never let them reach a log line or a traceback.
        return f"Endpoint(url={self.url!r}, headers=<{len(self.headers)} hidden>)"


class EndpointSource(Protocol):
    async def resolve(self, server: ResolvedServer) -> Endpoint: ...


class ConfiguredEndpoint:
    """The URL and headers written in the config (after `${VAR}` interpolation)."""

    async def resolve(self, server: ResolvedServer) -> Endpoint:
        assert server.url is not None
        return Endpoint(server.url, dict(server.headers))


class LiveEndpointSource:
    """An app's runtime file: the only endpoint trusted for an app-bound server."""

    def __init__(self, server: str, spec: LivenessSpec, host: Host, redactor: Redactor,
                 app_path: str | None = None) -> None:
        self.server = server
        self.spec = spec
        self.host = host
        self.redactor = redactor
        self.app_path = app_path

    def _read(self) -> LiveEndpoint:
        live = resolve_live_endpoint(self.server, self.spec, self.host, app_path=self.app_path)
        if live.token:
            self.redactor.register(live.token)
        return live

    async def current(self) -> LiveEndpoint:
        """Raises `LiveEndpointUnavailable`; never falls back to a configured URL."""
        return await anyio.to_thread.run_sync(self._read)

    async def identity(self) -> Identity:
        return (await self.current()).identity

    async def resolve(self, server: ResolvedServer) -> Endpoint:
        live = await self.current()
        headers = {k: v for k, v in server.headers.items() if k.lower() != "authorization"}
        if live.token:
            headers["Authorization"] = f"Bearer {live.token}"
        return Endpoint(live.url, headers, identity=live.identity)
