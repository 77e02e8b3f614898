"""Who may talk to the dashboard: the right Host, the right Origin, and the token it printed.

The dashboard listens on loopback, but a web page the user has open elsewhere can still send
requests to loopback (DNS rebinding, cross-site forms). So, in this order:

- a Host that is not this loopback port → 421 (a rebound name reaches the socket but not the app);
- an Origin that is not this dashboard → 403 (another site's script or form);
- no token → 401. The token comes in the printed URL (`?token=`); the dashboard trades it for an
  HttpOnly, SameSite=Strict cookie named after its port and redirects to the same path without it,
  so the token does not stay in the address bar or the history. Scripts and tests may send it as
  `Authorization: Bearer`. The cookie holds a session key of its own, never the token: browsers
  send a 127.0.0.1 cookie to every port of that address, so another local web app the user opens
  can see it (a limit of cookies on loopback; the key dies with the dashboard), and it must not
  learn the token that prints new links.

A state-changing request authenticated by the cookie must carry this dashboard's Origin: browsers
send one with every POST, and a request without it is not from a page of ours.

Every answer carries the headers that keep hostile text inert where escaping alone might not: a
Content-Security-Policy that runs only the dashboard's own script file (no inline script, no
outside asset), no framing by other pages, no MIME sniffing, no Referer to other sites.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

# `frame-src 'self'` for the MCP Apps pages, which are served from this origin in a sandboxed frame.
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
          "frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # Not no-referrer: with it, browsers send `Origin: null` on form posts, and the Origin check
    # could not tell our own pages from a sandboxed stranger. Same-origin leaks nothing outside.
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class DashboardGuard:
    def __init__(self, app: App, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.session_key = secrets.token_urlsafe(32)
        self.port = port
        self.cookie = f"hermes-dashboard-{port}"
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self.origins = {b"http://" + host for host in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the dashboard has none; none may pass the guard unchecked
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if headers.get(b"host", b"").lower() not in self.hosts:
            await _refuse(send, 421, "This dashboard answers only at the address hermes dashboard printed.")
            return
        origin = headers.get(b"origin")
        if origin is not None and origin.lower() not in self.origins:
            await _refuse(send, 403, "A page from another origin may not use this dashboard.")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        offered = query.get("token")
        if offered is not None and scope["method"] == "GET":
            if not secrets.compare_digest(offered.encode(), self.token.encode()):
                await _refuse(send, 401, "That dashboard link is not valid (the dashboard prints a new one each "
                                         "time it starts).")
                return
            await self._trade_for_cookie(scope, send, query)
            return
        by_bearer = secrets.compare_digest(headers.get(b"authorization", b""), f"Bearer {self.token}".encode())
        by_cookie = secrets.compare_digest(self._cookie_value(headers).encode(), self.session_key.encode())
        if not (by_bearer or by_cookie):
            await _refuse(send, 401, "Open the link hermes dashboard printed (it carries the dashboard's token).")
            return
        if scope["method"] in UNSAFE_METHODS and not by_bearer and origin is None:
            await _refuse(send, 403, "A change must come from a page of this dashboard.")
            return
        await self.app(scope, receive, _with_security_headers(send))

    def _cookie_value(self, headers: dict[bytes, bytes]) -> str:
        """Our cookie's value, read pair by pair: another local app may set cookies on this address
        too, and one malformed pair of theirs must not hide ours."""
        for pair in headers.get(b"cookie", b"").decode("latin-1").split(";"):
            name, _, value = pair.strip().partition("=")
            if name == self.cookie:
                return value
        return ""

    async def _trade_for_cookie(self, scope: Scope, send: Send, query: dict[str, str]) -> None:
        rest = urlencode({k: v for k, v in query.items() if k != "token"})
        # The path as the browser sent it (still percent-encoded: no CR/LF can reach the header),
        # and only a path of this dashboard: `//host` or `/\host` would leave it.
        path = bytes(scope.get("raw_path") or b"/").decode("latin-1")
        if not path.startswith("/") or path.startswith(("//", "/\\")) or not path.isprintable():
            path = "/"
        location = path + (f"?{rest}" if rest else "")
        cookie = f"{self.cookie}={self.session_key}; Path=/; HttpOnly; SameSite=Strict"
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location.encode()), (b"set-cookie", cookie.encode()), (b"content-length", b"0"),
            *SECURITY_HEADERS]})
        await send({"type": "http.response.body", "body": b""})


def _with_security_headers(send: Send) -> Send:
    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            names = {name.lower() for name, _ in message.get("headers", [])}
            message["headers"] = [*message.get("headers", []),
                                  *(h for h in SECURITY_HEADERS if h[0] not in names)]
        await send(message)

    return sending


async def _refuse(send: Send, status: int, sentence: str) -> None:
    body = sentence.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
