"""Every private SDK name hermes relies on, pinned: an SDK upgrade that moves one fails here, loudly."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from hermes.mcp import sdk


def test_http_client_has_the_sdk_factorys_settings() -> None:
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT, create_mcp_http_client

    theirs = create_mcp_http_client()
    client = sdk.create_http_client(headers={"X-Test": "1"})
    assert isinstance(client, httpx2.AsyncClient) and client.headers["X-Test"] == "1"
    assert (client.timeout.connect, client.timeout.read) == (MCP_DEFAULT_TIMEOUT, MCP_DEFAULT_SSE_READ_TIMEOUT)
    assert client.timeout == theirs.timeout and client.follow_redirects == theirs.follow_redirects


@pytest.mark.anyio
async def test_an_endless_json_answer_stops_at_the_bound() -> None:
    """An endpoint that streams a JSON body without end fails the request; memory stays bounded."""
    await _stops_at_a_megabyte(b"transfer-encoding: chunked\r\n", _CHUNKS)


_CHUNKS = b"%x\r\n" % 60000 + b"[" * 60000 + b"\r\n"  # one chunk of a body sent without end


async def _stops_at_a_megabyte(head: bytes, body: bytes) -> None:
    """A JSON answer with these head lines and `body` sent without end fails at a bound of 1 MiB."""
    url, server = _one_answer(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + head + b"\r\n", body,
                              endless=True)
    async with sdk.create_http_client(limit=1024 * 1024) as client:
        with pytest.raises(httpx2.ReadError, match="larger than 1048576 bytes"):
            await client.post(url, json={})
    server.close()


def _one_answer(head: bytes, body: bytes, *, endless: bool = False,
                received: list[bytes] | None = None) -> tuple[str, Any]:
    """A loopback endpoint that answers one request with `head` and `body` (repeated forever if
    `endless`), keeping the request's first bytes in `received`; its URL and socket."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer() -> None:
        connection, _ = server.accept()
        request = connection.recv(65536)
        if received is not None:
            received.append(request)
        try:
            connection.sendall(head + body)
            while endless:
                connection.sendall(body)
        except OSError:
            pass
        connection.close()

    threading.Thread(target=answer, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/mcp", server


@pytest.mark.anyio
async def test_a_declared_length_past_the_bound_is_refused_and_a_false_one_reads_no_further() -> None:
    """The count is skipped only for a body that declares a length within the bound: one declaring
    more is counted and stops at the bound, and one that sends more than it declared is read only
    as far as it declared."""
    await _stops_at_a_megabyte(b"content-length: %d\r\n" % (2 * 1024 * 1024), b"[" * 60000)
    url, server = _one_answer(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n",
                              b"[1] " * 60000, endless=True)
    async with sdk.create_http_client(limit=1024 * 1024) as client:
        response = await client.post(url, json={})
    assert response.content == b"[1] "
    server.close()


@pytest.mark.anyio
async def test_a_compressed_answer_is_never_unpacked() -> None:
    """Answers are asked for as they are; a server that compresses all the same (a few kilobytes of
    gzip that unpack to far more than the bound) is refused instead of unpacked."""
    import gzip

    bomb = gzip.compress(b"[" * (8 * 1024 * 1024))
    head = (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            f"content-length: {len(bomb)}\r\n\r\n").encode()
    url, server = _one_answer(head, bomb)
    async with sdk.create_http_client(limit=1024 * 1024) as client:
        with pytest.raises(httpx2.ReadError, match="came compressed"):
            await client.post(url, json={})
    server.close()


@pytest.mark.anyio
@pytest.mark.parametrize("encodings", [("identity", "gzip"), ("gzip", "identity"), ("", "gzip")])
async def test_an_encoding_given_twice_is_refused_when_either_compresses(encodings: tuple[str, str]) -> None:
    import gzip

    bomb = gzip.compress(b"[" * (8 * 1024 * 1024))
    lines = "".join(f"content-encoding: {encoding}\r\n" for encoding in encodings)
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{lines}content-length: {len(bomb)}\r\n\r\n"
    url, server = _one_answer(head.encode(), bomb)
    async with sdk.create_http_client(limit=1024 * 1024) as client:
        with pytest.raises(httpx2.ReadError, match="came compressed"):
            await client.post(url, json={})
    server.close()


@pytest.mark.anyio
async def test_a_second_type_naming_an_event_stream_leaves_the_body_bounded() -> None:
    """httpx reads a header given twice joined, so the first type is the answer's type: a JSON body
    that also claims to be an event stream is still counted against the bound."""
    await _stops_at_a_megabyte(b"content-type: text/event-stream\r\n", b"[" * 60000)


@pytest.mark.anyio
@pytest.mark.parametrize("framing", [b"transfer-encoding: chunked\r\ncontent-length: 4\r\n",
                                     b"content-length: 4\r\ntransfer-encoding: chunked\r\n"])
async def test_a_length_beside_chunks_is_no_declared_length(framing: bytes) -> None:
    """The parser frames such a body by its chunks, so the length it says bounds nothing: the
    answer is counted like one that says no length."""
    await _stops_at_a_megabyte(framing, _CHUNKS)


@pytest.mark.anyio
async def test_answers_are_asked_for_uncompressed() -> None:
    received: list[bytes] = []
    url, server = _one_answer(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n",
                              b"{}", received=received)
    async with sdk.create_http_client() as client:
        response = await client.post(url, json={})
    server.close()
    assert response.json() == {}
    assert b"accept-encoding: identity\r\n" in received[0].lower()


def test_transport_streams_is_the_read_write_pair() -> None:
    assert sdk.TransportStreams.__origin__ is tuple  # type: ignore[attr-defined]
    assert len(sdk.TransportStreams.__args__) == 2  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_handler_reaches_its_clients_long_lived_connection() -> None:
    seen: list[Connection | None] = []

    async def list_tools(ctx: ServerRequestContext[None],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        seen.append(sdk.client_connection(ctx))
        return types.ListToolsResult(tools=[])

    server: Server[None] = Server("pin", on_list_tools=list_tools)
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        await client.list_tools()
    assert len(seen) == 2 and all(isinstance(c, Connection) for c in seen)
    assert seen[0] is seen[1]


def test_anyio_offers_what_the_exit_watch_needs() -> None:
    assert callable(anyio.wait_readable)
