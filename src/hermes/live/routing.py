"""Which downstream client an upstream server's request goes to, and the clients `serve` knows.

An upstream request (sampling, elicitation, a log) goes to the client whose call caused it, never to
another: when the upstream speaks 2026-07-28 the request is asked inside that very call (the call is
known exactly); when it speaks the handshake era it arrives on its own, and belongs to the one call
of that server in flight. With two calls of one server in flight, or none, nobody can tell whose it
is, and it is refused rather than guessed. A 2026-07-28 client has no back-channel: its calls are
parked (`rounds`) and the request becomes an input-required round. Roots go to the one client
connected (a server asks for them at start, often before any call).
"""

from __future__ import annotations

import contextlib
import contextvars
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from hermes.config.agent_settings import SamplingSettings
from hermes.live.rounds import Parked
from hermes.mcp.handlers import INPUT_KEY, ClientHandlers, ListChangedHandler, ResourceUpdatedHandler
from hermes.mcp.sampling_limits import SamplingLimits, capped
from hermes.mcp.sdk import client_connection

Ctx = ServerRequestContext[Any]
M = TypeVar("M", bound=BaseModel)
_SAMPLING = types.ClientCapabilities(sampling=types.SamplingCapability())
_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())
ROOTS = types.ClientCapabilities(roots=types.RootsCapability())
CLIENT_ARRIVAL_WAIT = 10.0
ROOTS_WAIT = 10.0  # how long a call waits for its server to ask the client's roots again


@dataclass(eq=False)
class Call:
    """A client's call in flight, and where its upstream's questions go when the client has no
    back-channel (a 2026-07-28 client: `parked`)."""

    ctx: Ctx
    parked: Parked | None = None


# The call whose work runs in this task: an upstream speaking 2026-07-28 asks within it.
_CURRENT: contextvars.ContextVar[Call | None] = contextvars.ContextVar("hermes_serve_call", default=None)


class Unknowable(Exception):
    """Nobody can tell which client an upstream request belongs to."""


def _requires(call: Call, capability: types.ClientCapabilities, what: str) -> None:
    """A 2026-07-28 client that lacks what the call needs is told so: -32021 with the capability, as
    the revision asks (a handshake-era client keeps today's answer: the upstream hears no)."""
    if call.parked is not None and call.parked.failure is None:
        data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=capability)
        call.parked.failure = MCPError(code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                                       message=f"This tool needs the client's {what} capability, which the "
                                               f"client did not declare.",
                                       data=data.model_dump(mode="json", by_alias=True, exclude_none=True))


class Router:
    def __init__(self) -> None:
        self._limits = SamplingLimits()
        self.clients: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._calls: dict[str, list[Call]] = {}
        self._latest: Ctx | None = None
        self.client_arrived = anyio.Event()
        # Servers whose roots question found no client to answer it (told none), and the call
        # waiting for each to ask again now that one is here.
        self._rootless: set[str] = set()
        self._waiting: set[str] = set()  # servers whose roots question waits for a client to come
        self._asked_again: dict[str, anyio.Event] = {}

    def seen(self, ctx: Ctx) -> None:
        """A request from a client: it is the latest, and it hears about changes from now on."""
        self._latest = ctx
        connection = client_connection(ctx)
        if connection is not None:
            self.clients.add(connection)

    @contextlib.contextmanager
    def in_flight(self, server: str | None, ctx: Ctx, parked: Parked | None = None) -> Iterator[None]:
        """While a client's call to `server` runs, that server's requests go to this call's client."""
        call = Call(ctx, parked)
        token = _CURRENT.set(call)
        calls = self._calls.setdefault(server, []) if server is not None else []
        calls.append(call)
        try:
            yield
        finally:
            calls.remove(call)
            _CURRENT.reset(token)

    def call_became_task(self) -> bool:
        """Whether the client's call whose work runs here became a task (its upstream made it one)."""
        current = _CURRENT.get()
        return current is not None and current.parked is not None and current.parked.escalated

    def _call_for(self, server: str) -> Call:
        """The call an upstream request of `server` belongs to; `Unknowable` when none can be named."""
        current = _CURRENT.get()
        if current is not None:
            return current
        calls = self._calls.get(server) or []
        if len(calls) > 1:
            # A call stopped until its client answers (a round a 2026-07-28 client may never come back
            # for) is not the one asking now.
            calls = [call for call in calls if call.parked is None or not call.parked.waiting()] or calls
        if len(calls) == 1:
            return calls[0]
        if calls:
            raise Unknowable(f"{len(calls)} clients' calls to '{server}' are running and its request does not "
                             f"say which one it belongs to; hermes refuses it rather than ask the wrong client")
        raise Unknowable(f"no client's call to '{server}' is running, so there is no one to ask")

    def _call_offering(self, server: str, capability: types.ClientCapabilities, what: str, *,
                       required: bool = True) -> Call | types.ErrorData | None:
        """The call to ask on `server`'s behalf; ErrorData when nobody can be named; None when that
        call's client lacks `capability` (a 2026-07-28 client then hears -32021 if it is `required`)."""
        try:
            call = self._call_for(server)
        except Unknowable as exc:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"hermes mcp serve: {exc}.")
        if not call.ctx.session.check_client_capability(capability):
            if required:
                _requires(call, capability, what)
            return None
        return call

    def _context_for(self, server: str) -> Ctx | None:
        """Roots: the client connected, when there is exactly one (or the call that asks)."""
        with contextlib.suppress(Unknowable):
            return self._call_for(server).ctx
        return self._latest if len(self.clients) <= 1 else None

    def handlers(self, *, resource_updated: ResourceUpdatedHandler | None = None,
                 list_changed: ListChangedHandler | None = None) -> ClientHandlers:
        """What the session's servers may ask, answered by the client connected here; and who hears of
        their resources' and lists' changes."""
        return ClientHandlers(sampling=self.sampling, elicitation=self.elicitation, roots=self.roots,
                              logging=self.log, resource_updated=resource_updated, list_changed=list_changed)

    async def sampling(self, server: str, settings: SamplingSettings, params: types.CreateMessageRequestParams
                       ) -> types.CreateMessageResult | types.ErrorData:
        """Each server's `sampling:` bounds apply behind `serve` as in chat."""
        call = self._call_offering(server, _SAMPLING, "sampling")
        if isinstance(call, types.ErrorData):
            return call
        if call is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message="The client connected to hermes mcp serve "
                                                                       "does not offer sampling.")
        refused = self._limits.refused(server, params, settings)
        if refused is not None:
            return refused
        with anyio.move_on_after(settings.timeout):
            return await self._ask(call, types.CreateMessageRequest(params=capped(params, settings)),
                                   types.CreateMessageResult)
        return types.ErrorData(code=types.INTERNAL_ERROR, message=f"The client connected to hermes mcp serve did not "
                                                                  f"answer within {settings.timeout:g} s "
                                                                  f"(sampling.timeout of '{server}').")

    async def elicitation(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        # A question the client cannot show is declined for it (the answer a person gives who
        # does not fill a form in), so the server still gets its call done; sampling has no
        # such answer, and a call that needs it fails with -32021 instead.
        call = self._call_offering(server, _ELICITATION, "elicitation", required=False)
        if isinstance(call, types.ErrorData):
            return call
        if call is None:
            return types.ElicitResult(action="decline")
        if isinstance(params, types.ElicitRequestURLParams) and params.elicitation_id is None and \
                call.ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # 2026-07-28 dropped the id a URL question carried; a 2025-11-25 client requires one.
            params = params.model_copy(update={"elicitation_id": f"hermes-{uuid.uuid4().hex}"})
        return await self._ask(call, types.ElicitRequest(params=params), types.ElicitResult)

    async def roots(self, server: str) -> list[types.Root]:
        if self._context_for(server) is None:
            # A server that starts faster than the client connects asks before anyone can answer;
            # the client that launched `serve` is moments away, so its answer is worth a short wait.
            self._waiting.add(server)
            try:
                with anyio.move_on_after(CLIENT_ARRIVAL_WAIT):
                    await self.client_arrived.wait()
            finally:
                self._waiting.discard(server)
        ctx = self._context_for(server)
        if ctx is not None and ctx.session.check_client_capability(ROOTS):
            # The call it belongs to when there is one (a 2026-07-28 client's is asked as a round
            # of that call), else the client connected.
            call: Call | None = None
            with contextlib.suppress(Unknowable):
                call = self._call_for(server)
            if call is None or call.ctx is not ctx:
                call = Call(ctx)
            answer = await self._ask(call, types.ListRootsRequest(), types.ListRootsResult)
            if isinstance(answer, types.ListRootsResult):
                self._rootless.discard(server)
                if server in self._asked_again:
                    self._asked_again.pop(server).set()
                return list(answer.roots)
        else:
            self._rootless.add(server)
        # A client without roots chose none: an explicit empty answer, never hermes's own folder.
        return []

    async def settle_roots(self, server: str, ctx: Ctx, tell: Callable[[], Awaitable[None]]) -> None:
        """Before a call goes to `server`: if its roots question is still waiting for a client, or it
        was told "no roots" because none was there, and this call's client has roots, the call
        waits (briefly) until the server has the client's roots: asked within this very call (its
        client answers on the call's stream, or as an input-required round). A server that never
        asks again is not waited for twice."""
        if not ctx.session.check_client_capability(ROOTS):
            return
        if server in self._waiting:
            # Its question waits for a client: this call's is here (a 2026-07-28 client sends no
            # `initialized` to say so), and the question is asked within this call.
            asked = self._asked_again.setdefault(server, anyio.Event())
            self.client_arrived.set()
        elif server in self._rootless:
            self._rootless.discard(server)
            asked = self._asked_again[server] = anyio.Event()
            await tell()
        else:
            return
        with anyio.move_on_after(ROOTS_WAIT):
            await asked.wait()

    async def log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log line goes to the client whose call it came during, on that call's stream:
        a 2026-07-28 client's too (a notification needs no back-channel; it travels with the
        response of the request it belongs to)."""
        with contextlib.suppress(Unknowable):
            call = self._call_for(server)
            with contextlib.suppress(Exception):  # a parked call's first request may have ended
                await call.ctx.session.send_log_message(params.level, params.data, logger=params.logger or server,
                                                        related_request_id=call.ctx.request_id)

    async def _ask(self, call: Call, request: Any, result_type: type[M]) -> M | types.ErrorData:
        ctx = call.ctx
        if call.parked is not None:
            # No back-channel (2026-07-28): the question becomes the client's next input-required round.
            answer = await call.parked.ask(request, INPUT_KEY.get())
            if isinstance(answer, result_type | types.ErrorData):
                return answer
            if answer is None:
                return types.ErrorData(code=types.INTERNAL_ERROR,
                                       message="The client connected to hermes mcp serve did not answer in time.")
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"The client connected to hermes mcp serve "
                                                                      f"answered with something other than a "
                                                                      f"{result_type.__name__}.")
        # Tied to the call that caused it while that call runs (over HTTP it travels on that call's
        # stream); otherwise on the connection itself, since a finished request's stream is gone.
        in_flight = any(call in calls for calls in self._calls.values())
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id) if in_flight else None
        try:
            return await ctx.session.send_request(request, result_type, metadata=metadata)
        except MCPError as exc:
            return types.ErrorData(code=exc.error.code, message=exc.error.message)
        except Exception as exc:  # the client went away or answered nonsense: the server hears why
            return types.ErrorData(code=types.INTERNAL_ERROR,
                                   message=f"The client connected to hermes mcp serve did not answer: {exc}")
