"""Every use of a private name of the `mcp` SDK, in one place.

The SDK offers no public way to do these few things, and hermes needs them. Keeping them here means
an SDK upgrade that renames one breaks this file, loudly (`tests/mcp/test_sdk.py` pins each name),
instead of somewhere deep in a connection at run time.

- `TransportStreams`: the (read, write) stream pair a `Transport` yields, from `mcp.client._transport`.
- `create_http_client`: the SDK's httpx2 client factory (its timeouts, its redirect policy), from
  the private module `mcp.shared._httpx_utils`.
- `send_raw_request`: a request whose answer the SDK would refuse to read. A task-augmented
  `tools/call` answers with a `CreateTaskResult`, but the SDK validates every `tools/call` answer as a
  `CallToolResult` first, and it has no client API for tasks; so the request is stamped like the
  session's own (`ClientSession._stamp`) and sent through its dispatcher (`ClientSession._dispatcher`).
- `client_connection`: a server handler's `ServerRequestContext.session` is a per-request proxy;
  the `Connection` behind it (`_connection`) is what lives as long as the client, and where
  unsolicited notifications go.
"""

from __future__ import annotations

from typing import Any

import httpx2
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.server.connection import Connection
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.dispatcher import CallOptions, ProgressFnT

__all__ = ["TransportStreams", "client_connection", "create_http_client", "send_raw_request"]


def create_http_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                       auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    return create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)


def client_connection(ctx: Any) -> Connection | None:
    """The long-lived connection of the client that sent the request `ctx` belongs to."""
    connection = getattr(getattr(ctx, "session", None), "_connection", None)
    return connection if isinstance(connection, Connection) else None


async def send_raw_request(client: Client, method: str, params: dict[str, Any], *, timeout: float | None = None,
                           on_progress: ProgressFnT | None = None) -> dict[str, Any]:
    """Send `method` as the connected session would and return the raw answer, unvalidated."""
    session = client.session
    data: dict[str, Any] = {"method": method, "params": params}
    opts: CallOptions = {}
    session._stamp(data, opts)
    if timeout is not None:
        opts["timeout"] = timeout
    if on_progress is not None:
        opts["on_progress"] = on_progress
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)
