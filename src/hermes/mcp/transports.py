"""Opening one connection's transport: which kind, to where, with which credentials.

Each kind is one small context manager in the SDK's `Transport` shape (it yields the read and
write streams): `StdioProcess` for a local server, `streamable_http` and `sse` for remote ones.
`TransportOpener.open` picks the kind for a resolved server, asks the endpoint source where it
lives, registers every credential with the redactor before any header is built, and returns a
`Link`: the transport (not yet entered) plus what an attempt needs to know about it (the process,
the app endpoint's identity, the last HTTP failure) to classify how it ended.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import anyio.to_thread
import httpx2
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from hermes.config.model import Auth
from hermes.config.model import Transport as TransportKind
from hermes.config.resolve import ResolvedServer
from hermes.config.sandbox import Confinement, SandboxMode
from hermes.errors import HermesError
from hermes.files import BoundedLog
from hermes.mcp.children import Watchdog
from hermes.mcp.describe import http_status_words
from hermes.mcp.endpoint import Endpoint, EndpointSource, Identity
from hermes.mcp.sandbox import SandboxRequest, launcher_cache
from hermes.mcp.sandbox_support import sandboxed, support
from hermes.mcp.sdk import TransportStreams, create_http_client
from hermes.mcp.stdio import MAX_MESSAGE_BYTES, StdioProcess
from hermes.security.credentials import secret_setting
from hermes.security.environment import child_environment
from hermes.security.redact import Redactor, credential_parts

# (server, url, told_why) -> auth; `told_why` hears why a request was refused (a step-up no one can grant).
AuthFor = Callable[[ResolvedServer, str, Callable[[Exception], None]], httpx2.Auth]


@dataclass
class HttpStatus:
    """The last HTTP error status seen; the SDK folds it into a generic JSON-RPC error."""

    failure: str | None = None
    # Why the last refused request was refused, in words for the user (set by the auth flow).
    refusal: Exception | None = None

    def refused(self, reason: Exception) -> None:
        self.refusal = reason

    def take_refusal(self) -> Exception | None:
        reason, self.refusal = self.refusal, None
        return reason

    def observe(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self.failure = http_status_words(response.status_code, response.reason_phrase)


@dataclass
class Link:
    """One opened-to-be transport and what is known about the other end."""

    transport: Transport
    process: StdioProcess | None = None
    url: str | None = None
    identity: Identity | None = None
    http: HttpStatus = field(default_factory=HttpStatus)


@asynccontextmanager
async def streamable_http(url: str, headers: dict[str, str], auth: httpx2.Auth | None,
                          status: HttpStatus) -> AsyncIterator[TransportStreams]:
    async with create_http_client(headers=headers, auth=auth, observe=status.observe) as http, \
            streamable_http_client(url, http_client=http, max_sse_event_size=MAX_MESSAGE_BYTES) as streams:
        yield streams


@asynccontextmanager
async def sse(url: str, headers: dict[str, str], auth: httpx2.Auth | None,
              status: HttpStatus) -> AsyncIterator[TransportStreams]:
    def client_factory(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                       auth: httpx2.Auth | None = None, _oauth: httpx2.Auth | None = auth) -> httpx2.AsyncClient:
        return create_http_client(headers=headers, timeout=timeout, auth=auth or _oauth, observe=status.observe)

    async with sse_client(url, headers=headers, httpx_client_factory=client_factory) as streams:
        yield streams


@dataclass
class TransportOpener:
    """What every connection of one session shares to open its transports."""

    redactor: Redactor
    logs: Path
    parent_environ: dict[str, str]
    watchdog: Watchdog | None = None
    # Builds the httpx2 auth (OAuth) for a server with `auth: oauth`; never interactive in a session.
    auth_for: AuthFor | None = None
    windows: bool = False
    sandbox_mode: SandboxMode = SandboxMode.AUTO  # config.yaml's mcp.sandbox, as of the last (re)load
    hermes_home: Path | None = None  # hidden from every sandboxed server

    async def open(self, name: str, server: ResolvedServer, endpoint: EndpointSource, *,
                   stack: AsyncExitStack, on_denial: Callable[[tuple[str, ...]], None] | None = None) -> Link:
        """Resolve where the server lives and build its transport (not yet entered); `on_denial`
        hears what a stdio server's sandbox refused it."""
        self.redactor.register(*server.secrets)
        server, resolved = await endpoint.prepare(server)
        if server.command is not None:
            process = self._stdio(name, server, stack, await self._sandbox(name, server, resolved), on_denial)
            return Link(process, process=process, identity=resolved.identity if resolved else None)
        assert resolved is not None  # an HTTP server has a URL: the config reader requires one
        for name, value in resolved.headers.items():
            if secret_setting(name, value):  # the app's token is registered already, by its source
                self.redactor.register(*credential_parts(value))
        status = HttpStatus()
        auth = self.auth_for(server, resolved.url, status.refused) \
            if self.auth_for and server.config.auth is Auth.OAUTH else None
        opener = sse if server.config.transport is TransportKind.SSE else streamable_http
        return Link(opener(resolved.url, dict(resolved.headers), auth, status), url=resolved.url,
                    identity=resolved.identity, http=status)

    async def _sandbox(self, name: str, server: ResolvedServer, endpoint: Endpoint | None
                       ) -> tuple[SandboxRequest | None, str]:
        """The sandbox this start asks for, and how it stands in words (for `mcp get`, test and the log)."""
        settings = server.config.sandbox
        # A project's server the user has not granted anything runs confined or not at all.
        project = settings.confinement is Confinement.PROJECT
        if not sandboxed(self.sandbox_mode, settings):
            why = "mcp.sandbox: off" if self.sandbox_mode is SandboxMode.OFF else \
                "sandbox: off in its entry" if not settings.enabled else "no sandbox on this system"
            if project:
                raise HermesError(f"a project's server runs only in its sandbox until you grant it more "
                                  f"(`hermes mcp trust --grant`), and here it would run without one ({why})")
            return None, f"off ({why})"
        found = await anyio.to_thread.run_sync(support, self.parent_environ)
        if not found.available or found.bwrap is None:
            if self.sandbox_mode is SandboxMode.REQUIRED or project:
                rule = "a project's server not granted more" if project else "mcp.sandbox: required"
                raise HermesError(f"it must run sandboxed ({rule}), but {found.problem}")
            return None, f"unavailable: {found.problem}; the server runs with your full rights"
        port = urlsplit(endpoint.url).port if endpoint is not None and endpoint.url else None
        home = str(self.hermes_home or self.logs.parent)
        roots = tuple(server.config.roots or ())
        return SandboxRequest(found.bwrap, settings, roots, home, (port,) if port else (),
                              launcher_cache(home, name, settings), found.binds_by_fd), "on"

    async def warm(self, name: str, server: ResolvedServer) -> None:
        """A launcher's first start fetches its package first, on a budget of its own (see `first_start`)."""
        from hermes.config.launchers import REGISTRY_SETTINGS, warm_command
        from hermes.config.project import project_folders
        from hermes.mcp.first_start import fetch_path, needs_warming, refused_for_a_project, warm_first

        if warm_command(server.command, server.args) is None:
            return  # not a package launcher: nothing to fetch, nothing more to look at
        record = (self.hermes_home or self.logs.parent) / "cache" / "warmed.json"
        request, _ = await self._sandbox(name, server, None)
        warm = await anyio.to_thread.run_sync(needs_warming, record, server.command, server.args,
                                              request.cache if request else None)
        if warm is None:
            return
        # A project's entry not granted more fetches with the user's environment (see `first_start`).
        project = request is not None and request.settings.confinement is Confinement.PROJECT
        own = {name: value for name, value in self.parent_environ.items() if name in REGISTRY_SETTINGS} \
            if project else server.env
        env = child_environment(self.parent_environ, own, windows=self.windows)
        if project:
            # Nothing on PATH from the project's own folders (direnv puts `node_modules/.bin` there).
            folders = [*map(str, project_folders(Path.cwd())), *filter(None, [server.cwd])]
            env["PATH"] = fetch_path(env.get("PATH"), folders)
            refused = refused_for_a_project(warm, env.get("PATH"), folders)
            if refused is not None:
                raise HermesError(refused)
        with BoundedLog(self.logs / f"mcp-{name}.log") as log:
            def line(text: str) -> None:
                log.write(self.redactor(text) + "\n")
                log.flush()

            await warm_first(record, warm, env=env, cwd=server.cwd, sandbox=request, log=line)

    def _stdio(self, name: str, server: ResolvedServer, stack: AsyncExitStack,
               sandbox: tuple[SandboxRequest | None, str],
               on_denial: Callable[[tuple[str, ...]], None] | None) -> StdioProcess:
        assert server.command is not None
        log = stack.enter_context(BoundedLog(self.logs / f"mcp-{name}.log"))
        request, state = sandbox
        if request is None and state.startswith("unavailable"):
            log.write(f"[hermes] sandbox {state}\n")
        process = StdioProcess(server.command, list(server.args),
                               env=child_environment(self.parent_environ, server.env, windows=self.windows),
                               cwd=server.cwd, log=log, redact=self.redactor, watchdog=self.watchdog,
                               sandbox=request, name=name, sandbox_state=state, on_denial=on_denial,
                               patience=server.config.timeout)
        return process
