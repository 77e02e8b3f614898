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
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthMetadata

from hermes.config.model import OAuthSettings
from hermes.errors import HermesError
from hermes.home import Home
from hermes.mcp.oauth.storage import FileTokenStorage
from hermes.security.redact import Redactor

DEFAULT_REDIRECT_PORT = 33418


class LoginRequired(HermesError):
    def __init__(self, server: str) -> None:
        self.server = server
        super().__init__(f"Server '{server}' needs OAuth authorization: run `hermes mcp login {server}`.")


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
                 callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]]) -> None:
        super().__init__(server_url, metadata, file_storage, redirect_handler=redirect_handler,
                         callback_handler=callback_handler)
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


def client_metadata(settings: OAuthSettings | None, redirect_port: int) -> OAuthClientMetadata:
    secret = settings.client_secret if settings else None
    return OAuthClientMetadata(
        client_name="hermes",
        redirect_uris=[f"http://127.0.0.1:{redirect_port}/callback"],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if secret else "none",
        scope=settings.scope if settings else None,
    )


def preregistered(settings: OAuthSettings | None, redirect_port: int) -> dict[str, Any] | None:
    if settings is None or not settings.client_id:
        return None
    data: dict[str, Any] = {
        "client_id": settings.client_id,
        "redirect_uris": [f"http://127.0.0.1:{redirect_port}/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_post" if settings.client_secret else "none",
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
                   redirect_port: int | None = None, redactor: Redactor | None = None) -> HermesOAuthProvider:
    """Without `redirect`/`callback` the provider is non-interactive: it raises `LoginRequired`.

    With a `redactor`, every access and refresh token (and the client secret) is registered the
    moment it is loaded or received, so an error that quotes one never shows it.
    """
    port = redirect_port or (settings.redirect_port if settings and settings.redirect_port else DEFAULT_REDIRECT_PORT)
    storage = FileTokenStorage(home, server, preregistered(settings, port))
    if redactor is not None:
        if settings and settings.client_secret:
            redactor.register(settings.client_secret)
        storage.on_tokens.append(lambda tokens: redactor.register(tokens.access_token, tokens.refresh_token or ""))

    async def refuse_redirect(_url: str) -> None:
        raise LoginRequired(server)

    async def refuse_callback() -> AuthorizationCodeResult:
        raise LoginRequired(server)

    return HermesOAuthProvider(url, client_metadata(settings, port), file_storage=storage,
                               redirect_handler=redirect or refuse_redirect,
                               callback_handler=callback or refuse_callback)
