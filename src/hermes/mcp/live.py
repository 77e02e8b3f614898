"""The endpoint resolver for app-bound servers: the app's runtime file, read on every connect.

It plugs into the connection's resolver seam. The token found in the file is registered with the
redactor before the `Authorization` header is built from it; a configured Authorization header
is dropped (the app's token is the only credential for its endpoint); no token, no header.
"""

from __future__ import annotations

from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import Host
from hermes.apps.liveness import LiveEndpoint, resolve_live_endpoint
from hermes.config.resolve import ResolvedServer
from hermes.mcp.endpoint import Endpoint
from hermes.security.redact import Redactor


class LiveEndpointResolver:
    def __init__(self, server: str, spec: LivenessSpec, host: Host, redactor: Redactor,
                 app_path: str | None = None) -> None:
        self.server = server
        self.spec = spec
        self.host = host
        self.redactor = redactor
        self.app_path = app_path

    def current(self) -> LiveEndpoint:
        """Raises `LiveEndpointUnavailable`; never falls back to a configured URL."""
        live = resolve_live_endpoint(self.server, self.spec, self.host, app_path=self.app_path)
        if live.token:
            self.redactor.register(live.token)
        return live

    def identity(self) -> tuple[str, int, str | None]:
        return self.current().identity

    async def resolve(self, server: ResolvedServer) -> Endpoint:
        live = self.current()
        headers = {k: v for k, v in server.headers.items() if k.lower() != "authorization"}
        if live.token:
            headers["Authorization"] = f"Bearer {live.token}"
        return Endpoint(live.url, headers, identity=live.identity)
