"""One supervisor per configured server: connect, serve calls, restart after a crash, park.

Lifecycle (all transitions happen inside `run`, which the owning session runs in its task group):

    connecting -> connected -> (child died) -> restarting -> connecting -> ...
    connecting -> failed           first attempt failed; waits for `revive()` (a reload)
    restarting x3 in a row -> parked   the crash budget is spent; waits for `revive()`
    disabled                       never started (config or global switch); `run` returns at once
    stopped                        `stop()` was called; `run` returns

A stdio server that stayed up for `RestartPolicy.healthy_after` seconds, or served a successful
call, gets its crash budget back. An HTTP server whose connection drops is reconnected the same way
(it may be restarting); one that never connected waits for a reload, like any failed first attempt.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from hermes.apps.liveness import LiveEndpointUnavailable
from hermes.config.model import ServerConfig
from hermes.config.resolve import ResolvedServer
from hermes.errors import HermesError, ServerNotConnected
from hermes.mcp.describe import describe_failure, leaf
from hermes.mcp.endpoint import EndpointResolver
from hermes.mcp.stdio import StdioTransport
from hermes.security.environment import child_environment
from hermes.security.redact import Redactor, credential_parts

_CLIENT_INFO = types.Implementation(name="hermes", version="0.1.0")
T = TypeVar("T")
_MAX_TOOL_PAGES = 100


class State(StrEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    RESTARTING = "restarting"
    FAILED = "failed"
    PARKED = "parked"
    DISABLED = "disabled"
    STOPPED = "stopped"


@dataclass(frozen=True)
class RestartPolicy:
    attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    healthy_after: float = 60.0

    def delay(self, failures_in_row: int, rng: random.Random) -> float:
        """Doubling from `base_delay`, capped, with jitter so crashed servers don't restart in step."""
        capped = min(self.max_delay, self.base_delay * 2 ** (failures_in_row - 1))
        return float(capped * rng.uniform(0.5, 1.0))


@dataclass
class ConnectionEnv:
    """What every connection of one session shares."""

    redactor: Redactor
    resolver: EndpointResolver
    policy: RestartPolicy
    logs: Path
    parent_environ: dict[str, str]
    watch_interval: float = 0.5
    # Builds the httpx2 auth (OAuth) for a server with `auth: oauth`; never interactive in a session.
    auth_for: Callable[[ResolvedServer, str], Any] | None = None


class LivenessWatch(Protocol):
    """What an app-bound connection watches: the identity of the app's live endpoint."""

    def identity(self) -> Any: ...


class ServerConnection:
    def __init__(self, name: str, config: ServerConfig, resolve: Callable[[], ResolvedServer],
                 env: ConnectionEnv, *, on_tools_changed: Callable[[str], None],
                 disabled_reason: str | None = None, resolver: EndpointResolver | None = None,
                 watch: LivenessWatch | None = None) -> None:
        self.name = name
        self.config = config
        self._resolve = resolve
        self._env = env
        self._resolver = resolver
        self._watch = watch
        # Set when the app behind an app-bound server is the reason there is no connection.
        self.app_state: str | None = None
        self._live_identity: Any = None
        self._restart_now = False
        self._on_tools_changed = on_tools_changed
        self.state = State.DISABLED if disabled_reason else State.CONNECTING
        self.reason = disabled_reason or ""
        self.stderr_tail = ""
        self.tools: list[types.Tool] = []
        self.capabilities: types.ServerCapabilities | None = None
        self.server_info: types.Implementation | None = None
        self.connect_seconds: float | None = None
        self.restarts = 0
        self.attempts = 0  # attempts that connected or failed, so callers can wait for the next one
        self.pid: int | None = None
        self.first_attempt_done = anyio.Event()
        self._client: Client | None = None
        self._tasks: TaskGroup | None = None
        self._end = anyio.Event()
        self._wake = anyio.Event()
        self._stopping = False
        self._served_call = False
        self._connected_at: float | None = None
        self._rng = random.Random()
        if disabled_reason:
            self.first_attempt_done.set()

    # -- control -------------------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping = True
        self._end.set()
        self._wake.set()

    def revive(self) -> bool:
        """Give a failed or parked server a fresh start; True if it was waiting for one."""
        if self.state in (State.FAILED, State.PARKED):
            self._wake.set()
            return True
        return False

    async def next_attempt(self, after: int) -> None:
        """Wait until an attempt after the first `after` ones has connected or failed."""
        with anyio.move_on_after(self.config.connect_timeout + 1):
            while self.attempts <= after and self.state is not State.STOPPED:
                await anyio.sleep(0.02)

    @property
    def live_pid(self) -> int | None:
        """For an app-bound server: the app process the current connection goes to."""
        identity = self._live_identity
        if not self.connected or not (isinstance(identity, tuple) and len(identity) == 3):
            return None
        return int(identity[1])

    @property
    def connected(self) -> bool:
        return self.state is State.CONNECTED and self._client is not None

    # -- the supervisor loop -------------------------------------------------------------------

    async def run(self) -> None:
        if self.state is State.DISABLED:
            return
        async with anyio.create_task_group() as tasks:
            if self._watch is not None:
                tasks.start_soon(self._watch_liveness)
            await self._supervise()
            tasks.cancel_scope.cancel()

    async def _supervise(self) -> None:
        failures_in_row = 0
        ever_connected = False
        while not self._stopping:
            connected = await self._attempt()
            self.first_attempt_done.set()
            if self._stopping:
                break
            if self._restart_now:
                # The app restarted with a new pid, port or token: reconnect at once, no crash counted.
                self._restart_now = False
                self.restarts += 1
                continue
            if self.app_state is not None:
                await self._wait_for_revival(State.FAILED)
                failures_in_row = 0
                continue
            # Healthy means it stayed up (from the handshake, not from the spawn) or served a call.
            up_for = time.monotonic() - self._connected_at if self._connected_at is not None else 0.0
            healthy = connected and (self._served_call or up_for >= self._env.policy.healthy_after)
            ever_connected = ever_connected or connected
            if healthy:
                failures_in_row = 0
            failures_in_row += 1
            if not ever_connected:
                await self._wait_for_revival(State.FAILED)
                failures_in_row = 0
                continue
            if failures_in_row > self._env.policy.attempts:
                self.reason = f"crashed {failures_in_row} times in a row; parked until the next reload " \
                              f"(last: {self.reason})"
                await self._wait_for_revival(State.PARKED)
                failures_in_row = 0
                continue
            self.state = State.RESTARTING
            self.restarts += 1
            with anyio.move_on_after(self._env.policy.delay(failures_in_row, self._rng)):
                await self._wake.wait()
            if not self._stopping:
                self._wake = anyio.Event()
        self.state = State.STOPPED
        self.first_attempt_done.set()

    async def _wait_for_revival(self, state: State) -> None:
        self.state = state
        self._on_tools_changed(self.name)
        await self._wake.wait()
        self._wake = anyio.Event()

    async def _attempt(self) -> bool:
        """One connection from spawn to end; returns whether the handshake completed."""
        self.state = State.CONNECTING
        self._end = anyio.Event()
        self._served_call = False
        self._connected_at = None
        self.app_state = None
        self._http_failure: str | None = None
        connected = False
        transport: StdioTransport | None = None
        url: str | None = None
        started = time.monotonic()
        try:
            with anyio.CancelScope() as deadline:
                deadline.deadline = anyio.current_time() + self.config.connect_timeout
                async with AsyncExitStack() as stack:
                    server = self._resolve()
                    self._env.redactor.register(*server.secrets)
                    resolver = self._resolver or self._env.resolver
                    if server.command is not None:
                        if self._resolver is not None:
                            # An app-bound stdio server talks to the app itself: only start it
                            # while the app's endpoint is live.
                            self._live_identity = (await self._resolver.resolve(server)).identity
                        transport = self._stdio_transport(server, stack)
                        target: Any = transport
                    else:
                        endpoint = await resolver.resolve(server)
                        self._live_identity = endpoint.identity
                        for value in endpoint.headers.values():
                            self._env.redactor.register(*credential_parts(value))
                        url = endpoint.url
                        auth = self._env.auth_for(server, endpoint.url) \
                            if self._env.auth_for is not None and server.config.auth == "oauth" else None
                        target = await self._http_transport(endpoint.url, dict(endpoint.headers), stack, auth)
                    client = Client(target, mode="legacy", message_handler=self._on_message,
                                    client_info=_CLIENT_INFO, cache=None)
                    await stack.enter_async_context(client)
                    self.pid = transport.pid if transport else None
                    self.capabilities = client.server_capabilities
                    self.server_info = client.server_info
                    self.tools = await _list_all_tools(client)
                    tasks = await stack.enter_async_context(anyio.create_task_group())
                    stack.callback(tasks.cancel_scope.cancel)
                    deadline.deadline = math.inf
                    self._tasks = tasks
                    self._client = client
                    self.connect_seconds = time.monotonic() - started
                    self.state = State.CONNECTED
                    self.reason = ""
                    self.stderr_tail = ""
                    connected = True
                    self._connected_at = time.monotonic()
                    self.attempts += 1
                    self.first_attempt_done.set()
                    self._on_tools_changed(self.name)
                    if transport is not None:
                        tasks.start_soon(self._end_when_exited, transport)
                    await self._end.wait()
                    self._client = None
            if deadline.cancelled_caught and not connected:
                self.reason = f"did not finish starting within {self.config.connect_timeout:g} s (connect_timeout)"
        except LiveEndpointUnavailable as exc:
            self.app_state = exc.state
            self.reason = self._env.redactor(exc.reason)
        except Exception as exc:
            # Our own errors (an OAuth login that is needed, say) explain more than the HTTP status.
            own = isinstance(leaf(exc), HermesError)
            self.reason = self._env.redactor((None if own else self._http_failure) or describe_failure(
                exc, command=transport.command if transport else None, url=url,
                returncode=transport.returncode if transport else None))
        finally:
            self._client = None
        if transport is not None:
            self.stderr_tail = "\n".join(transport.stderr_tail)
            if connected and not self._stopping and self.app_state is None and not self._restart_now \
                    and transport.returncode is not None:
                self.reason = f"the server exited (exit code {transport.returncode})"
        if connected:
            self._on_tools_changed(self.name)
        else:
            self.attempts += 1
        return connected

    async def _watch_liveness(self) -> None:
        """Follow the app's runtime file: reconnect when the app restarts, let go when it leaves."""
        assert self._watch is not None
        last: Any = object()
        while True:
            await anyio.sleep(self._env.watch_interval)
            try:
                identity, down = self._watch.identity(), None
            except LiveEndpointUnavailable as exc:
                identity, down = None, exc
            key = identity if down is None else ("down", down.state)
            if key == last:
                continue
            last = key
            if down is not None:
                if self.connected:
                    self.app_state = down.state
                    self.reason = self._env.redactor(down.reason)
                    self._end.set()
            elif self.connected and identity != self._live_identity:
                self._restart_now = True
                self._end.set()
            elif self.state in (State.FAILED, State.PARKED, State.RESTARTING):
                self._wake.set()

    async def _end_when_exited(self, transport: StdioTransport) -> None:
        await transport.exited.wait()
        self._end.set()

    def _stdio_transport(self, server: ResolvedServer, stack: AsyncExitStack) -> StdioTransport:
        assert server.command is not None
        self._env.logs.mkdir(parents=True, exist_ok=True)
        log: TextIO = stack.enter_context((self._env.logs / f"mcp-{self.name}.log").open("a", encoding="utf-8"))
        return StdioTransport(
            server.command, list(server.args),
            env=child_environment(self._env.parent_environ, server.env),
            cwd=server.cwd, log=log, redact=self._env.redactor,
        )

    async def _http_transport(self, url: str, headers: dict[str, str], stack: AsyncExitStack,
                              oauth: httpx2.Auth | None = None) -> Any:
        # The SDK folds HTTP failures into a generic JSON-RPC error; a response hook keeps the status
        # so "401 Unauthorized" reaches the user instead of "an error response".
        async def remember_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                self._http_failure = f"the server answered HTTP {response.status_code} {response.reason_phrase}"

        def client_factory(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                           auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
            client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth or oauth)
            client.event_hooks["response"].append(remember_status)
            return client

        if self.config.transport == "sse":
            return sse_client(url, headers=headers, httpx_client_factory=client_factory)
        http = await stack.enter_async_context(client_factory(headers=headers))
        return streamable_http_client(url, http_client=http)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._client and self._tasks:
            self._tasks.start_soon(self._refresh_tools, self._client)

    async def _refresh_tools(self, client: Client) -> None:
        try:
            self.tools = await _list_all_tools(client)
        except (MCPError, httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
        self._on_tools_changed(self.name)

    # -- calls -----------------------------------------------------------------------------------

    def _live_client(self) -> Client:
        client = self._client
        if client is None or self.state is not State.CONNECTED:
            raise ServerNotConnected(self.name, self.state.value, self.reason or "it is still starting",
                                     self.stderr_tail)
        return client

    async def _request(self, request: Awaitable[T]) -> T:
        """Run one request; a connection found closed is let go at once so the supervisor reconnects."""
        try:
            return await request
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED and self._client is not None:
                self._client = None
                self._end.set()
            raise

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        client = self._live_client()
        result = await self._request(client.call_tool(tool, arguments, read_timeout_seconds=self.config.timeout))
        if not result.is_error:
            self._served_call = True
        return result

    async def list_resources(self) -> types.ListResourcesResult:
        return await self._request(self._live_client().list_resources())

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._request(self._live_client().read_resource(uri))

    async def list_prompts(self) -> types.ListPromptsResult:
        return await self._request(self._live_client().list_prompts())

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        return await self._request(self._live_client().get_prompt(name, arguments))


async def _list_all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
