"""Server-sent event streams for open pages, and the pulse that wakes them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
from starlette.responses import StreamingResponse

KEEPALIVE = 15.0  # seconds of silence before a comment line keeps proxies and the browser from giving up


class Pulse:
    """Wakes every waiter when something new happened, or for good when the dashboard stops."""

    def __init__(self) -> None:
        self.closed = False
        self._event = anyio.Event()

    def fire(self) -> None:
        event, self._event = self._event, anyio.Event()
        event.set()

    def close(self) -> None:
        """The dashboard is stopping: every page's stream ends now, so the server can stop at once."""
        self.closed = True
        self._event.set()

    async def until(self, ready: Callable[[], bool]) -> bool:
        """Wait until `ready()`; False when the dashboard stops first."""
        while not ready() and not self.closed:
            await self._event.wait()
        return not self.closed


def event_stream(next_chunk: Callable[[], Awaitable[bytes | None]]) -> StreamingResponse:
    """An event stream of what `next_chunk` returns, until it returns None."""

    async def stream() -> AsyncIterator[bytes]:
        yield b"retry: 2000\n\n"
        while True:
            chunk = b": still here\n\n"
            with anyio.move_on_after(KEEPALIVE):
                found = await next_chunk()
                if found is None:
                    return
                chunk = found
            yield chunk

    return StreamingResponse(stream(), media_type="text/event-stream")
