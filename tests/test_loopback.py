"""The loopback listener `serve --http` and the OAuth callback run on: answers leave at once.

uvicorn writes an answer in two pieces; with Nagle on, the second waits for the client's delayed
ACK (about 40 ms) on every kept-alive connection, which is every call of MCP 2026-07-28
(`bench/bench_eras.py` measures it: 67 ms a call through serve before, under legacy's after).
"""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest

from hermes.loopback import bind_loopback, serve_asgi


def test_accepted_connections_have_nagle_off() -> None:
    listener = bind_loopback()
    try:
        listener.setblocking(True)
        with socket.create_connection(listener.getsockname()[:2]):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        listener.close()


@pytest.mark.anyio
@pytest.mark.timeout(120)  # a shielded server that is never told to stop hangs: the timeout is the failure
async def test_an_owner_cancelled_while_the_server_starts_stops_it() -> None:
    entered, release = anyio.Event(), anyio.Event()
    shut_down = anyio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        await receive()  # lifespan.startup
        entered.set()
        await release.wait()
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        shut_down.set()
        await send({"type": "lifespan.shutdown.complete"})

    listener = bind_loopback()
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(serve_asgi, app, listener)
            await entered.wait()  # uvicorn is inside its startup
            tasks.cancel_scope.cancel()
            release.set()
    finally:
        listener.close()
    # Reached only once serve_asgi returned: told to stop although it never reported itself started,
    # uvicorn stopped as soon as its startup was done, the app's lifespan shutdown included.
    assert tasks.cancel_scope.cancelled_caught and shut_down.is_set()
