"""OAuth for one server, on the SDK's `OAuthClientProvider`.

Two ways to use it. `hermes mcp login` is interactive: it opens the browser when it can, listens
on 127.0.0.1 for `/callback`, and also accepts the redirect URL pasted into the terminal. A
session is never interactive: when only a browser could help, the connection fails with the exact
command to run, and no browser ever opens. Either way a stored token that expired is refreshed
first, and a rotated refresh token is saved the moment it arrives.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthMetadata

from hermes.config.model import OAuthSettings
from hermes.errors import HermesError
from hermes.home import Home
from hermes.mcp.oauth.storage import FileTokenStorage, TokenRecords
from hermes.security.redact import Redactor

DEFAULT_REDIRECT_PORT = 33418


class LoginRequired(HermesError):
    def __init__(self, server: str, broader_scope: str | None = None, advice: str | None = None) -> None:
        """`advice`: how to sign in where that is not `hermes mcp login` ("{server}" is filled in)."""
        self.server = server
        self.broader_scope = broader_scope
        how = advice.format(server=server) if advice else f"run `hermes mcp login {server}`"
        if broader_scope:
            super().__init__(f"Server '{server}' needs a broader OAuth authorization (scope '{broader_scope}') "
                             f"for this: {how}.")
        else:
            super().__init__(f"Server '{server}' needs OAuth authorization: {how}.")


def scope_of(authorize_url: str) -> str | None:
    values = parse_qs(urlsplit(authorize_url).query).get("scope")
    return values[0] if values else None


def with_scope(authorize_url: str, scope: str | None) -> str:
    """The authorization URL asking for `scope` instead of what it asked for."""
    if not scope:
        return authorize_url
    parts = urlsplit(authorize_url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "scope"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("scope", scope)])))


class HermesOAuthProvider(OAuthClientProvider):
    """The SDK's provider with the token expiry and the authorization server's metadata restored.

    The SDK keeps both in memory only (`context.token_expiry_time`, `context.oauth_metadata`);
    without the expiry a stored token counts as valid, comes back 401, and the SDK starts a full
    browser flow instead of refreshing. They are restored right after construction (the SDK's lazy
    initialisation loads only tokens and client info) and saved with every token (`FileTokenStorage`
    reads them from this provider's context).
    """

    def __init__(self, server_url: str, metadata: OAuthClientMetadata, *, file_storage: FileTokenStorage,
                 redirect_handler: Callable[[str], Awaitable[None]],
                 callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
                 client_metadata_url: str | None = None,
                 on_refused: Callable[[LoginRequired], None] | None = None) -> None:
        """`on_refused`: told when a call is refused for want of scope and only a person could grant more."""
        super().__init__(server_url, metadata, file_storage, redirect_handler=redirect_handler,
                         callback_handler=callback_handler, client_metadata_url=client_metadata_url)
        self.file_storage = file_storage
        file_storage.context = self.context
        stored = file_storage.stored()
        expires_at = stored.get("expires_at")
        if isinstance(expires_at, (int, float)) and not isinstance(expires_at, bool):
            self.context.token_expiry_time = float(expires_at)
        metadata_record = stored.get("authorization_server")
        if isinstance(metadata_record, dict):
            with contextlib.suppress(ValueError):
                self.context.oauth_metadata = OAuthMetadata.model_validate(metadata_record)
        if file_storage.preregistered is not None:
            self._authenticate_as_the_server_says()
        self.on_refused = on_refused

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, except that a step-up no one can answer here hands back the server's 403.

        Raising out of the flow would end the whole connection (the transport dies with the POST);
        answered with the 403, only this request fails, and `on_refused` learns the reason.
        """
        flow = super().async_auth_flow(request)
        sent = await flow.__anext__()
        while True:
            response = yield sent
            try:
                sent = await flow.asend(response)
            except StopAsyncIteration:
                return
            except LoginRequired as refusal:
                if refusal.broader_scope is None:
                    raise
                if self.on_refused is not None:
                    self.on_refused(refusal)
                if sent is not request:
                    # The last answer was to a metadata lookup: the caller must get one to its request.
                    yield request
                return

    def _authenticate_as_the_server_says(self) -> None:
        """A pre-registered client's secret goes where the authorization server wants it.

        The SDK reads the method from the client record alone, and a record hermes writes for a
        configured client cannot know it: the server's metadata, discovered during the flow, can.
        The choice is made just before each token request, when that metadata is at hand.
        """
        context = self.context
        prepare = context.prepare_token_auth

        def prepare_as_advertised(data: dict[str, str], headers: dict[str, str] | None = None
                                  ) -> tuple[dict[str, str], dict[str, str]]:
            info = context.client_info
            if info is not None and info.client_id == self.file_storage.preregistered_id:
                supported = context.oauth_metadata.token_endpoint_auth_methods_supported \
                    if context.oauth_metadata is not None else None
                info.token_endpoint_auth_method = token_auth_method(supported, bool(info.client_secret))
            return prepare(data, headers)

        context.prepare_token_auth = prepare_as_advertised  # type: ignore[method-assign]


def token_auth_method(supported: list[str] | None, has_secret: bool) -> str:
    """How a client with (or without) a secret authenticates at the token endpoint.

    RFC 8414 §2: metadata that lists no methods means `client_secret_basic`. Otherwise the first
    of basic, post and none that the server lists; a secret the server never asks for stays home.
    """
    if not has_secret:
        return "none"
    if not supported:
        return "client_secret_basic"
    for method in ("client_secret_basic", "client_secret_post", "none"):
        if method in supported:
            return method
    return "client_secret_basic"


def client_metadata(settings: OAuthSettings | None, redirect_port: int,
                    redirect_uri: str | None = None) -> OAuthClientMetadata:
    secret = settings.client_secret if settings else None
    return OAuthClientMetadata(
        client_name="hermes",
        redirect_uris=[redirect_uri or f"http://127.0.0.1:{redirect_port}/callback"],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if secret else "none",
        scope=settings.scope if settings else None,
    )


def preregistered(settings: OAuthSettings | None, redirect_port: int,
                  redirect_uri: str | None = None) -> dict[str, Any] | None:
    if settings is None or not settings.client_id:
        return None
    data: dict[str, Any] = {
        "client_id": settings.client_id,
        "redirect_uris": [redirect_uri or f"http://127.0.0.1:{redirect_port}/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": token_auth_method(None, bool(settings.client_secret)),
        "client_id_issued_at": int(time.time()),
    }
    if settings.client_secret:
        data["client_secret"] = settings.client_secret
    if settings.scope:
        data["scope"] = settings.scope
    return data


def build_provider(home: Home, server: str, url: str, settings: OAuthSettings | None, *,
                   redirect: Callable[[str], Awaitable[None]] | None = None,
                   callback: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
                   redirect_port: int | None = None, redactor: Redactor | None = None,
                   on_refused: Callable[[LoginRequired], None] | None = None,
                   records: TokenRecords | None = None, redirect_uri: str | None = None,
                   advice: str | None = None) -> HermesOAuthProvider:
    """Without `redirect`/`callback` the provider is non-interactive: it raises `LoginRequired`.

    `records`: where the token and registration live (the token files by default); `redirect_uri`:
    where the authorization server sends the user back (a loopback port by default; the team
    gateway's own callback for its users).

    With a `redactor`, every access and refresh token (and the client secret) is registered the
    moment it is loaded or received, so an error that quotes one never shows it.
    """
    port = redirect_port or (settings.redirect_port if settings and settings.redirect_port else DEFAULT_REDIRECT_PORT)
    storage = FileTokenStorage(home, server, url, preregistered(settings, port, redirect_uri), records=records)
    if redactor is not None:
        if settings and settings.client_secret:
            redactor.register(settings.client_secret)
        storage.on_tokens.append(lambda tokens: redactor.register(tokens.access_token, tokens.refresh_token or ""))

    async def refuse_redirect(url: str) -> None:
        # With a token already held, being sent to sign in again means a call needed more scope
        # (a 403 insufficient_scope step-up): remembered, so the login asks for all of it.
        wanted = scope_of(url)
        if wanted and await storage.get_tokens() is not None:
            await storage.remember_wanted_scope(wanted)
            raise LoginRequired(server, broader_scope=wanted, advice=advice)
        raise LoginRequired(server, advice=advice)

    async def refuse_callback() -> AuthorizationCodeResult:
        raise LoginRequired(server, advice=advice)

    provider = HermesOAuthProvider(url, client_metadata(settings, port, redirect_uri), file_storage=storage,
                                   redirect_handler=redirect or refuse_redirect,
                                   callback_handler=callback or refuse_callback,
                                   client_metadata_url=settings.client_metadata_url if settings else None,
                                   on_refused=on_refused)
    return provider
