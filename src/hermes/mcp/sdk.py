"""Every use of a private name of the `mcp` SDK, in one place.

The SDK offers no public way to do these few things, and hermes needs them. Keeping them here means
an SDK upgrade that renames one breaks this file, loudly (`tests/mcp/test_sdk.py` pins each name),
instead of somewhere deep in a connection at run time.

- `TransportStreams`: the (read, write) stream pair a `Transport` yields, from `mcp.client._transport`.
- `create_http_client`: the SDK's httpx2 client factory (its timeouts, its redirect policy), from
  the private module `mcp.shared._httpx_utils`.
- `client_connection`: a server handler's `ServerRequestContext.session` is a per-request proxy;
  the `Connection` behind it (`_connection`) is what lives as long as the client, and where
  unsolicited notifications go.
"""

from __future__ import annotations

from typing import Any

import httpx2
from mcp.client._transport import TransportStreams
from mcp.server.connection import Connection
from mcp.shared._httpx_utils import create_mcp_http_client

__all__ = ["TransportStreams", "client_connection", "create_http_client"]


def create_http_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                       auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    return create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)


def client_connection(ctx: Any) -> Connection | None:
    """The long-lived connection of the client that sent the request `ctx` belongs to."""
    connection = getattr(getattr(ctx, "session", None), "_connection", None)
    return connection if isinstance(connection, Connection) else None
