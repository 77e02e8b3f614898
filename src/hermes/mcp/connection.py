"""One supervisor per configured server: connect, serve calls, restart after a crash, park.

`run()` is the supervisor loop; the owning session runs it in its task group. Each turn of the
loop is one *attempt*: open the transport, handshake, list the tools, then wait in the attempt's
mailbox for the first outcome that ends it. Outcomes are typed and posted by whoever saw them:

    Exited           the stdio child exited, or a call found the connection closed
    EndpointChanged  the app behind an app-bound server restarted (new pid, port or token)
    AppGone          the app's endpoint went away while connected
    Stopped          the session stopped this server
    Failed           the attempt never connected (returned by the attempt itself)

and the loop decides from the outcome alone:

    connecting -> connected -> Exited -> restarting (backoff) -> connecting -> ...
    Failed on the first attempt, or AppGone/app unavailable -> failed, waits for revive()
    Exited more than `RestartPolicy.attempts` times in a row -> parked, waits for revive()
    EndpointChanged -> reconnect at once, no budget spent
    Stopped -> stopped; run() returns

A server that stayed up for `healthy_after` seconds after its handshake, or served a successful
call, gets its budget back. Waiting is always on events (revive, stop, the app watcher, a backoff
deadline): an idle supervisor makes no wake-ups. The app watcher of an app-bound server is the one
periodic task; it reads the runtime file in a worker thread.
"""

from __future__ import annotations

import contextlib
import math
import random
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from hermes import __version__
from hermes.apps.liveness import LiveEndpointUnavailable
from hermes.apps.states import AppState
from hermes.config.model import ServerConfig
from hermes.config.resolve import ResolvedServer
from hermes.errors import HermesError, leaf
from hermes.mcp.describe import describe_failure
from hermes.mcp.endpoint import ConfiguredEndpoint, EndpointSource, Identity, LiveEndpointSource
from hermes.mcp.handlers import ServerCallbacks
from hermes.mcp.states import WAITING_FOR_RELOAD, ConnectionState
from hermes.mcp.tasks import Progress, call_as_task, runs_as_task
from hermes.mcp.transports import HttpStatus, Link, TransportOpener

CLIENT_INFO = types.Implementation(name="hermes", version=__version__)
T = TypeVar("T")


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=_Page)
_MAX_PAGES = 100


class ServerNotConnected(HermesError):
    """A request to a server that is not connected; carries why."""

    def __init__(self, server: str, state: ConnectionState, reason: str, stderr_tail: str = "") -> None:
        self.server = server
        self.state = state
        self.reason = reason
        self.stderr_tail = stderr_tail
        super().__init__(f"Server '{server}' is {state.value}: {reason}")


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


# -- outcomes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exited:
    reason: str


@dataclass(frozen=True)
class EndpointChanged:
    pass


@dataclass(frozen=True)
class AppGone:
    state: AppState
    reason: str


@dataclass(frozen=True)
class Stopped:
    pass


@dataclass(frozen=True)
class Failed:
    reason: str
    app_state: AppState | None = None


Ended = Exited | EndpointChanged | AppGone | Stopped | Failed


class Mailbox:
    """Where an attempt learns how it ended: the first outcome posted wins."""

    def __init__(self) -> None:
        self.outcome: Ended | None = None
        self._posted = anyio.Event()

    def post(self, outcome: Ended) -> None:
        if self.outcome is None:
            self.outcome = outcome
            self._posted.set()

    async def wait(self) -> Ended:
        await self._posted.wait()
        assert self.outcome is not None
        return self.outcome


class Signal:
    """A level-triggered wake-up: `set()` before `wait()` is not lost; `wait()` consumes it."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self, timeout: float = math.inf) -> None:
        with anyio.move_on_after(timeout):
            await self._event.wait()
        if self._event.is_set():
            self._event = anyio.Event()


class AttemptCounter:
    """A counter others can wait on ("until more than N attempts have finished")."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = anyio.Event()

    def bump(self) -> None:
        self.count += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def beyond(self, count: int) -> None:
        while self.count <= count:
            await self._changed.wait()


# -- the supervisor ------------------------------------------------------------------------------


class ServerConnection:
    def __init__(self, name: str, config: ServerConfig, resolve: Callable[[], ResolvedServer],
                 opener: TransportOpener, *, policy: RestartPolicy, on_change: Callable[[str], None],
                 callbacks: ServerCallbacks, endpoint: EndpointSource | None = None,
                 disabled_reason: str | None = None, app_state: AppState | None = None,
                 watch_interval: float = 0.5) -> None:
        self.name = name
        self.config = config
        self._resolve = resolve
        self._opener = opener
        self._callbacks = callbacks
        self._policy = policy
        self._on_change = on_change
        self._endpoint: EndpointSource = endpoint or ConfiguredEndpoint()
        self._watch_interval = watch_interval
        self.state = ConnectionState.DISABLED if disabled_reason else ConnectionState.STARTING
        self.reason = disabled_reason or ""
        # Set when the app behind an app-bound server is why there is no connection.
        self.app_state = app_state
        self.stderr_tail = ""
        self.tools: list[types.Tool] = []
        self.capabilities: types.ServerCapabilities | None = None
        self.server_info: types.Implementation | None = None
        self.connect_seconds: float | None = None
        self.restarts = 0
        self.pid: int | None = None
        self.live_identity: Identity | None = None
        self.attempts = AttemptCounter()
        self.first_attempt_done = anyio.Event()
        self._client: Client | None = None
        self._http: HttpStatus | None = None
        self._tasks: TaskGroup | None = None
        self._mailbox = Mailbox()
        self._attempt_scope: anyio.CancelScope | None = None
        self._wake = Signal()
        self._stopping = anyio.Event()
        self._served_call = False
        self._connected_at: float | None = None
        self._rng = random.Random()
        if disabled_reason:
            self.first_attempt_done.set()

    # -- control -------------------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping.set()
        self._mailbox.post(Stopped())
        if self._attempt_scope is not None and not self.connected:
            self._attempt_scope.cancel()
        self._wake.set()

    def revive(self) -> bool:
        """Give a failed or parked server a fresh start; True if it was waiting for one."""
        if self.state in WAITING_FOR_RELOAD:
            self._wake.set()
            return True
        return False

    async def next_attempt(self, after: int) -> None:
        """Wait until more than `after` attempts have connected or failed (bounded by connect_timeout)."""
        with anyio.move_on_after(self.config.connect_timeout + 1):
            await self.attempts.beyond(after)

    @property
    def connected(self) -> bool:
        return self.state is ConnectionState.CONNECTED and self._client is not None

    @property
    def live_pid(self) -> int | None:
        """For an app-bound server: the app process the current connection goes to."""
        return self.live_identity[1] if self.connected and self.live_identity else None

    @property
    def app_bound(self) -> bool:
        return isinstance(self._endpoint, LiveEndpointSource)

    # -- the supervisor loop -------------------------------------------------------------------

    async def run(self) -> None:
        if self.state is ConnectionState.DISABLED:
            return
        try:
            async with anyio.create_task_group() as tasks:
                if isinstance(self._endpoint, LiveEndpointSource):
                    tasks.start_soon(self._watch_app, self._endpoint)
                await self._supervise()
                tasks.cancel_scope.cancel()
        finally:
            self._callbacks.close()

    async def _supervise(self) -> None:
        failures_in_row = 0
        ever_connected = False
        while not self._stopping.is_set():
            outcome = await self._attempt()
            self.first_attempt_done.set()
            if isinstance(outcome, Stopped) or self._stopping.is_set():
                break
            if isinstance(outcome, EndpointChanged):
                self.restarts += 1
                continue
            if isinstance(outcome, AppGone) or (isinstance(outcome, Failed) and outcome.app_state is not None):
                # The app is the reason: wait for the watcher (or a reload) to see it come back, and
                # look again now and then: a bridge restarted on the same port changes no file.
                self.app_state = outcome.state if isinstance(outcome, AppGone) else outcome.app_state
                self.reason = outcome.reason
                self._set_state(ConnectionState.FAILED)
                await self._wake.wait(self._policy.max_delay)
                failures_in_row = 0
                continue
            self.reason = outcome.reason
            connected = isinstance(outcome, Exited)
            ever_connected = ever_connected or connected
            if connected and self._was_healthy():
                failures_in_row = 0
            failures_in_row += 1
            if not ever_connected:
                await self._wait_for_revival(ConnectionState.FAILED)
                failures_in_row = 0
                continue
            if failures_in_row > self._policy.attempts:
                self.reason = f"crashed {failures_in_row} times in a row; parked until the next reload " \
                              f"(last: {self.reason})"
                await self._wait_for_revival(ConnectionState.PARKED)
                failures_in_row = 0
                continue
            self._set_state(ConnectionState.RESTARTING)
            self.restarts += 1
            await self._wake.wait(self._policy.delay(failures_in_row, self._rng))
        self._set_state(ConnectionState.STOPPED)

    def _was_healthy(self) -> bool:
        """Healthy means it stayed up (counted from the handshake, not the spawn) or served a call."""
        if self._served_call:
            return True
        up_since = self._connected_at
        return up_since is not None and anyio.current_time() - up_since >= self._policy.healthy_after

    async def _wait_for_revival(self, state: ConnectionState) -> None:
        self._set_state(state)
        await self._wake.wait()

    def _set_state(self, state: ConnectionState) -> None:
        self.state = state
        self._on_change(self.name)

    # -- one attempt -----------------------------------------------------------------------------

    async def _attempt(self) -> Ended:
        """One connection from opening the transport to its end."""
        self.app_state = None
        self._set_state(ConnectionState.STARTING)
        self._served_call = False
        self._connected_at = None
        mailbox = self._mailbox = Mailbox()
        if self._stopping.is_set():
            return Stopped()
        link: Link | None = None
        outcome: Ended | None = None
        started = anyio.current_time()
        try:
            with anyio.CancelScope(deadline=started + self.config.connect_timeout) as scope:
                self._attempt_scope = scope
                async with AsyncExitStack() as stack:
                    link = await self._opener.open(self.name, self._resolve(), self._endpoint, stack=stack)
                    client = Client(link.transport, mode="legacy", message_handler=self._on_message,
                                    client_info=CLIENT_INFO, cache=None, **self._callbacks.client_options())
                    await stack.enter_async_context(client)
                    tools = self._redacted(await _list_all_tools(client))
                    scope.deadline = math.inf
                    self._connected(client, link, tools, anyio.current_time() - started)
                    async with anyio.create_task_group() as tasks:
                        self._tasks = tasks
                        if link.process is not None:
                            tasks.start_soon(self._post_exit, link, mailbox)
                        outcome = await mailbox.wait()
                        tasks.cancel_scope.cancel()
                    self._client = None
            if outcome is None:
                outcome = Stopped() if self._stopping.is_set() else Failed(
                    f"did not finish starting within {self.config.connect_timeout:g} s (connect_timeout)")
        except LiveEndpointUnavailable as exc:
            outcome = Failed(self._opener.redactor(exc.reason), exc.state)
        except Exception as exc:
            outcome = self._classify(exc, link, connected=self._connected_at is not None)
            if isinstance(outcome, Failed) and link is not None and link.identity and link.process is None \
                    and not await _answers(link.url):
                # The app's runtime file is valid and its pid alive, but nothing listens where it says.
                outcome = Failed(f"the app's endpoint {_origin(link.url)} does not answer",
                                 AppState.ENDPOINT_UNAVAILABLE)
        finally:
            self._client = None
            self._tasks = None
            self._attempt_scope = None
        if link is not None and link.process is not None:
            self.stderr_tail = "\n".join(link.process.stderr_tail)
            if isinstance(outcome, Exited) and link.process.returncode is not None:
                # A call may have noticed the closed pipe first; the exit status says more.
                outcome = Exited(f"the server exited (exit code {link.process.returncode})")
        if self._connected_at is None:
            self.attempts.bump()
        else:
            self._on_change(self.name)
        return outcome

    def _connected(self, client: Client, link: Link, tools: list[types.Tool], seconds: float) -> None:
        self._client = client
        self._http = link.http
        if link.process is not None:
            link.process.settled = True
        self.pid = link.process.pid if link.process else None
        self.live_identity = link.identity
        self.capabilities = client.server_capabilities
        self.server_info = client.server_info
        self.tools = tools
        self.connect_seconds = seconds
        self.reason = ""
        self.stderr_tail = ""
        self._connected_at = anyio.current_time()
        self.state = ConnectionState.CONNECTED
        self.attempts.bump()
        self.first_attempt_done.set()
        self._on_change(self.name)

    def _classify(self, exc: BaseException, link: Link | None, *, connected: bool) -> Ended:
        process = link.process if link else None
        # Our own errors (an OAuth login that is needed, say) explain more than the HTTP status.
        own = isinstance(leaf(exc), HermesError)
        http_failure = link.http.failure if link and not own else None
        reason = http_failure or describe_failure(
            exc, command=process.command if process else None, url=link.url if link else None,
            returncode=process.returncode if process else None)
        reason = self._opener.redactor(reason)
        return Exited(reason) if connected else Failed(reason)

    async def _post_exit(self, link: Link, mailbox: Mailbox) -> None:
        assert link.process is not None
        await link.process.exited.wait()
        mailbox.post(Exited(f"the server exited (exit code {link.process.returncode})"))

    async def _watch_app(self, source: LiveEndpointSource) -> None:
        """Follow the app's runtime file: reconnect when the app restarts, let go when it leaves."""
        last: object = None
        while True:
            await anyio.sleep(self._watch_interval)
            try:
                identity: Identity | None = await source.identity()
                gone: AppGone | None = None
            except LiveEndpointUnavailable as exc:
                identity, gone = None, AppGone(exc.state, self._opener.redactor(exc.reason))
            except Exception as exc:  # the watcher survives anything a runtime file holds
                identity, gone = None, AppGone(AppState.ENDPOINT_UNAVAILABLE,
                                               self._opener.redactor(f"the runtime file could not be used "
                                                                     f"({type(exc).__name__})"))
            seen = identity if gone is None else (gone.state, gone.reason)
            if seen == last:
                continue
            last = seen
            if gone is not None:
                if self.connected:
                    self._mailbox.post(gone)
            elif self.connected and identity != self.live_identity:
                self._mailbox.post(EndpointChanged())
            elif self.state in (*WAITING_FOR_RELOAD, ConnectionState.RESTARTING):
                self._wake.set()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification) and self._client and self._tasks:
            self._tasks.start_soon(self._refresh_tools, self._client)
        elif isinstance(message, types.ResourceUpdatedNotification) and self._tasks:
            self._tasks.start_soon(self._callbacks.resource_updated, str(message.params.uri))

    async def _refresh_tools(self, client: Client) -> None:
        try:
            tools = self._redacted(await _list_all_tools(client))
        except (MCPError, httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
        if client is self._client:
            self.tools = tools
            self._on_change(self.name)

    def _redacted(self, tools: list[types.Tool]) -> list[types.Tool]:
        """Definitions as the server gave them, minus any secret it echoes (a token it was started
        with, in a description or a schema); redacted once here, so every listing and every model
        downstream gets the clean copy."""
        redact = self._opener.redactor
        clean = []
        for tool in tools:
            update: dict[str, Any] = {"input_schema": redact.value(tool.input_schema)}
            if tool.description:
                update["description"] = redact(tool.description)
            if tool.title:
                update["title"] = redact(tool.title)
            if tool.output_schema is not None:
                update["output_schema"] = redact.value(tool.output_schema)
            clean.append(tool.model_copy(update=update))
        return clean

    # -- requests --------------------------------------------------------------------------------

    def _live_client(self) -> Client:
        client = self._client
        if client is None or self.state is not ConnectionState.CONNECTED:
            raise ServerNotConnected(self.name, self.state, self.reason or "it is still starting", self.stderr_tail)
        return client

    async def _request(self, request: Callable[[Client], Awaitable[T]]) -> T:
        """One request; a connection found closed is let go at once so the supervisor reconnects."""
        mailbox = self._mailbox
        client = self._live_client()
        try:
            return await request(client)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED and self._client is client:
                self._client = None  # not connected from this moment, before the attempt winds down
                mailbox.post(Exited("the connection closed"))
            refusal = self._http.take_refusal() if self._http is not None else None
            if refusal is not None:
                raise refusal from None  # says why in the user's terms (and what to run)
            raise

    async def call_tool(self, tool: str, arguments: dict[str, Any], *,
                        on_progress: Progress | None = None) -> types.CallToolResult:
        """Call one tool: as an MCP task when the tool says it runs as one; progress goes to `on_progress`."""
        definition = next((t for t in self.tools if t.name == tool), None)
        if runs_as_task(definition):
            result = await self._request(lambda c: call_as_task(c, tool, arguments, timeout=self.config.timeout,
                                                                on_progress=on_progress))
        else:
            result = await self._request(lambda c: c.call_tool(
                tool, arguments, read_timeout_seconds=self.config.timeout, progress_callback=on_progress))
        if not result.is_error:
            self._served_call = True
        return result

    async def roots_changed(self) -> None:
        """Tell the server its roots changed (it asks for them again)."""
        client = self._client
        if client is None:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks the helper deprecated for 2026-era servers
            with contextlib.suppress(MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await client.send_roots_list_changed()

    async def complete(self, ref: types.PromptReference | types.ResourceTemplateReference,
                       argument: dict[str, str], context: dict[str, str] | None = None) -> types.CompleteResult:
        return await self._request(lambda c: c.complete(ref, argument, context_arguments=context))

    async def list_resource_templates(self) -> types.ListResourceTemplatesResult:
        pages = await _pages(lambda cursor: self._request(lambda c: c.list_resource_templates(cursor=cursor)))
        return types.ListResourceTemplatesResult(resource_templates=[t for p in pages for t in p.resource_templates])

    async def list_resources(self) -> types.ListResourcesResult:
        pages = await _pages(lambda cursor: self._request(lambda c: c.list_resources(cursor=cursor)))
        return types.ListResourcesResult(resources=[r for p in pages for r in p.resources])

    async def subscribe_resource(self, uri: str, subscribe: bool) -> None:
        await self._request(lambda c: c.subscribe_resource(uri) if subscribe else c.unsubscribe_resource(uri))

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        return await self._request(lambda c: c.read_resource(uri))

    async def list_prompts(self) -> types.ListPromptsResult:
        pages = await _pages(lambda cursor: self._request(lambda c: c.list_prompts(cursor=cursor)))
        return types.ListPromptsResult(prompts=[p for page in pages for p in page.prompts])

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        return await self._request(lambda c: c.get_prompt(name, arguments))


def _origin(url: str | None) -> str:
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}"


async def _answers(url: str | None, timeout: float = 2.0) -> bool:
    """Whether anything accepts a TCP connection where `url` points (loopback app endpoints only)."""
    parts = urlsplit(url or "")
    if not parts.hostname or parts.port is None:
        return False
    with anyio.move_on_after(timeout):
        try:
            stream = await anyio.connect_tcp(parts.hostname, parts.port)
        except OSError:
            return False
        await stream.aclose()
        return True
    return False


async def _pages(fetch: Callable[[str | None], Awaitable[P]]) -> list[P]:
    """Every page of a paginated listing (at most _MAX_PAGES: a server's cursor cannot loop us)."""
    pages: list[P] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await fetch(cursor)
        pages.append(page)
        cursor = page.next_cursor
        if not cursor:
            break
    return pages


async def _list_all_tools(client: Client) -> list[types.Tool]:
    return [tool for page in await _pages(lambda cursor: client.list_tools(cursor=cursor)) for tool in page.tools]
