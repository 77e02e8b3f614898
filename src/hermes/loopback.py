"""Serving an ASGI app on a loopback socket inside a structured-concurrency task group.

uvicorn installs its own SIGINT/SIGTERM handlers while it serves and re-raises the signal after it
stops, which would kill hermes before it could stop its children. hermes owns signal handling,
so the server here never touches signals and stops when its owner cancels it.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import uvicorn
from anyio.abc import TaskStatus


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind_loopback(port: int = 0, host: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # uvicorn answers in two writes (head, then body). asyncio turns Nagle off only on sockets it
    # created itself, so on this one the body would wait for the client's delayed ACK: about 40 ms
    # a call on every kept-alive connection (all of 2026-07-28's stateless POSTs). Accepted sockets
    # inherit the option.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve_asgi(app: Any, sock: socket.socket, *,
                     task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve `app` on `sock` until cancelled; `task_status.started()` once it accepts requests."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1)
    server = _QuietServer(config)
    stopped = anyio.Event()

    async def run() -> None:
        # Shielded so that cancelling the owner asks uvicorn to stop gracefully (lifespan shutdown
        # included) instead of tearing it down mid-request.
        with anyio.CancelScope(shield=True):
            try:
                await server.serve([sock])
            finally:
                stopped.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        # Told to stop from the moment it runs: an owner cancelled while uvicorn still starts (a
        # SIGTERM to `serve` in its first second) would otherwise wait for a server nobody stops.
        try:
            while not server.started:
                if stopped.is_set():
                    raise OSError(f"the HTTP server on {sock.getsockname()} did not start")
                await anyio.sleep(0.005)
            task_status.started()
            await anyio.sleep_forever()
        finally:
            server.should_exit = True


class BearerGuard:
    """Plain ASGI middleware in front of a loopback app: the expected bearer token, or 401.

    Streamed responses pass through untouched. The 401 carries `WWW-Authenticate: Bearer`, so a
    client knows a bearer token is what is missing (and that this is not an OAuth-protected
    resource to start a login against); the comparison takes constant time.
    """

    def __init__(self, app: Any, token: str, *, refusal: str = "unauthorized") -> None:
        import json

        self.app = app
        self.expected = f"Bearer {token}".encode()
        self._body = json.dumps({"error": refusal}).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import secrets

        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not secrets.compare_digest(given, self.expected):
                challenge = b'Bearer realm="hermes"' + (b', error="invalid_token"' if given else b"")
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(self._body)).encode()),
                    (b"www-authenticate", challenge)]})
                await send({"type": "http.response.body", "body": self._body})
                return
        await self.app(scope, receive, send)
