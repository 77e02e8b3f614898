"""One connection attempt: open the transport, handshake, list the tools, then wait for its end.

The attempt reports to its supervisor through two callbacks (`connected` once the tools are
listed, `tools_changed` after a server's `list_changed`) and returns how it ended (see
`outcomes`). Everything it hands over that a server produced is redacted first: failure reasons,
and the tool definitions, which may echo a token the server was started with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_MODERN_VERSION, MODERN_PROTOCOL_VERSIONS

from hermes import __version__
from hermes.apps.liveness import AppFacts, Finding, LiveEndpointUnavailable
from hermes.config.model import ServerConfig
from hermes.config.resolve import ResolvedServer
from hermes.errors import HermesError, leaf
from hermes.mcp.describe import describe_failure
from hermes.mcp.endpoint import EndpointSource, Identity
from hermes.mcp.handlers import ServerCallbacks
from hermes.mcp.outcomes import Ended, Exited, Failed, Mailbox, Stopped
from hermes.mcp.requests import list_all_tools
from hermes.mcp.task_extension import TasksExtension
from hermes.mcp.transports import Link, TransportOpener
from hermes.security.clean import clean_text, clean_value

CLIENT_INFO = types.Implementation(name="hermes", version=__version__)
_LISTEN_RETRY, _LISTEN_RETRY_MAX = 1.0, 30.0
_LISTEN_ACK_WAIT = 10.0


@dataclass(frozen=True)
class Live:
    """The connected end of an attempt."""

    client: Client
    link: Link
    tools: list[types.Tool]
    seconds: float  # from opening the transport to the tools listed


_HEADER_REFUSED = -32020


def _refused_for_era(exc: BaseException) -> bool:
    """A Streamable HTTP server that refused a request for lack of the 2026-07-28 protocol header."""
    said = leaf(exc)
    # -32020: the 2026-07-28 header is missing or disagrees (the official conformance suite's
    # stateless server says it so); other servers say it in words.
    return isinstance(said, MCPError) and (said.error.code == _HEADER_REFUSED or
                                           "mcp-protocol-version" in (said.error.message or "").lower())


class Attempt:
    def __init__(self, name: str, config: ServerConfig, resolve: Callable[[], ResolvedServer], opener: TransportOpener,
                 endpoint: EndpointSource, callbacks: ServerCallbacks, *, connected: Callable[[Live], None],
                 tools_changed: Callable[[list[types.Tool]], None],
                 denied: Callable[[tuple[str, ...]], None] | None = None) -> None:
        self.name = name
        self.mailbox = Mailbox()
        self.live: Live | None = None
        self.identity: Identity | None = None  # of the app endpoint this attempt went to, once known
        self.stderr_tail = ""
        self._config = config
        self._resolve = resolve
        self._opener = opener
        self._endpoint = endpoint
        self._callbacks = callbacks
        self._connected = connected
        self._tools_changed = tools_changed
        self._denied = denied
        self.sandbox = ""  # how the sandbox of this attempt's process stood
        self._scope: anyio.CancelScope | None = None
        self._tasks: TaskGroup | None = None
        self._resources: set[str] = set()  # resources subscribed to on a 2026-07-28 listen stream
        self._relisten = anyio.Event()
        self._acknowledged = anyio.Event()
        self._handshake_refused = False

    def abandon(self) -> None:
        """Stop an attempt that has not connected yet (a connected one ends through its mailbox)."""
        if self._scope is not None and self.live is None:
            self._scope.cancel()

    async def run(self) -> Ended:
        outcome = await self._run(self._config.protocol)
        if self._handshake_refused and self.mailbox.outcome is None:
            # `auto` probes `server/discover` and falls back to the handshake when the probe fails,
            # timing out included (a slow server on a loaded machine). A server that speaks only
            # 2026-07-28 over HTTP then refuses the handshake for want of the protocol header: it
            # is modern, so it is spoken to as such, at once, instead of being reported failed.
            outcome = await self._run(LATEST_MODERN_VERSION)
        return outcome

    async def _run(self, mode: str) -> Ended:
        link: Link | None = None
        outcome: Ended | None = None
        self._handshake_refused = False
        started = anyio.current_time()
        try:
            if self._config.is_stdio:
                with anyio.CancelScope() as fetching:
                    self._scope = fetching
                    await self._opener.warm(self.name, self._resolve())
                if fetching.cancel_called:
                    return Stopped()  # abandoned while its package was being fetched
                started = anyio.current_time()
            with anyio.CancelScope(deadline=started + self._config.connect_timeout) as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    link = await self._opener.open(self.name, self._resolve(), self._endpoint, stack=stack,
                                                   on_denial=self._denied)
                    self.identity = link.identity
                    # Every log level, as a handshake-era server sends them: the server's log file gets all.
                    client = Client(link.transport, mode=mode, message_handler=self._on_message,
                                    client_info=CLIENT_INFO, log_level="debug", extensions=[TasksExtension()],
                                    **self._callbacks.client_options())
                    await stack.enter_async_context(client)
                    tasks = await stack.enter_async_context(anyio.create_task_group())
                    self._tasks = tasks
                    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                        # Listening before listing: no change between the two can be missed.
                        await tasks.start(self._listen, client)
                    tools = self._redacted(await list_all_tools(client))
                    scope.deadline = math.inf
                    self.live = Live(client, link, tools, anyio.current_time() - started)
                    if link.process is not None:
                        link.process.settled = True
                        tasks.start_soon(self._post_exit, link)
                    self._connected(self.live)
                    outcome = await self.mailbox.wait()
                    tasks.cancel_scope.cancel()
            if outcome is None:
                outcome = Stopped() if self.mailbox.outcome is not None else Failed(
                    f"did not finish starting within {self._config.connect_timeout:g} s (connect_timeout)")
        except LiveEndpointUnavailable as exc:
            outcome = Failed(self._clean(exc.reason), replace(exc.facts, detail=self._clean(exc.facts.detail)))
        except Exception as exc:
            self._handshake_refused = mode == "auto" and self.live is None and _refused_for_era(exc)
            outcome = await self._classify(exc, link)
        finally:
            self._tasks = None
            self._scope = None
        if link is not None and link.process is not None:
            self.stderr_tail = "\n".join(link.process.stderr_tail)
            self.sandbox = link.process.sandbox_state
            if isinstance(outcome, Exited) and link.process.returncode is not None:
                # A call may have noticed the closed pipe first; the exit status says more.
                outcome = Exited(f"the server exited (exit code {link.process.returncode})")
            problem = link.process.sandbox_problem
            if problem is not None and isinstance(outcome, (Exited, Failed)):
                outcome = type(outcome)(f"its sandbox could not be set up ({problem}); `hermes mcp get "
                                        f"{self.name}` shows what it shares")
        return outcome

    async def _classify(self, exc: BaseException, link: Link | None) -> Ended:
        process = link.process if link else None
        # Our own errors (an OAuth login that is needed, say) explain more than the HTTP status.
        own = isinstance(leaf(exc), HermesError)
        http_failure = link.http.failure if link and not own else None
        said = leaf(exc)
        if http_failure and isinstance(said, MCPError) and said.error.message:
            # The status alone drops the server's reason ("missing _meta keys …"): keep its words.
            http_failure = f"{http_failure}: {said.error.message}"
        reason = self._clean(http_failure or describe_failure(
            exc, command=process.command if process else None, url=link.url if link else None,
            returncode=process.returncode if process else None))
        if self.live is not None:
            return Exited(reason)
        if link is not None and link.identity and process is None:
            # The app's runtime file is valid and its pid alive: does anything listen where it says?
            answers = await _answers(link.url)
            detail = reason if answers else f"the app's endpoint {_origin(link.url)} does not answer"
            return Failed(detail, AppFacts(Finding.LIVE, detail, endpoint_answers=answers))
        return Failed(reason)

    async def _post_exit(self, link: Link) -> None:
        assert link.process is not None
        await link.process.exited.wait()
        self.mailbox.post(Exited(f"the server exited (exit code {link.process.returncode})"))

    @property
    def modern(self) -> bool:
        live = self.live
        return live is not None and live.client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def watch_resource(self, uri: str, on: bool) -> None:
        """Subscribe to (or leave) a resource on a 2026-07-28 connection: the listen stream is
        opened again with the new set of URIs; returns once the server acknowledged it."""
        (self._resources.add if on else self._resources.discard)(uri)
        acknowledged = self._acknowledged = anyio.Event()
        self._relisten.set()
        with anyio.move_on_after(_LISTEN_ACK_WAIT):
            await acknowledged.wait()

    async def _listen(self, client: Client, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                      ) -> None:
        """2026-07-28 has no standing stream: list changes (and updates of the resources subscribed
        to) come on a `subscriptions/listen` request. Its events also reach `_on_message`, as the
        notifications they stand for. A dropped stream is listened to again, after a fresh look at
        the tools (nothing is replayed). Started once the server acknowledged (or refused) it."""
        backoff, waiting = _LISTEN_RETRY, True
        while True:
            self._relisten = anyio.Event()
            try:
                async with client.listen(tools_list_changed=True, prompts_list_changed=True,
                                         resources_list_changed=True,
                                         resource_subscriptions=sorted(self._resources)) as subscription:
                    if waiting:
                        task_status.started()
                        waiting = False
                    self._acknowledged.set()
                    backoff = _LISTEN_RETRY
                    async with anyio.create_task_group() as drain:
                        async def until_changed() -> None:
                            await self._relisten.wait()
                            drain.cancel_scope.cancel()

                        drain.start_soon(until_changed)
                        async for _ in subscription:
                            pass
                        drain.cancel_scope.cancel()
                if not self._relisten.is_set():
                    return  # the server ended the subscription on purpose
            except (ListenNotSupportedError, MCPError):
                if waiting:
                    task_status.started()
                self._acknowledged.set()
                return  # it does not serve subscriptions/listen: no list changes to hear
            except (SubscriptionLost, httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError,
                    anyio.EndOfStream):
                if waiting:
                    task_status.started()
                    waiting = False
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, _LISTEN_RETRY_MAX)
                await self._refresh_tools(client)

    async def _on_message(self, message: IncomingMessage) -> None:
        live, tasks = self.live, self._tasks
        if live is None or tasks is None:
            return
        if isinstance(message, types.ToolListChangedNotification):
            tasks.start_soon(self._refresh_tools, live.client)
        elif isinstance(message, types.ResourceUpdatedNotification):
            tasks.start_soon(self._callbacks.resource_updated, str(message.params.uri))
        elif isinstance(message, types.PromptListChangedNotification):
            tasks.start_soon(self._callbacks.list_changed, "prompts")
        elif isinstance(message, types.ResourceListChangedNotification):
            tasks.start_soon(self._callbacks.list_changed, "resources")

    async def _refresh_tools(self, client: Client) -> None:
        try:
            tools = self._redacted(await list_all_tools(client))
        except (MCPError, httpx2.HTTPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
        if self.live is not None and client is self.live.client:
            self._tools_changed(tools)

    def _clean(self, reason: str) -> str:
        """A failure reason may quote what a server said: redacted and visible, like its results."""
        return clean_text(reason, self._opener.redactor)

    def _redacted(self, tools: list[types.Tool]) -> list[types.Tool]:
        """Definitions as the server gave them, minus any secret it echoes (a token it was started
        with, in a description or a schema); redacted once here, so every listing and every model
        downstream gets the clean copy."""
        redact = self._opener.redactor

        def text(value: str) -> str:
            return clean_text(value, redact)

        def value(data: Any) -> Any:
            return clean_value(data, redact)

        clean = []
        for tool in tools:
            # The name stays as the server spelled it: calls must use it. Everything shown is cleaned;
            # the registered name a model sees is sanitized on its own (`tools.naming`).
            update: dict[str, Any] = {"input_schema": value(tool.input_schema)}
            if tool.description:
                update["description"] = text(tool.description)
            if tool.title:
                update["title"] = text(tool.title)
            if tool.output_schema is not None:
                update["output_schema"] = value(tool.output_schema)
            if tool.annotations is not None and tool.annotations.title:
                update["annotations"] = tool.annotations.model_copy(update={"title": text(tool.annotations.title)})
            if tool.meta is not None:
                update["meta"] = value(tool.meta)
            clean.append(tool.model_copy(update=update))
        return clean


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
