"""Every use of a private name of the `mcp` SDK, in one place.

The SDK offers no public way to do these few things, and hermes needs them. Keeping them here means
an SDK upgrade that renames one breaks this file, loudly (`tests/mcp/test_sdk.py` pins each name),
instead of somewhere deep in a connection at run time.

- `TransportStreams`: the (read, write) stream pair a `Transport` yields, from `mcp.client._transport`.
- `create_http_client`: an httpx2 client with the settings of the SDK's private factory
  (`mcp.shared._httpx_utils`: its timeouts, its redirect policy) and a bound on answer bodies.
- `send_raw_request`: a request whose answer the SDK would refuse to read. A task-augmented
  `tools/call` answers with a `CreateTaskResult`, but the SDK validates every `tools/call` answer as a
  `CallToolResult` first, and it has no client API for tasks; so the request is stamped like the
  session's own (`ClientSession._stamp`) and sent through its dispatcher (`ClientSession._dispatcher`).
- `client_connection`: a server handler's `ServerRequestContext.session` is a per-request proxy;
  the `Connection` behind it (`_connection`) is what lives as long as the client, and where
  unsolicited notifications go.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientSession
from mcp.server.connection import Connection
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

__all__ = ["TimedOut", "TransportStreams", "client_connection", "connection_closed", "create_http_client",
           "send_raw_request", "send_session_request", "timed_out"]


# One answer (a JSON body) may be this big; an event stream is bounded per event by the transport.
MAX_BODY_BYTES = 512 * 1024 * 1024


class _BoundedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> Any:
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                raise httpx2.ReadError(f"the server's answer is larger than {self._limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx2.AsyncHTTPTransport):
    """An answer that is not an event stream stops at `limit` bytes: a server (or an app's endpoint)
    that streams an endless JSON body fails the request instead of filling the memory. `observe`
    sees every answer's head (here rather than as an httpx event hook: the hook machinery cost
    about 1 % of a call to a local server)."""

    def __init__(self, limit: int = MAX_BODY_BYTES, observe: Callable[[httpx2.Response], None] | None = None) -> None:
        super().__init__()
        self._limit = limit
        self._observe = observe

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await super().handle_async_request(request)
        if self._observe is not None:
            self._observe(response)
        compressed: bytes | None = None
        content_type: bytes | None = None
        length: bytes | None = None
        # One pass over the head (three lookups by name cost three). A header given twice counts as
        # httpx reads it, joined: any encoding but identity is one; the first type is the type; two
        # lengths, or a length beside a transfer encoding, are no declared length.
        for key, value in response.headers.raw:
            key = key.lower()
            if key == b"content-encoding":
                if value.strip().lower() not in (b"", b"identity"):
                    compressed = value
            elif key == b"content-type" and content_type is None:
                content_type = value
            elif key == b"content-length":
                length = value if length is None else b""
            elif key == b"transfer-encoding":  # the body is framed by chunks then, whatever length it says
                length = b""
        if compressed is not None:  # asked for as it is (create_http_client), sent compressed all the same
            await response.aclose()
            shown = compressed.strip().lower()[:40].decode("latin-1")
            raise httpx2.ReadError(f"the server's answer came compressed ({shown}) though hermes asked for it "
                                   f"as it is; a compressed answer is not unpacked, since it could unpack past "
                                   f"{self._limit} bytes")
        event_stream = content_type is not None and content_type.startswith(b"text/event-stream")
        if not event_stream and not _declared_within(length, self._limit):
            response.stream = _BoundedBody(response.stream, self._limit)
        return response


def _declared_within(length: bytes | None, limit: int) -> bool:
    """A body that declares its length within the limit needs no counting: the HTTP parser reads
    exactly that many bytes and fails on any other count. (Counting costs an async generator step per
    chunk of every answer.)"""
    return length is not None and length.isascii() and length.isdigit() and int(length) <= limit


def create_http_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                       auth: httpx2.Auth | None = None, *, limit: int = MAX_BODY_BYTES,
                       observe: Callable[[httpx2.Response], None] | None = None) -> httpx2.AsyncClient:
    """The settings of the SDK's own factory (30 s, 300 s to read a held-open stream, redirects left
    to the transports), with bounded answers; `observe` sees every answer's head."""
    # The bound counts the bytes that arrive; a compressed answer would be unpacked past it (a few
    # kilobytes of gzip unpack to gigabytes). So answers are asked for as they are, and the transport
    # refuses one that comes compressed all the same.
    asked = httpx2.Headers(headers or {})
    asked["accept-encoding"] = "identity"
    kwargs: dict[str, Any] = {"timeout": timeout or httpx2.Timeout(30.0, read=300.0), "headers": asked,
                              "transport": BoundedTransport(limit, observe)}
    if auth is not None:
        kwargs["auth"] = auth
    return httpx2.AsyncClient(**kwargs)


def client_connection(ctx: Any) -> Connection | None:
    """The long-lived connection of the client that sent the request `ctx` belongs to."""
    connection = getattr(getattr(ctx, "session", None), "_connection", None)
    return connection if isinstance(connection, Connection) else None


async def send_raw_request(client: Client, method: str, params: dict[str, Any], *, timeout: float | None = None,
                           on_progress: ProgressFnT | None = None) -> dict[str, Any]:
    """Send `method` as the connected session would and return the raw answer, unvalidated."""
    return await send_session_request(client.session, method, params, timeout=timeout, on_progress=on_progress)


async def send_session_request(session: ClientSession, method: str, params: dict[str, Any], *,
                               timeout: float | None = None, on_progress: ProgressFnT | None = None,
                               headers: dict[str, str] | None = None) -> dict[str, Any]:
    """`send_raw_request` on a session; `headers` go with it over HTTP (an extension's routing headers)."""
    data: dict[str, Any] = {"method": method, "params": params}
    opts: CallOptions = {}
    session._stamp(data, opts)
    if headers:
        opts.setdefault("headers", {}).update(headers)
    if timeout is not None:
        opts["timeout"] = timeout
    if on_progress is not None:
        opts["on_progress"] = on_progress
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)


_CLOSED_MESSAGE = "Connection closed"  # what the SDK's dispatcher says when the transport ends


class TimedOut(MCPError):
    """A call hermes gave up on at its timeout (and cancelled on the server): hermes's own verdict,
    never a server's error that happens to carry the same code."""

    def __init__(self, message: str) -> None:
        super().__init__(REQUEST_TIMEOUT, message)


def connection_closed(exc: MCPError) -> bool:
    """The SDK's own "Connection closed": a server may answer with the same code (-32000 is in the
    range servers use for their own errors), which says nothing about the connection."""
    return exc.error.code == CONNECTION_CLOSED and exc.error.message == _CLOSED_MESSAGE and exc.error.data is None


def no_back_channel(exc: MCPError) -> bool:
    """A server built on the SDK asked its client something on a connection with no way to ask
    (its `NoBackChannelError`, which reaches hermes as this sentence in an error answer)."""
    return "no back-channel for server-initiated requests" in exc.error.message


def timed_out(exc: MCPError) -> bool:
    """hermes's timeout or the SDK's (a request that got no answer in time), not a server's -32001."""
    return isinstance(exc, TimedOut) or (exc.error.code == REQUEST_TIMEOUT and exc.error.data is None
                                         and exc.error.message.startswith("Request ")
                                         and exc.error.message.endswith(" timed out"))
