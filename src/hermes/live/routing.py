"""Which downstream client an upstream server's request goes to, and the clients `serve` knows.

Upstream requests (sampling, elicitation, logs) carry nothing that says which call caused them, so
they go to the client whose call to that server is in flight, the latest first; roots go to the
latest client (a server asks for them at start, often before any client has called anything).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel

from hermes.mcp.handlers import ClientHandlers
from hermes.mcp.sdk import client_connection

Ctx = ServerRequestContext[Any]
M = TypeVar("M", bound=BaseModel)
_SAMPLING = types.ClientCapabilities(sampling=types.SamplingCapability())
_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())
ROOTS = types.ClientCapabilities(roots=types.RootsCapability())
CLIENT_ARRIVAL_WAIT = 10.0


class Router:
    def __init__(self) -> None:
        self.clients: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._calls: dict[str, list[Ctx]] = {}
        self._latest: Ctx | None = None
        self.client_arrived = anyio.Event()

    def seen(self, ctx: Ctx) -> None:
        """A request from a client: it is the latest, and it hears about changes from now on."""
        self._latest = ctx
        connection = client_connection(ctx)
        if connection is not None:
            self.clients.add(connection)

    @contextlib.contextmanager
    def in_flight(self, server: str | None, ctx: Ctx) -> Iterator[None]:
        """While a client's call to `server` runs, that server's requests go to this client."""
        if server is None:
            yield
            return
        calls = self._calls.setdefault(server, [])
        calls.append(ctx)
        try:
            yield
        finally:
            calls.remove(ctx)

    def _context_for(self, server: str) -> Ctx | None:
        calls = self._calls.get(server)
        return calls[-1] if calls else self._latest

    def handlers(self) -> ClientHandlers:
        """What the session's servers may ask, answered by the client connected here."""
        return ClientHandlers(sampling=self.sampling, elicitation=self.elicitation, roots=self.roots,
                              logging=self.log)

    async def sampling(self, server: str, params: types.CreateMessageRequestParams
                       ) -> types.CreateMessageResult | types.ErrorData:
        ctx = self._context_for(server)
        if ctx is None or not ctx.session.check_client_capability(_SAMPLING):
            return types.ErrorData(code=types.INVALID_REQUEST, message="The client connected to hermes mcp serve "
                                                                       "does not offer sampling.")
        return await self._ask(ctx, types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def elicitation(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        ctx = self._context_for(server)
        if ctx is None or not ctx.session.check_client_capability(_ELICITATION):
            return types.ElicitResult(action="decline")
        return await self._ask(ctx, types.ElicitRequest(params=params), types.ElicitResult)

    async def roots(self, server: str) -> list[types.Root]:
        if self._context_for(server) is None:
            # A server that starts faster than the client connects asks before anyone can answer;
            # the client that launched `serve` is moments away, so its answer is worth a short wait.
            with anyio.move_on_after(CLIENT_ARRIVAL_WAIT):
                await self.client_arrived.wait()
        ctx = self._context_for(server)
        if ctx is not None and ctx.session.check_client_capability(ROOTS):
            answer = await self._ask(ctx, types.ListRootsRequest(), types.ListRootsResult)
            if isinstance(answer, types.ListRootsResult):
                return list(answer.roots)
        # A client without roots chose none: an explicit empty answer, never hermes's own folder.
        return []

    async def log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        calls = self._calls.get(server)
        if calls:
            with contextlib.suppress(Exception):
                await calls[-1].session.send_log_message(params.level, params.data, logger=params.logger or server,
                                                         related_request_id=calls[-1].request_id)

    async def _ask(self, ctx: Ctx, request: Any, result_type: type[M]) -> M | types.ErrorData:
        # Tied to the call that caused it while that call runs (over HTTP it travels on that call's
        # stream); otherwise on the connection itself, since a finished request's stream is gone.
        in_flight = any(ctx in calls for calls in self._calls.values())
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id) if in_flight else None
        try:
            return await ctx.session.send_request(request, result_type, metadata=metadata)
        except MCPError as exc:
            return types.ErrorData(code=exc.error.code, message=exc.error.message)
        except Exception as exc:  # the client went away or answered nonsense: the server hears why
            return types.ErrorData(code=types.INTERNAL_ERROR,
                                   message=f"The client connected to hermes mcp serve did not answer: {exc}")
