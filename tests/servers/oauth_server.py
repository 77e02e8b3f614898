"""A protected MCP server and its OAuth 2.1 authorization server, built with the SDK's server auth.

Usage: oauth_server.py PORTFILE [--client ID:SECRET [--client-auth basic|post]] [--step-up SCOPE]
                       [--legacy] [--ttl SECONDS]
Dynamic client registration is on; a pre-registered client may be added (it authenticates at the
token endpoint with HTTP Basic unless --client-auth says otherwise; with --client-auth the metadata
advertises only that method). --legacy makes a 2025-03-26 server: no protected resource metadata
(404) and a bare 401 challenge, so a client finds the authorization server at the origin.
--step-up: the tool `write` needs SCOPE besides `mcp`, and a token without it gets 403
insufficient_scope (a sign-in asks for `mcp` alone). Refresh tokens rotate: each one works once.
The authorize step approves at once (the 'user' always consents) and redirects to the client's
redirect URI with the code and state.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from starlette.types import ASGIApp, Message, Receive, Scope, Send

parser = argparse.ArgumentParser()
parser.add_argument("portfile")
parser.add_argument("--client")
parser.add_argument("--client-auth", choices=["basic", "post"])
parser.add_argument("--step-up")
parser.add_argument("--legacy", action="store_true", help="a 2025-03-26 server: no protected resource metadata")
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
        # Any client may later ask for any scope this server knows (a step-up needs more than the first sign-in).
        known = ["mcp", options.step_up] if options.step_up else ["mcp"]
        self.clients[str(client_info.client_id)] = client_info.model_copy(update={"scope": " ".join(known)})

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


class AdvertisedAuth:
    """With --client-auth, the authorization server's metadata lists only that method."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not options.client_auth or scope["type"] != "http" or \
                not scope["path"].startswith("/.well-known/oauth-authorization-server"):
            await self.app(scope, receive, send)
            return
        parts: list[Message] = []

        async def keep(message: Message) -> None:
            parts.append(message)

        await self.app(scope, receive, keep)
        start, body = parts[0], b"".join(m.get("body", b"") for m in parts[1:])
        metadata = json.loads(body)
        metadata["token_endpoint_auth_methods_supported"] = [f"client_secret_{options.client_auth}"]
        body = json.dumps(metadata).encode()
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class Legacy:
    """With --legacy, what a 2025-03-26 server shows: no resource metadata, a bare Bearer challenge."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not options.legacy or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"].startswith("/.well-known/oauth-protected-resource"):
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def bare_challenge(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"www-authenticate"]
                message = {**message, "headers": [*headers, (b"www-authenticate", b"Bearer")]}
            await send(message)

        await self.app(scope, receive, bare_challenge)


class StepUp:
    """With --step-up, calling `write` without the step-up scope is answered 403 insufficient_scope."""

    def __init__(self, app: ASGIApp, provider: Provider, base: str) -> None:
        self.app, self.provider, self.base = app, provider, base

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not options.step_up or scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        token = dict(scope["headers"]).get(b"authorization", b"").decode().removeprefix("Bearer ")
        granted = self.provider.access.get(token)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        wants_write = isinstance(request, dict) and request.get("method") == "tools/call" and \
            (request.get("params") or {}).get("name") == "write"
        if wants_write and granted is not None and options.step_up not in granted.scopes:
            challenge = (f'Bearer error="insufficient_scope", scope="mcp {options.step_up}", '
                         f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"')
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def main() -> None:
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stall on keep-alive answers
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
            token_endpoint_auth_method=f"client_secret_{options.client_auth or 'basic'}" if secret else "none",
            scope="mcp")
    scopes = ["mcp", options.step_up] if options.step_up else ["mcp"]
    server = MCPServer("protected", auth_server_provider=provider, auth=AuthSettings(
        issuer_url=base, resource_server_url=f"{base}/mcp", required_scopes=["mcp"],
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=scopes,
                                                               default_scopes=["mcp"])))

    @server.tool(description="Say who is asking.")
    def whoami() -> str:
        return "an authorized client"

    @server.tool(description="Change something; needs the step-up scope when there is one.")
    def write() -> str:
        return "written"

    app = StepUp(Legacy(AdvertisedAuth(server.streamable_http_app())), provider, base)
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
