"""Tokens and client registrations of OAuth servers, behind one seam (`TokenRecords`).

For one person they are files: HERMES_HOME/mcp-tokens/<server>.json (+ .client.json), 0600 in a
0700 folder and replaced atomically, so a rotated refresh token is saved whole the moment it
arrives. The team gateway keeps each user's in its database instead, sealed (`team.oauth_records`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

from hermes.files import atomic_write, read_bounded
from hermes.home import Home

_TOKEN_FILE_LIMIT = 1024 * 1024  # a token record is a few KB; anything else is not one


def token_path(home: Home, server: str) -> Path:
    return home.token_file(server)


def client_path(home: Home, server: str) -> Path:
    return home.client_file(server)


def ensure_folder(home: Home) -> None:
    home.ensure()
    home.tokens.mkdir(parents=True, exist_ok=True)
    os.chmod(home.tokens, 0o700)


def write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2) + "\n", mode=0o600)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(read_bounded(path, _TOKEN_FILE_LIMIT, follow_symlinks=False))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


class TokenRecords(Protocol):
    """Where one server's token record and client registration live. Reads answer at once (a
    provider restores its state in its constructor); writes are awaited."""

    def token(self) -> dict[str, Any] | None: ...

    async def save_token(self, record: dict[str, Any]) -> None: ...

    def client(self) -> dict[str, Any] | None: ...

    async def save_client(self, record: dict[str, Any]) -> None: ...


class TokenFiles:
    """`TokenRecords` on HERMES_HOME's token files."""

    def __init__(self, home: Home, server: str) -> None:
        self.home = home
        self.server = server

    def token(self) -> dict[str, Any] | None:
        return read_json(token_path(self.home, self.server))

    async def save_token(self, record: dict[str, Any]) -> None:
        ensure_folder(self.home)
        write_json(token_path(self.home, self.server), record)

    def client(self) -> dict[str, Any] | None:
        return read_json(client_path(self.home, self.server))

    async def save_client(self, record: dict[str, Any]) -> None:
        ensure_folder(self.home)
        write_json(client_path(self.home, self.server), record)


def has_tokens(home: Home, server: str) -> bool:
    return home.has_tokens(server)


def delete_tokens(home: Home, server: str) -> list[Path]:
    removed = []
    for path in (token_path(home, server), client_path(home, server)):
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed


def resource_of(url: str) -> str:
    """The protected resource a token is for: the server's URL without query or fragment, its
    scheme and host lower-cased (RFC 8707 names resources by URI)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/") or "/", "", ""))


def union_of(*scopes: str | None) -> str | None:
    """Space-separated scopes merged in order, each once."""
    merged: list[str] = []
    for scope in scopes:
        for item in (scope or "").split():
            if item not in merged:
                merged.append(item)
    return " ".join(merged) or None


class FileTokenStorage:
    """The SDK's `TokenStorage`, on `TokenRecords` (the token files unless told otherwise); also
    keeps what a later refresh needs.

    Next to the token it saves when the token expires (the SDK only knows "expires in N seconds"
    at the moment it receives one) and the authorization server's metadata, so a new process can
    refresh an expired token at the right endpoint before any browser is opened.
    """

    def __init__(self, home: Home, server: str, url: str, preregistered: dict[str, Any] | None = None, *,
                 records: TokenRecords | None = None) -> None:
        self.home = home
        self.server = server
        self.records = records or TokenFiles(home, server)
        # Tokens and the client registration are bound to the server's URL (and to the issuer that
        # gave them): a server of the same name somewhere else (another project's config, an edited
        # URL) never receives them.
        self.resource = resource_of(url)
        self.preregistered = preregistered
        self.preregistered_id = preregistered.get("client_id") if preregistered else None
        # The provider's `OAuthContext`, whose expiry time and AS metadata are saved with each token.
        self.context: Any = None
        self.on_tokens: list[Any] = []
        # `hermes mcp login` authorizes anew whatever is stored (a broader scope, another account);
        # the token it receives is read back normally.
        self.fresh_sign_in = False

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        if self.fresh_sign_in:
            return None
        data = self.records.token()
        if data is None or not isinstance(data.get("token"), dict):
            return None
        try:
            tokens = OAuthToken.model_validate(data["token"])
        except ValueError:
            return None  # a damaged token file: as if there were none (a login writes a new one)
        for callback in self.on_tokens:
            callback(tokens)  # redacted even when it is not used: it is still a secret
        if data.get("resource") != self.resource:
            return None
        # A token is its issuer's (SEP-2352): once the server names another authorization server,
        # the old one's token is not presented to it; the user signs in there.
        issued_by = (data.get("authorization_server") or {}).get("issuer")
        current = self._issuer()
        if isinstance(issued_by, str) and current is not None and issued_by != current:
            return None
        return tokens

    def stored(self) -> dict[str, Any]:
        record = self.records.token() or {}
        return record if record.get("resource") == self.resource else {}

    async def set_tokens(self, tokens: Any) -> None:
        import time

        expires_in = getattr(tokens, "expires_in", None)
        record: dict[str, Any] = {"token": tokens.model_dump(mode="json", exclude_none=True),
                                  "expires_at": time.time() + expires_in if expires_in else None,
                                  "resource": self.resource}
        metadata = getattr(self.context, "oauth_metadata", None)
        if metadata is not None:
            record["authorization_server"] = metadata.model_dump(mode="json", exclude_none=True)
        await self.records.save_token(record)
        self.fresh_sign_in = False
        for callback in self.on_tokens:
            callback(tokens)

    async def remember_wanted_scope(self, scope: str) -> None:
        """The scope a call was refused for (step-up); the next login asks for it too."""
        record = self.stored()
        if record:
            record["wanted_scope"] = union_of(record.get("wanted_scope"), scope)
            await self.records.save_token(record)

    def wanted_scope(self) -> str | None:
        wanted = self.stored().get("wanted_scope")
        return wanted if isinstance(wanted, str) and wanted else None

    def _issuer(self) -> str | None:
        """The authorization server this flow talks to, once its metadata is known."""
        metadata = getattr(self.context, "oauth_metadata", None)
        issuer = getattr(metadata, "issuer", None)
        return str(issuer) if issuer else None

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        data = self.records.client()
        if data is not None and data.pop("resource", None) == self.resource:
            # A registration is the authorization server's (SEP-2352): another issuer for this resource
            # means registering anew, never presenting one server's client id to another.
            issuer, current = data.pop("issuer", None), self._issuer()
            if issuer is None or current is None or issuer == current:
                return OAuthClientInformationFull.model_validate(data)
        if self.preregistered is not None:
            return OAuthClientInformationFull.model_validate(self.preregistered)
        return None

    async def set_client_info(self, client_info: Any) -> None:
        record = client_info.model_dump(mode="json", exclude_none=True)
        issuer = self._issuer()
        await self.records.save_client({**record, "resource": self.resource, **({"issuer": issuer} if issuer else {})})
