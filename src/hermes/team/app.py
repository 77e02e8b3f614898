"""The team gateway's HTTP face: one ASGI app in front of every user's tenant.

    /mcp                                     MCP (Streamable HTTP), as the caller's own user
    /.well-known/oauth-protected-resource    RFC 9728 metadata: which issuer signs users in (with OAuth)
    /oauth/callback                          users back from an upstream server's sign-in page
    /healthz                                 alive (a liveness probe)
    /readyz                                  ready: the database answers and the replica is not draining
    /metrics                                 Prometheus

Every `/mcp` request needs `Authorization: Bearer <token>`; without a valid one the answer is 401
with `WWW-Authenticate: Bearer` (and the metadata's address, with OAuth), so a client knows to sign
in. A user whose policy gives them no server gets 403 saying so. The inbound token stops here.
"""

from __future__ import annotations

import html
import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

import anyio

from hermes.config.team_settings import TeamSettings
from hermes.errors import HermesError
from hermes.team.auth import Authenticator
from hermes.team.metrics import Metrics
from hermes.team.signin import CALLBACK_PATH
from hermes.team.store import TeamStore, TeamStoreError
from hermes.team.tenants import Tenants

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

MCP_PATH = "/mcp"
_REFUSED = -32000  # JSON-RPC's range for a server's own errors: refused before any MCP method ran
METADATA_PATH = "/.well-known/oauth-protected-resource"


class TeamApp:
    def __init__(self, team: TeamSettings, store: TeamStore, authenticator: Authenticator, tenants: Tenants,
                 metrics: Metrics) -> None:
        self._team = team
        self._store = store
        self._auth = authenticator
        self._tenants = tenants
        self._metrics = metrics
        self.draining = False
        self.schema_version: int | None = None  # set once the schema is up to date

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        if path == MCP_PATH:
            await self._mcp(scope, receive, send)
        elif path == "/healthz":
            await _answer(send, 200, {"status": "alive"})
        elif path == "/readyz":
            await self._ready(send)
        elif path == "/metrics":
            await _answer(send, 200, self._metrics.text(), content_type="text/plain; version=0.0.4")
        elif path == CALLBACK_PATH:
            await self._signed_in(scope, send)
        elif path in (METADATA_PATH, METADATA_PATH + MCP_PATH) and self._team.oauth is not None:
            await _answer(send, 200, self._resource_metadata())
        else:
            await _answer(send, 404, {"error": f"nothing at {path[:200]}; MCP is at {MCP_PATH}"})

    # -- probes ----------------------------------------------------------------------------------

    async def _ready(self, send: Send) -> None:
        if self.draining:
            await _answer(send, 503, {"status": "draining", "in_flight": self._tenants.in_flight})
            return
        if self.schema_version is None:
            await _answer(send, 503, {"status": "not ready", "reason": "the team database's schema is not "
                                                                       "up to date yet (see the replica's log)"})
            return
        try:
            with anyio.fail_after(2):
                await self._store.ping()
        except (TeamStoreError, TimeoutError) as exc:
            reason = str(exc) if isinstance(exc, TeamStoreError) else "the team database did not answer within 2 s"
            await _answer(send, 503, {"status": "not ready", "reason": reason})
            return
        await _answer(send, 200, {"status": "ready", "users_running": len(self._tenants.running()),
                                  "in_flight": self._tenants.in_flight})

    def _resource_url(self) -> str:
        return self._team.public_url or MCP_PATH

    def _resource_metadata(self) -> dict[str, Any]:
        oauth = self._team.oauth
        assert oauth is not None
        return {"resource": self._resource_url(), "authorization_servers": [oauth.issuer],
                "bearer_methods_supported": ["header"], "resource_name": "hermes team gateway"}

    # -- users back from an upstream server's sign-in page -------------------------------------

    async def _signed_in(self, scope: Scope, send: Send) -> None:
        """The authorization server sends the user here with a code (or an error) and the state of
        their sign-in; the replica running that sign-in picks it up from the database."""
        raw = scope.get("query_string", b"")[:8192].decode("latin-1")
        params = {key: values[0] for key, values in parse_qs(raw).items() if values}
        state = params.get("state", "")
        code, error = params.get("code"), params.get("error")
        known = False
        if state and (code or error):
            try:
                known = await self._store.finish_signin(state[:512], code, (error or "")[:200] or None)
            except TeamStoreError:
                await _page(send, 503, "The gateway cannot reach its database right now; go back and try again.")
                return
        if not known:
            await _page(send, 400, "This sign-in is not known here, or it was finished already.")
            return
        said = "Thank you: hermes is finishing the sign-in" if code else "The sign-in was refused"
        await _page(send, 200, f"{said}. You can close this window and go back to your client.")

    # -- MCP -------------------------------------------------------------------------------------

    def _challenge(self, token_given: bool) -> list[tuple[bytes, bytes]]:
        # RFC 6750: an error code only when a token came and was refused; none for a bare request.
        parts = ['error="invalid_token"'] if token_given else []
        origin = self._team.public_origin
        if self._team.oauth is not None and origin:
            parts.append(f'resource_metadata="{origin}{METADATA_PATH}{MCP_PATH}"')
        return [(b"www-authenticate", ("Bearer " + ", ".join(parts)).strip().encode())]

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _bearer(scope)
        try:
            user = await self._auth.user(token) if token else None
            if user is not None:
                await self._tenants.rules()
        except TeamStoreError:
            await self._status(send, 503, "the team database cannot be reached; try again",
                               [(b"retry-after", b"1")])
            return
        if user is None:
            await self._status(send, 401, "unauthorized: send a team key or an access token from the "
                                          "team's identity provider as Authorization: Bearer",
                               self._challenge(token is not None))
            return
        if self.draining and not self._tenants.serves(user):
            # Not ready any more: a user whose servers do not run here is better served elsewhere.
            await self._status(send, 503, "this replica is stopping; try again (another one answers)",
                               [(b"retry-after", b"1")])
            return
        access = self._tenants.access(user)
        if not access.anything:
            await self._status(send, 403, f"user '{user.name}' may use no server here: the team's "
                                          f"policy names none for them (`hermes team policy set`)")
            return
        try:
            async with self._tenants.using(user, access) as tenant:
                await tenant.app(scope, receive, _counting(send, self._metrics))
        except HermesError as exc:
            # The user's servers could not be started (a config.yaml or .env broken since the
            # replica started, a credential that needs the team key): said, never a traceback.
            said = f"hermes team: {user.name}'s servers cannot start: {exc}"
            print(said, file=sys.stderr, flush=True)
            await self._status(send, 503, f"the gateway cannot start your servers: {exc}",
                               [(b"retry-after", b"5")])

    async def _status(self, send: Send, status: int, said: str,
                      headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """A refusal as a JSON-RPC error object: an MCP client shows its message to its user (the
        SDK keeps the body of a non-2xx answer only when it is one)."""
        self._metrics.requests.labels(status=f"{status // 100}xx").inc()
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": _REFUSED, "message": said}}
        await _answer(send, status, body, headers=headers)


def _counting(send: Send, metrics: Metrics) -> Send:
    async def counted(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            metrics.requests.labels(status=f"{int(message['status']) // 100}xx").inc()
        await send(message)

    return counted


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() or None if scheme.lower() == "bearer" and len(token) <= 8192 else None
    return None


async def _answer(send: Send, status: int, body: dict[str, Any] | bytes, *, content_type: str = "application/json",
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(data)).encode()),
                            (b"cache-control", b"no-store"), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


async def _page(send: Send, status: int, sentence: str) -> None:
    body = (f"<!doctype html><html><head><meta charset=utf-8><title>hermes</title></head>"
            f"<body><p>{html.escape(sentence)}</p></body></html>")
    await _answer(send, status, body.encode(), content_type="text/html; charset=utf-8")


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
