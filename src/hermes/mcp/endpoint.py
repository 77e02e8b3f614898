"""Where a server lives, asked afresh on every connect: the config, or an app's runtime file.

`ConfiguredEndpoint` returns the URL and headers written in the config. An app-bound server gets a
`LiveEndpointSource` instead, which reads the app's runtime file on every connect (never a cached
or configured URL), registers the token with the redactor before building the `Authorization`
header, and can be watched: `look()` gives the app's identity (which changes when the app
restarts: new pid, port or token) and the facts seen, also when the file is not usable. Files are
read in a worker thread, so a hostile runtime file can never stall the event loop.
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
    AppFacts,
    Finding,
    LiveEndpoint,
    LiveEndpointUnavailable,
    fill_runtime,
    resolve_live_endpoint,
)
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
    async def prepare(self, server: ResolvedServer) -> tuple[ResolvedServer, Endpoint | None]:
        """The server as it starts now, and where it answers over HTTP (None for a stdio server
        without an app endpoint; an app endpoint's `identity` matters to a stdio bridge too)."""
        ...


class ConfiguredEndpoint:
    """The URL and headers written in the config (after `${VAR}` interpolation)."""

    async def prepare(self, server: ResolvedServer) -> tuple[ResolvedServer, Endpoint | None]:
        return server, Endpoint(server.url, dict(server.headers)) if server.url is not None else None


class LiveEndpointSource:
    """An app's runtime file: the only endpoint trusted for an app-bound server.

    Besides reading the file, it remembers what one look alone cannot tell: since when the app has
    been running without publishing its file, and whether the process the last file named is still
    alive after the file went away (an app that quit normally removes its file).
    """

    def __init__(self, server: str, spec: LivenessSpec, host: Host, redactor: Redactor,
                 app_path: str | None = None) -> None:
        self.server = server
        self.spec = spec
        self.host = host
        self.redactor = redactor
        self.app_path = app_path
        self._unpublished_since: float | None = None
        self._last_pid: int | None = None

    def _read(self) -> LiveEndpoint:
        try:
            live = resolve_live_endpoint(self.server, self.spec, self.host, app_path=self.app_path)
        except LiveEndpointUnavailable as exc:
            raise LiveEndpointUnavailable(self.server, self._remembered(exc.facts)) from None
        self._unpublished_since = None
        self._last_pid = live.pid
        if live.token:
            self.redactor.register(live.token)
        return live

    def _remembered(self, facts: AppFacts) -> AppFacts:
        if facts.finding is not Finding.FILE_MISSING:
            self._unpublished_since = None
            return facts
        if facts.app_running:
            self._unpublished_since = self._unpublished_since or time.monotonic()
            facts = replace(facts, unpublished_since=self._unpublished_since)
        else:
            self._unpublished_since = None
        if self._last_pid is not None:
            facts = replace(facts, last_pid_alive=self.host.pid_alive(self._last_pid))
        return facts

    async def look(self) -> tuple[Identity | None, AppFacts]:
        """One look at the runtime file: the app's identity when it is live, and what was seen."""
        try:
            live = await self.current()
        except LiveEndpointUnavailable as exc:
            return None, exc.facts
        return live.identity, AppFacts(Finding.LIVE, f"runtime file {live.runtime_file}: live (pid {live.pid})")

    async def current(self) -> LiveEndpoint:
        """Raises `LiveEndpointUnavailable`; never falls back to a configured URL."""
        return await anyio.to_thread.run_sync(self._read)

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
