"""What an upstream server may ask of hermes as its client: sampling, elicitation, roots; and logs.

Whoever owns the model and the user (the agent in `hermes chat`, the CLI in `hermes tools call`,
`hermes mcp serve` forwarding to its own client) passes a `ClientHandlers` to the session; this
layer never decides how to ask a user or a model anything. Every connection declares the three
capabilities, so servers that check for them offer all their tools, and every request gets a
protocol-correct answer: without a handler, sampling is refused with the reason, elicitation is
declined. Roots are declared only when there are roots to give: the server's `roots:` setting, or
the roots of the client connected to `hermes mcp serve`. Otherwise hermes declares none, so a
server keeps the folders it was configured with (server-filesystem replaces its folders with
whatever roots its client gives, and hermes's own working folder is nobody's choice).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp.client import ClientRequestContext
from pydantic import BaseModel

from hermes.config.agent_settings import SamplingSettings
from hermes.files import BoundedLog
from hermes.security.clean import clean_text, clean_value
from hermes.security.redact import Redactor

SamplingResult = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData
# (server, its `sampling:` settings, the request): each server's bounds travel with its request.
SamplingHandler = Callable[[str, SamplingSettings, types.CreateMessageRequestParams], Awaitable[SamplingResult]]
ElicitationHandler = Callable[[str, types.ElicitRequestParams], Awaitable[types.ElicitResult | types.ErrorData]]
RootsHandler = Callable[[str], Awaitable[list[types.Root]]]
LogHandler = Callable[[str, types.LoggingMessageNotificationParams], Awaitable[None]]
ResourceUpdatedHandler = Callable[[str, str], Awaitable[None]]  # (server, uri)
ListChangedHandler = Callable[[str, str], Awaitable[None]]  # (server, "prompts" | "resources")

NO_MODEL = ("hermes has no model to sample with here: configure `model:` in config.yaml (see `hermes chat`), "
            "or allow sampling for this server")


@dataclass
class ClientHandlers:
    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    roots: RootsHandler | None = None
    logging: LogHandler | None = None  # besides the server's log file, which always gets the message
    sampling_with_tools: bool = False  # the sampling handler can also offer the server's tools to the model
    resource_updated: ResourceUpdatedHandler | None = None  # a subscribed resource changed upstream
    list_changed: ListChangedHandler | None = None  # a server's prompts or resources changed


M = TypeVar("M", bound=BaseModel)


def _visible_model(params: M, redactor: Redactor) -> M:
    """What a server asks the model or the user, with no hidden characters anywhere in it, and no
    secret: a question is server output like any result."""
    return type(params).model_validate(clean_value(params.model_dump(mode="json", by_alias=True,
                                                                     exclude_none=True), redactor))


def path_roots(paths: list[str] | tuple[str, ...]) -> list[types.Root]:
    """Folders as MCP roots (`file://` URIs); a value that already is a URI is kept."""
    roots = []
    for path in paths:
        if "://" in path:
            roots.append(types.Root(uri=path))  # type: ignore[arg-type]
        else:
            folder = Path(path).expanduser().resolve()
            roots.append(types.Root(uri=folder.as_uri(), name=folder.name or str(folder)))  # type: ignore[arg-type]
    return roots


# The key a 2026-07-28 server gave its question in an input-required round (the SDK's driver passes it
# as the request id), so that whoever forwards the question (`serve`) can keep the server's own key.
INPUT_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_input_key", default=None)


@contextlib.contextmanager
def _asked_as(context: ClientRequestContext) -> Iterator[None]:
    token = INPUT_KEY.set(str(context.request_id) if context.request_id is not None else None)
    try:
        yield
    finally:
        INPUT_KEY.reset(token)


class ServerCallbacks:
    """The SDK callbacks of one upstream connection, bound to its server's name and log."""

    def __init__(self, server: str, handlers: ClientHandlers, *, roots: tuple[str, ...] | None, log: Path,
                 redactor: Redactor, sampling: SamplingSettings | None = None) -> None:
        self.server = server
        self.handlers = handlers
        self.sampling_settings = sampling or SamplingSettings()
        self.configured_roots = roots
        self.log_path = log
        self.redactor = redactor
        self._log: BoundedLog | None = None

    async def sampling(self, context: ClientRequestContext,
                       params: types.CreateMessageRequestParams) -> SamplingResult:
        if self.handlers.sampling is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=NO_MODEL)
        with _asked_as(context):
            return await self.handlers.sampling(self.server, self.sampling_settings,
                                                _visible_model(params, self.redactor))

    async def elicitation(self, context: ClientRequestContext,
                          params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        if self.handlers.elicitation is None:
            return types.ElicitResult(action="decline")
        with _asked_as(context):
            return await self.handlers.elicitation(self.server, _visible_model(params, self.redactor))

    @property
    def offers_roots(self) -> bool:
        return self.configured_roots is not None or self.handlers.roots is not None

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        if self.configured_roots is not None:
            return types.ListRootsResult(roots=path_roots(self.configured_roots))
        if self.handlers.roots is not None:
            with _asked_as(context):
                return types.ListRootsResult(roots=await self.handlers.roots(self.server))
        return types.ListRootsResult(roots=[])  # never the folder hermes happens to run in

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log message goes into its log file, redacted, like its stderr."""
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        source = f" {params.logger}" if params.logger else ""
        line = clean_text(f"[{params.level}{source}] {data}", self.redactor)
        with contextlib.suppress(OSError, ValueError):
            if self._log is None:
                self._log = BoundedLog(self.log_path)
            self._log.write(line.replace("\n", "\n    ") + "\n")
            self._log.flush()
        if self.handlers.logging is not None:
            redacted = params.model_copy(update={"data": clean_value(params.data, self.redactor)})
            await self.handlers.logging(self.server, redacted)

    async def resource_updated(self, uri: str) -> None:
        if self.handlers.resource_updated is not None:
            await self.handlers.resource_updated(self.server, uri)

    async def list_changed(self, kind: str) -> None:
        if self.handlers.list_changed is not None:
            await self.handlers.list_changed(self.server, kind)

    def close(self) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for `mcp.Client`: sampling and elicitation declared (every request gets
        an answer), roots only when there are roots to give."""
        sampling = types.SamplingCapability(tools=types.SamplingToolsCapability()) \
            if self.handlers.sampling_with_tools else None
        options: dict[str, Any] = {"sampling_callback": self.sampling, "elicitation_callback": self.elicitation,
                                   "logging_callback": self.logging, "sampling_capabilities": sampling}
        if self.offers_roots:
            options["list_roots_callback"] = self.list_roots
        return options
