"""`hermes mcp login <server>`: the one place where hermes may open a browser.

The authorization URL is opened in the browser when one can be started (and printed either way);
the redirect comes back to 127.0.0.1 on `/callback`, or the user pastes the URL the browser ended
on. hermes waits up to `timeout` seconds (5 minutes by default) and reports success only if a
token was actually stored.
"""

from __future__ import annotations

import socket
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from hermes.config.resolve import resolve_server
from hermes.config.store import ConfigStore
from hermes.errors import HermesError, NoSuchServer, UsageError, leaf
from hermes.home import Home
from hermes.loopback import bind_loopback, serve_asgi
from hermes.mcp.describe import describe_failure
from hermes.mcp.oauth.provider import build_provider, scope_of, with_scope
from hermes.mcp.oauth.storage import client_path, has_tokens, read_json, union_of
from hermes.mcp.sdk import create_http_client
from hermes.security.redact import Redactor, mask_url
from hermes.security.redacted_log import redacted_file_logging
from hermes.stdin_lines import pollable_stdin, stdin_lines

LOGIN_TIMEOUT = 300.0


class LoginFailed(HermesError):
    pass


@dataclass(frozen=True)
class LoginResult:
    server: str
    stored: bool
    tools: int


def _callback_result(query: str) -> AuthorizationCodeResult | str:
    params = {k: v[0] for k, v in parse_qs(query).items()}
    if "error" in params:
        return f"the authorization server answered {params['error']}: {params.get('error_description', '')}".strip()
    if "code" not in params:
        return "the redirect carried no authorization code"
    return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))


def _redirect_port(home: Home, server: str, configured: int | None) -> int:
    stored = read_json(client_path(home, server)) or {}
    for uri in stored.get("redirect_uris") or []:
        port = urlsplit(str(uri)).port
        if port:
            return port
    if configured:
        return configured
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def connect_to_authorize(url: str, headers: Mapping[str, str], protocol: str, provider: httpx2.Auth) -> int:
    """Connect once with an interactive provider, so the SDK runs the authorization on the way; how
    many tools the server offers once it let hermes in."""
    http = create_http_client(headers=dict(headers), auth=provider)
    async with http, Client(streamable_http_client(url, http_client=http), mode=protocol, cache=None) as client:
        return len((await client.list_tools()).tools)


async def login(home: Home, name: str, *, timeout: float = LOGIN_TIMEOUT, open_browser: bool = True,
                say: Callable[[str], None] = print) -> LoginResult:
    config = ConfigStore(home).load()
    entry = config.mcp_servers.get(name)
    if entry is None:
        raise NoSuchServer(name)
    if entry.url is None or entry.auth != "oauth":
        raise UsageError(f"Server '{name}' does not use OAuth (set `auth: oauth` on an HTTP server).")
    server = resolve_server(name, entry, ConfigStore(home).variables())
    assert server.url is not None
    port = _redirect_port(home, name, entry.oauth.redirect_port if entry.oauth else None)
    results, arrivals = anyio.create_memory_object_stream[AuthorizationCodeResult | str](4)

    async def on_callback(request: Request) -> HTMLResponse:
        await results.send(_callback_result(request.url.query))
        return HTMLResponse("<html><body><p>hermes received the authorization. You can close this window.</p>"
                            "</body></html>")

    async def redirect(url: str) -> None:
        # A call was refused for want of scope (step-up): this sign-in asks for that scope as well
        # as what the server challenges for now, so one authorization covers both.
        url = with_scope(url, union_of(scope_of(url), provider.file_storage.wanted_scope()))
        say(f"Open this URL to authorize '{name}':\n  {url}")
        if open_browser and await anyio.to_thread.run_sync(webbrowser.open, url):
            say("(opened in your browser)")
        say(f"Waiting up to {timeout:g} s; or paste the URL your browser ended on and press Enter.")

    async def read_pasted() -> None:
        # On the event loop, never in a thread: a read nobody answers must not hold up the exit.
        fd = pollable_stdin()
        if fd is None:
            return  # no terminal input to wait for; the loopback callback still can arrive
        async for line in stdin_lines(fd):
            if "?" in line:
                await results.send(_callback_result(urlsplit(line.strip()).query))
                return

    async def callback() -> AuthorizationCodeResult:
        async with anyio.create_task_group() as readers:
            readers.start_soon(read_pasted)
            try:
                with anyio.fail_after(timeout):
                    outcome = await arrivals.receive()
            except TimeoutError:
                raise LoginFailed(f"No authorization arrived within {timeout:g} s; run `hermes mcp login "
                                  f"{name}` again.") from None
            finally:
                readers.cancel_scope.cancel()
        if isinstance(outcome, str):
            raise LoginFailed(f"Authorization for '{name}' failed: {outcome}.")
        return outcome

    redactor = Redactor(server.secrets)
    provider = build_provider(home, name, server.url, entry.oauth, redirect=redirect, callback=callback,
                              redirect_port=port, redactor=redactor)
    provider.file_storage.fresh_sign_in = True
    app = Starlette(routes=[Route("/callback", on_callback)])
    tools = 0
    try:
        # The SDK logs OAuth trouble with tracebacks; those go to the redacted log, not the terminal.
        with redacted_file_logging(home.logs / "hermes.log", redactor):
            async with anyio.create_task_group() as tasks:
                await tasks.start(serve_asgi, app, bind_loopback(port))
                try:
                    tools = await connect_to_authorize(server.url, server.headers, server.config.protocol, provider)
                finally:
                    tasks.cancel_scope.cancel()
    except Exception as exc:
        cause = leaf(exc)
        if isinstance(cause, HermesError):
            raise cause from None
        # In the user's terms ("could not resolve host …", "nothing answered at …"), not the
        # exception's own (`ConnectError: [Errno -2] Name or service not known`).
        said = describe_failure(cause, url=mask_url(server.url))
        raise LoginFailed(redactor(f"Authorization for '{name}' failed: {said}.")) from None
    if not has_tokens(home, name):
        raise LoginFailed(f"The server '{name}' answered, but no token was stored; nothing to save.")
    return LoginResult(name, True, tools)

