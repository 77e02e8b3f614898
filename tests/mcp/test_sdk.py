"""Every private SDK name hermes relies on, pinned: an SDK upgrade that moves one fails here, loudly."""

from __future__ import annotations

import inspect

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from hermes.mcp import sdk


def test_http_client_factory_keeps_its_shape() -> None:
    parameters = list(inspect.signature(sdk.create_mcp_http_client).parameters)
    assert parameters[:3] == ["headers", "timeout", "auth"]
    client = sdk.create_http_client(headers={"X-Test": "1"})
    assert isinstance(client, httpx2.AsyncClient) and client.headers["X-Test"] == "1"
    assert client.timeout.read is not None and client.timeout.read >= 60


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


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_anyio_offers_what_the_exit_watch_needs() -> None:
    assert callable(anyio.wait_readable)
