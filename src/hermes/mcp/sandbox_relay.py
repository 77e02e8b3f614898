"""The host end of `network: loopback`: one Unix socket per declared port, relayed to the host.

The folder of sockets is private (0700, in the system's temporary folder: a socket path must stay
under about 100 bytes) and bound read-only into the sandbox, where `relay_inside` listens on the
sandbox's loopback and connects here. Only the listed ports have a socket; any other port the
server dials finds nothing, inside its own network namespace.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc

_CHUNK = 65536
_MAX_CONNECTIONS = 64  # per port, as inside: more are refused


async def _pump(source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream) -> None:
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        while True:
            await sink.send(await source.receive(_CHUNK))
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await sink.send_eof()


async def _connect_host(port: int) -> anyio.abc.SocketStream:
    try:
        return await anyio.connect_tcp("127.0.0.1", port)
    except OSError:
        return await anyio.connect_tcp("::1", port)


class HostRelay:
    """The sockets for some ports: opened before the sandbox starts, served in the transport's tasks."""

    def __init__(self, ports: tuple[int, ...]) -> None:
        self.ports = ports
        self.folder: str | None = None
        self._listeners: list[tuple[int, anyio.abc.SocketListener]] = []

    async def open(self) -> str:
        self.folder = tempfile.mkdtemp(prefix="hermes-relay-")
        for port in self.ports:
            self._listeners.append((port, await anyio.create_unix_listener(Path(self.folder) / f"{port}.sock")))
        return self.folder

    def serve_in(self, tasks: anyio.abc.TaskGroup) -> None:
        for port, listener in self._listeners:
            tasks.start_soon(listener.serve, _handler(port))

    async def close(self) -> None:
        for _, listener in self._listeners:
            with contextlib.suppress(OSError):
                await listener.aclose()
        self._listeners.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _handler(port: int) -> Callable[[anyio.abc.SocketStream], Awaitable[None]]:
    slots = anyio.Semaphore(_MAX_CONNECTIONS)

    async def handle(client: anyio.abc.SocketStream) -> None:
        if slots.value == 0:
            await client.aclose()
            return
        async with slots, client:
            try:
                host = await _connect_host(port)
            except OSError:
                return
            async with host, anyio.create_task_group() as group:
                group.start_soon(_pump, client, host)
                await _pump(host, client)
    return handle
