"""The loopback listener `serve --http` and the OAuth callback run on: answers leave at once.

uvicorn writes an answer in two pieces; with Nagle on, the second waits for the client's delayed
ACK (about 40 ms) on every kept-alive connection, which is every call of MCP 2026-07-28
(`bench/bench_eras.py` measures it: 67 ms a call through serve before, under legacy's after).
"""

from __future__ import annotations

import socket

from hermes.loopback import bind_loopback


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
