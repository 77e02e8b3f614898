"""Where a server lives, asked afresh on every connect: the config, or an app's runtime file.

`ConfiguredEndpoint` returns the URL and headers written in the config. An app-bound server gets a
`LiveEndpoint` source instead, which reads the app's runtime file on every connect (never a cached
or configured URL), registers the token with the redactor before building the `Authorization`
header, and can be watched: its `identity()` changes when the app restarts (new pid, port or
token), and raises `LiveEndpointUnavailable` when the app goes away. Files are read in a worker
thread, so a hostile runtime file can never stall the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

import anyio.to_thread

from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import Host
from hermes.apps.liveness import (
    EndpointNotPublished,
    LiveEndpoint,
    LiveEndpointUnavailable,
    fill_runtime,
    resolve_live_endpoint,
)
from hermes.config.resolve import ResolvedServer
from hermes.security.redact import Redactor

Identity = tuple[str, int, str | None]
# How long an app may run before it is expected to have published its runtime file.
PUBLISH_GRACE = 10.0


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
    async def prepare(self, server: ResolvedServer) -> tuple[ResolvedServer, Endpoint | None]:
        """The server as it starts now, and where it answers over HTTP (None for a stdio server
        without an app endpoint; an app endpoint's `identity` matters to a stdio bridge too)."""
        ...


class ConfiguredEndpoint:
    """The URL and headers written in the config (after `${VAR}` interpolation)."""

    async def prepare(self, server: ResolvedServer) -> tuple[ResolvedServer, Endpoint | None]:
        return server, Endpoint(server.url, dict(server.headers)) if server.url is not None else None


class LiveEndpointSource:
    """An app's runtime file: the only endpoint trusted for an app-bound server."""

    def __init__(self, server: str, spec: LivenessSpec, host: Host, redactor: Redactor,
                 app_path: str | None = None, *, app_name: str | None = None,
                 publish_grace: float = PUBLISH_GRACE) -> None:
        self.server = server
        self.spec = spec
        self.host = host
        self.redactor = redactor
        self.app_path = app_path
        self.app_name = app_name or server
        self.publish_grace = publish_grace
        self._unpublished_since: float | None = None

    def _read(self) -> LiveEndpoint:
        try:
            live = resolve_live_endpoint(self.server, self.spec, self.host, app_path=self.app_path)
        except EndpointNotPublished as exc:
            # An app needs a moment after it starts to write its file; one that runs for longer
            # without it has its bridge switched off (some builds ship it disabled).
            now = time.monotonic()
            self._unpublished_since = self._unpublished_since or now
            if now - self._unpublished_since < self.publish_grace:
                raise
            raise LiveEndpointUnavailable(
                self.server, exc.state, f"{self.app_name} is running but has not published its endpoint; "
                                        f"enable the bridge in its settings") from None
        self._unpublished_since = None
        if live.token:
            self.redactor.register(live.token)
        return live

    async def current(self) -> LiveEndpoint:
        """Raises `LiveEndpointUnavailable`; never falls back to a configured URL."""
        return await anyio.to_thread.run_sync(self._read)

    async def identity(self) -> Identity:
        return (await self.current()).identity

    async def fill(self, server: ResolvedServer) -> tuple[ResolvedServer, LiveEndpoint]:
        """The server with every `${runtime.*}` in its args, env and headers filled from the runtime
        file, read now (its token is registered with the redactor before anything uses it)."""
        live = await self.current()

        def sub(text: str) -> str:
            return fill_runtime(text, live)

        return replace(server, args=tuple(sub(a) for a in server.args),
                       env={k: sub(v) for k, v in server.env.items()},
                       headers={k: sub(v) for k, v in server.headers.items()}), live

    async def prepare(self, server: ResolvedServer) -> tuple[ResolvedServer, Endpoint | None]:
        # The runtime file is read once, now: an app-bound server starts only while the app's
        # endpoint is live, and a stdio bridge gets the app's current port and token.
        filled, live = await self.fill(server)
        return filled, self.endpoint_for(filled, live)

    @staticmethod
    def endpoint_for(server: ResolvedServer, live: LiveEndpoint) -> Endpoint:
        """The app's MCP endpoint: its URL, and its token as the only `Authorization`."""
        headers = {k: v for k, v in server.headers.items() if k.lower() != "authorization"}
        if live.token:
            headers["Authorization"] = f"Bearer {live.token}"
        return Endpoint(live.url, headers, identity=live.identity)
