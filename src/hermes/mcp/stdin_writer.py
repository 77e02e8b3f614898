"""Writing a stdio server's requests: by the task that sends each one, with no writer task between."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import anyio
import anyio.abc
from mcp.shared.message import SessionMessage

# Bytes that may wait for the server to read them before a sender waits too. The writer task this
# replaced held up to 16 messages in its queue; this holds at least as much for ordinary ones.
ROOM = 16 * 1024 * 1024


class StdinWriter:
    """The session's write stream: each message is written to the server's stdin by the task that
    sends it, so a request costs no hand-over to a writer task (one task switch of the few a call
    makes; bench_calls).

    asyncio takes a whole write into its buffer at once: concurrent senders never interleave, and a
    message is sent whole whatever happens to its sender. A sender goes on at once, as it did when a
    queue stood here: its request's timeout runs from there (the SDK starts it once the write
    returns), and a cancellation notice is never held up behind a server that does not read. Only
    past `room` bytes waiting does a sender wait for the server to read, for at most `patience`
    seconds (its message stays in the buffer either way): a server that reads nothing makes its
    callers time out as before, not wait forever, and its buffer grows by one message per sender
    per `patience` at most."""

    def __init__(self, stdin: anyio.abc.ByteSendStream, *, patience: float, broken: Callable[[], None],
                 room: int = ROOM) -> None:
        self._stdin = stdin
        # asyncio's own writer under anyio's wrapper: writing to it needs no await at all. Another
        # backend's stream is written through anyio, which waits for room at each write.
        writer = getattr(stdin, "_stream", None)
        self._writer = writer if isinstance(writer, asyncio.StreamWriter) else None
        self._patience = patience
        self._room = room
        self._broken = broken  # the server's stdin is gone: the session's view of the connection ends
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        try:
            if self._writer is None:
                with anyio.move_on_after(self._patience):
                    await self._stdin.send(data)
                return
            if self._writer.is_closing():
                raise anyio.BrokenResourceError
            self._writer.write(data)
            if self._writer.transport.get_write_buffer_size() > self._room:
                with anyio.move_on_after(self._patience):  # armed only here: a timer per request costs 2 %
                    await self._writer.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            self._broken()
            raise anyio.BrokenResourceError from None

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> StdinWriter:
        return self

    async def __aexit__(self, *_: object) -> None:
        self._closed = True
