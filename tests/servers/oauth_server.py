"""A protected MCP server and its OAuth 2.1 authorization server, built with the SDK's server auth.

Usage: oauth_server.py PORTFILE [--client ID:SECRET] [--ttl SECONDS]
Dynamic client registration is on; a pre-registered client may be added. Refresh tokens rotate:
each one works once. The authorize step approves at once (the 'user' always consents) and
redirects to the client's redirect URI with the code and state.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import time

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

parser = argparse.ArgumentParser()
parser.add_argument("portfile")
parser.add_argument("--client")
parser.add_argument("--ttl", type=int, default=3600)
parser.add_argument("--redirect-port", type=int, default=1, help="the pre-registered client's callback port")
options = parser.parse_args()


class Provider:
    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[str(client_info.client_id)] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["mcp"], expires_at=time.time() + 300, client_id=str(client.client_id),
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(16)}", f"rt-{secrets.token_urlsafe(16)}"
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + options.ttl, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=options.ttl, refresh_token=refresh,
                          scope=" ".join(scopes))

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(str(client.client_id), authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotation: a refresh token works once
        return self._issue(str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


async def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    if options.client:
        client_id, _, secret = options.client.partition(":")
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, client_secret=secret or None, redirect_uris=[f"http://127.0.0.1:{options.redirect_port}/callback"],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="client_secret_post" if secret else "none", scope="mcp")
    server = MCPServer("protected", auth_server_provider=provider, auth=AuthSettings(
        issuer_url=base, resource_server_url=f"{base}/mcp", required_scopes=["mcp"],
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["mcp"],
                                                               default_scopes=["mcp"])))

    @server.tool(description="Say who is asking.")
    def whoami() -> str:
        return "an authorized client"

    app = server.streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(web.serve([sock]))
    while not web.started:
        await asyncio.sleep(0.01)
    with open(options.portfile + ".tmp", "w") as handle:
        handle.write(str(port))
    os.replace(options.portfile + ".tmp", options.portfile)
    await task


if __name__ == "__main__":
    asyncio.run(main())
