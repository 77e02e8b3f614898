"""Writing a stdio server's requests: by the task that sends each one, with no writer task between."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import anyio
import anyio.abc
from mcp.shared.message import SessionMessage

from hermes.errors import HermesError

_BUFFERED = 64 * 1024  # asyncio's own mark for a pipe: past it, a writer waits for the reader


class StdinWriter:
    """The session's write stream: each message is written to the server's stdin by the task that
    sends it, so a request costs no hand-over to a writer task (one task switch of the few a call
    makes; bench_calls). asyncio takes a whole write into its buffer at once, so concurrent
    senders never interleave, and a sender cancelled while the pipe drains has still sent its
    message whole. A sender waits only while more than `_BUFFERED` bytes wait for the server to
    read them, and at most `patience` seconds: a server that reads nothing for that long gets a
    sentence saying so instead of a caller that waits forever (the request's own timeout starts
    once the request is written)."""

    def __init__(self, stdin: anyio.abc.ByteSendStream, *, name: str, patience: float,
                 broken: Callable[[], None]) -> None:
        self._stdin = stdin
        # asyncio's own writer under anyio's wrapper: writing to it needs no await at all. Another
        # backend's stream is written through anyio, one checkpoint more.
        writer = getattr(stdin, "_stream", None)
        self._writer = writer if isinstance(writer, asyncio.StreamWriter) else None
        self._name = name
        self._patience = patience
        self._broken = broken  # the server's stdin is gone: the session's view of the connection ends
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        try:
            if self._writer is None:
                with anyio.fail_after(self._patience):
                    await self._stdin.send(data)
                return
            if self._writer.is_closing():
                raise anyio.BrokenResourceError
            self._writer.write(data)
            if self._writer.transport.get_write_buffer_size() > _BUFFERED:
                with anyio.fail_after(self._patience):  # armed only here: a timer per request costs 2 %
                    await self._writer.drain()
        except TimeoutError:
            raise HermesError(f"MCP server '{self._name}' read none of its input for {self._patience:g} s, so "
                              f"the request could not be sent; it may be stuck (its log may say why).") from None
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
