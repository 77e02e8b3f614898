"""One supervisor per configured server: connect, serve calls, restart after a crash, park.

`run()` is the supervisor loop; the owning session runs it in its task group. Each turn of the
loop is one `Attempt` (open, handshake, list tools, wait for the end), and what comes next is
decided from how the attempt ended and the turns before (`restarts.decide`, a pure function):

    idle -> starting ...   (a server whose tools are known beforehand: the first call starts it)
    starting -> connected -> Exited -> restarting (backoff) -> starting -> ...
    Failed on the first attempt, or the app is why -> failed, waits for revive() (or the app)
    Exited more than `RestartPolicy.attempts` times in a row -> parked, waits for revive()
    EndpointChanged -> reconnect at once, no budget spent
    Stopped -> stopped; run() returns

A server that stayed up for `healthy_after` seconds after its handshake, or served a successful
call, gets its budget back. Waiting is always on events (revive, stop, the app watcher, a backoff
deadline): an idle supervisor makes no wake-ups. The app watcher of an app-bound server is the one
periodic task: it looks at the runtime file in a worker thread, whatever the connection's state,
so the facts a reader gets are current after the app quit, too.

Outside `hermes.mcp`, a supervisor is its published `snapshot` and a few operations: `call`,
`request`, `stop`, `revive`, `roots_changed`, and `look_at_app` (a fresh look at the app's runtime
file before saying why its tools are missing).
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from hermes.apps.liveness import AppFacts, Finding
from hermes.config.model import ServerConfig
from hermes.config.resolve import ResolvedServer
from hermes.mcp.attempt import Attempt, Live
from hermes.mcp.endpoint import ConfiguredEndpoint, EndpointSource, Identity, LiveEndpointSource
from hermes.mcp.handlers import ServerCallbacks
from hermes.mcp.outcomes import (
    AppGone,
    Counter,
    Ended,
    EndpointChanged,
    Exited,
    Failed,
    RestartPolicy,
    Signal,
    Stopped,
)
from hermes.mcp.requests import Subscribe, UpstreamRequest
from hermes.mcp.restarts import History, Step, decide, healthy
from hermes.mcp.sdk import connection_closed
from hermes.mcp.snapshot import ConnectionSnapshot, ServerNotConnected
from hermes.mcp.states import WAITING_FOR_RELOAD, ConnectionState
from hermes.mcp.tasks import Progress, call_as_task, runs_as_task
from hermes.mcp.transports import TransportOpener
from hermes.security.clean import clean_text

__all__ = ["RestartPolicy", "ServerConnection", "ServerNotConnected"]
T = TypeVar("T")
log = logging.getLogger(__name__)  # debug lines: what `hermes --debug` shows of each server


class ServerConnection:
    def __init__(self, name: str, config: ServerConfig, resolve: Callable[[], ResolvedServer],
                 opener: TransportOpener, *, policy: RestartPolicy, on_change: Callable[[str], None],
                 callbacks: ServerCallbacks, endpoint: EndpointSource | None = None,
                 disabled_reason: str | None = None, watch_interval: float = 0.5,
                 idle_tools: tuple[types.Tool, ...] | None = None) -> None:
        """`idle_tools`: the server's tools as known without starting it (a built-in toolset's
        definitions); it then offers them idle and starts on the first call."""
        self.name = name
        self._config = config
        self._resolve = resolve
        self._opener = opener
        self._callbacks = callbacks
        self._policy = policy
        self._on_change = on_change
        self._endpoint: EndpointSource = endpoint or ConfiguredEndpoint()
        self._watch_interval = watch_interval
        state = ConnectionState.DISABLED if disabled_reason else \
            ConnectionState.IDLE if idle_tools is not None else ConnectionState.STARTING
        self._snapshot = ConnectionSnapshot(name, state, reason=disabled_reason or "", tools=idle_tools or (),
                                            app_bound=isinstance(self._endpoint, LiveEndpointSource))
        self._attempts = Counter()
        self._first_done = anyio.Event()
        self._attempt: Attempt | None = None
        self._live_identity: Identity | None = None
        self._last_look: tuple[Identity | None, AppFacts] | None = None
        # What the last failed connect found of the app endpoint it went to: (identity, answers).
        self._connect_verdict: tuple[Identity, bool] | None = None
        self._wake = Signal()
        self._stopping = anyio.Event()
        self._served_call = False
        self._connected_at: float | None = None
        self._rng = random.Random()
        if state is not ConnectionState.STARTING:
            self._first_done.set()

    @property
    def snapshot(self) -> ConnectionSnapshot:
        return self._snapshot

    def _publish(self, **changes: Any) -> None:
        self._snapshot = replace(self._snapshot, **changes)
        self._on_change(self.name)

    # -- control -------------------------------------------------------------------------------

    def stop(self) -> None:
        self._stopping.set()
        if self._attempt is not None:
            self._attempt.mailbox.post(Stopped())
            self._attempt.abandon()
        self._wake.set()

    def revive(self) -> bool:
        """Give a failed or parked server a fresh start; True if it was waiting for one."""
        if self._snapshot.state in WAITING_FOR_RELOAD:
            self._wake.set()
            return True
        return False

    async def first_attempt(self) -> None:
        """Until the first attempt has connected or failed."""
        await self._first_done.wait()

    async def next_attempt(self, after: int) -> None:
        """Wait until more than `after` attempts have connected or failed (bounded by connect_timeout)."""
        with anyio.move_on_after(self._config.connect_timeout + 1):
            await self._attempts.beyond(after)

    # -- the supervisor loop -------------------------------------------------------------------

    async def run(self) -> None:
        if self._snapshot.state is ConnectionState.DISABLED:
            return
        try:
            endpoint = self._endpoint
            if not isinstance(endpoint, LiveEndpointSource):
                # No task group where nothing runs beside the loop. (Its cost per call, once put at a
                # quarter of a percent, measured nil against a raw client under five more levels.)
                await self._supervise()
                return
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._watch_app, endpoint)
                await self._supervise()
                tasks.cancel_scope.cancel()
        finally:
            self._callbacks.close()

    async def _supervise(self) -> None:
        if self._snapshot.state is ConnectionState.IDLE:
            await self._wake.wait()  # the first call (or stop)
        history = History()
        while not self._stopping.is_set():
            outcome = await self._one_attempt()
            self._first_done.set()
            if self._stopping.is_set():
                break
            was_healthy = healthy(served_call=self._served_call, connected_at=self._connected_at,
                                  now=anyio.current_time(), policy=self._policy)
            decision = decide(outcome, history, was_healthy=was_healthy, policy=self._policy, rng=self._rng)
            history = decision.history
            if decision.step is Step.STOP:
                break
            if decision.step is Step.RECONNECT:
                self._publish(restarts=history.restarts)
                continue
            changes: dict[str, Any] = {"state": decision.state, "reason": decision.reason}
            if decision.app is not None:
                changes["app"] = decision.app
            if decision.step is Step.RESTART:
                changes["restarts"] = history.restarts
            self._publish(**changes)
            await self._wake.wait(math.inf if decision.delay is None else decision.delay)
        self._publish(state=ConnectionState.STOPPED)

    async def _one_attempt(self) -> Ended:
        if self._stopping.is_set():
            return Stopped()
        self._served_call = False
        self._connected_at = None
        self._publish(state=ConnectionState.STARTING)
        log.debug("server %s: starting (attempt %d)", self.name, self._attempts.count + 1)
        attempt = self._attempt = Attempt(self.name, self._config, self._resolve, self._opener, self._endpoint,
                                          self._callbacks, connected=self._connected,
                                          tools_changed=lambda tools: self._publish(tools=tuple(tools)),
                                          denied=lambda denials: self._publish(denials=denials))
        try:
            outcome = await attempt.run()
        finally:
            self._attempt = None
            self._live_identity = None
        answers = outcome.app.endpoint_answers if isinstance(outcome, Failed) and outcome.app else None
        self._connect_verdict = (attempt.identity, answers) if attempt.identity and answers is not None else None
        changes: dict[str, Any] = {"pid": None, "live_pid": None, "stderr_tail": attempt.stderr_tail,
                                   "reason": getattr(outcome, "reason", ""), "sandbox": attempt.sandbox}
        if attempt.live is None:
            self._attempts.bump()
            changes["attempts"] = self._attempts.count
        self._publish(**changes)
        log.debug("server %s: the attempt ended: %s %s", self.name, type(outcome).__name__,
                  getattr(outcome, "reason", ""))
        return outcome

    def _connected(self, live: Live) -> None:
        self._connected_at = anyio.current_time()
        self._live_identity = live.link.identity
        process = live.link.process
        self._attempts.bump()
        self._publish(state=ConnectionState.CONNECTED, reason="", stderr_tail="", tools=tuple(live.tools),
                      capabilities=live.client.server_capabilities, server_info=live.client.server_info,
                      protocol=live.client.protocol_version or "",
                      connect_seconds=live.seconds, attempts=self._attempts.count,
                      pid=process.pid if process else None, sandbox=process.sandbox_state if process else "",
                      live_pid=live.link.identity[1] if live.link.identity else None)
        self._first_done.set()
        log.debug("server %s: connected in %.0f ms, protocol %s, %d tools, sandbox %s", self.name,
                  live.seconds * 1000, self._snapshot.protocol, len(live.tools), self._snapshot.sandbox or "-")

    # -- the app behind an app-bound server ------------------------------------------------------

    async def _watch_app(self, source: LiveEndpointSource) -> None:
        """Follow the app's runtime file: reconnect when the app restarts, let go when it leaves, and
        keep the facts current in every state (an app that quit normally is `app_not_running`)."""
        while True:
            await anyio.sleep(self._watch_interval)
            await self.look_at_app()

    async def look_at_app(self) -> None:
        """Look at the app's runtime file now (the watcher's round, or a caller about to say why
        the app's tools are not there: the facts it reads must be those of this moment)."""
        source = self._endpoint
        if not isinstance(source, LiveEndpointSource):
            return
        try:
            identity, facts = await source.look()
        except Exception as exc:  # the watcher survives anything a runtime file holds
            identity, facts = None, AppFacts(Finding.FILE_INVALID,
                                             f"the runtime file could not be used ({type(exc).__name__})")
        self._observed(identity, replace(facts, detail=clean_text(facts.detail, self._opener.redactor)))

    def _observed(self, identity: Identity | None, facts: AppFacts) -> None:
        previous = self._last_look
        if (identity, facts) == previous:
            return
        self._last_look = (identity, facts)
        attempt = self._attempt
        if self._snapshot.connected and attempt is not None:
            if facts.finding is not Finding.LIVE:
                # Published at once: the attempt may end first for its own reason (the connection
                # dropped as the app quit), and this look is not repeated (the same facts are no news).
                self._publish(app=facts)
                attempt.mailbox.post(AppGone(facts))
            elif identity != self._live_identity:
                attempt.mailbox.post(EndpointChanged())
            return
        verdict = self._connect_verdict
        same_endpoint = verdict is not None and facts.finding is Finding.LIVE and identity == verdict[0]
        if same_endpoint and verdict is not None:
            facts = replace(facts, endpoint_answers=verdict[1])  # what the last connect found still holds
        self._publish(app=facts)
        # Try again when something moved: the app came (back), restarted, or went. The same live
        # endpoint the last connect failed on is no news: the backoff decides when to retry it.
        moved = not same_endpoint and (previous is None or previous[0] != identity
                                       or previous[1].finding is not facts.finding)
        if moved and self._snapshot.state in (*WAITING_FOR_RELOAD, ConnectionState.RESTARTING):
            self._wake.set()

    # -- requests --------------------------------------------------------------------------------

    async def _send(self, request: Callable[[Client], Awaitable[T]]) -> T:
        """One request on the live connection; one found closed is let go at once so the supervisor
        reconnects. An idle server is started first."""
        if self._snapshot.state is ConnectionState.IDLE:
            await self._start_idle()
        attempt, live = self._live()
        try:
            return await request(live.client)
        except MCPError as exc:
            self._raise_failure(exc, attempt, live)

    async def _start_idle(self) -> None:
        self._wake.set()
        await self.next_attempt(self._attempts.count)

    def _live(self) -> tuple[Attempt, Live]:
        """The attempt and live connection a request goes out on."""
        attempt = self._attempt
        live = attempt.live if attempt is not None else None
        if attempt is None or live is None or not self._snapshot.connected:
            snap = self._snapshot
            raise ServerNotConnected(self.name, snap.state, snap.reason or "it is still starting", snap.stderr_tail)
        return attempt, live

    def _raise_failure(self, exc: MCPError, attempt: Attempt, live: Live) -> NoReturn:
        """What a request that failed with `exc` raises: a refusal in the user's terms where the
        server's HTTP answer gave one. A closed connection is let go at once."""
        if connection_closed(exc) and attempt.live is live:
            attempt.mailbox.post(Exited("the connection closed"))
            if self._attempt is attempt:
                self._publish(state=ConnectionState.RESTARTING)  # not connected from this moment
        refusal = live.link.http.take_refusal()
        if refusal is not None:
            raise refusal from None  # says why in the user's terms (and what to run)
        raise exc

    async def call(self, tool: str, arguments: dict[str, Any], *,
                   on_progress: Progress | None = None) -> types.CallToolResult:
        """Call one tool: as an MCP task when the tool says it runs as one; progress goes to `on_progress`.
        The request is made here, not through `_send`: one coroutine fewer on the path every call takes."""
        timeout = self._config.timeout
        log.debug("server %s: calling %s", self.name, tool)
        if self._snapshot.state is ConnectionState.IDLE:
            await self._start_idle()
        attempt, live = self._live()
        try:
            if runs_as_task(self._snapshot.tool(tool)):
                result = await call_as_task(live.client, tool, arguments, timeout=timeout, on_progress=on_progress)
            else:
                result = await live.client.call_tool(tool, arguments, read_timeout_seconds=timeout,
                                                     progress_callback=on_progress)
        except MCPError as exc:
            self._raise_failure(exc, attempt, live)
        if not result.is_error:
            self._served_call = True
        else:
            self._observe_failure(result)
        return result

    def _observe_failure(self, result: types.CallToolResult) -> None:
        """A failed call's text may say what the sandbox refused (a server reports EACCES as a result)."""
        attempt = self._attempt
        process = attempt.live.link.process if attempt is not None and attempt.live is not None else None
        if process is not None:
            text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
            process.observe(self._opener.redactor(text))

    async def request(self, request: UpstreamRequest[T]) -> T:
        """Resources, prompts and completions (see `hermes.mcp.requests`)."""
        attempt = self._attempt
        if isinstance(request, Subscribe) and attempt is not None and attempt.modern:
            # 2026-07-28 has no resources/subscribe: the URI joins the connection's listen stream.
            await attempt.watch_resource(request.uri, request.on)
            return None  # Subscribe answers nothing
        return await self._send(request.send)

    async def roots_changed(self) -> None:
        """Tell the server its roots changed (it asks for them again)."""
        attempt = self._attempt
        live = attempt.live if attempt is not None else None
        if live is None:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks the helper deprecated for 2026-era servers
            with contextlib.suppress(MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await live.client.send_roots_list_changed()
