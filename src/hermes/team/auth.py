"""Who is calling: a bearer token turned into a `User`, or nobody.

Two kinds of token are accepted:

- a static key (`hmk_…`, made by `hermes team user add`), looked up by its SHA-256 in the store;
- an OAuth 2.1 access token that is a JWT from the configured issuer, for the configured audience,
  signed with a key of the issuer's JWKS (found through the issuer's metadata unless `jwks_uri` is
  given), with only asymmetric algorithms accepted. The configured user claim names the user; a
  stored user with that subject gets their stored name and groups, joined with the token's groups.
  A claim that is the name of a stored user with another subject (or none) is refused: a token can
  never become a static-key user, their credentials or their rules.

The inbound token is never passed upstream: upstream servers get the user's own credentials.
Verified keys are remembered for a short while (a token never past its expiry), so a busy user
costs no database query per call; removing a user takes effect within that time.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

import anyio

from hermes.config.team_settings import TeamOAuth
from hermes.team.records import User
from hermes.team.store import TeamStore

KEY_PREFIX = "hmk_"
REMEMBER_SECONDS = 30.0
_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
_JWKS_LIMIT = 256 * 1024
_REFRESH_AT_MOST_EVERY = 30.0  # an unknown key id refetches the JWKS, but not on every request


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    import secrets

    return KEY_PREFIX + secrets.token_urlsafe(32)


class Authenticator:
    def __init__(self, store: TeamStore, oauth: TeamOAuth | None, *,
                 fetch_json: Callable[[str], Any] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        """`fetch_json(url)`: an awaitable GET of a JSON document (the issuer's metadata and JWKS)."""
        self._store = store
        self._oauth = oauth
        self._fetch_json = fetch_json or _fetch_json
        self._clock = clock
        self._remembered: dict[str, tuple[User, float]] = {}  # digest -> (user, remembered until)
        self._jwks: Any = None
        self._jwks_at = -_REFRESH_AT_MOST_EVERY
        self._jwks_lock = anyio.Lock()

    async def user(self, token: str) -> User | None:
        now = self._clock()
        digest = key_hash(token)
        remembered = self._remembered.get(digest)
        if remembered is not None and now < remembered[1]:
            return remembered[0]
        until = now + REMEMBER_SECONDS
        if token.startswith(KEY_PREFIX):
            found = await self._store.user_by_key(digest)
        elif self._oauth is not None and token.count(".") == 2:
            verified = await self._from_jwt(token)
            found = verified[0] if verified else None
            if verified:
                until = min(until, now + max(0.0, verified[1] - time.time()))
        else:
            found = None
        if found is not None:
            if len(self._remembered) > 10_000:
                self._remembered.clear()
            self._remembered[digest] = (found, until)
        return found

    async def _from_jwt(self, token: str) -> tuple[User, float] | None:
        """The token's user and its expiry (seconds since the epoch), or None."""
        import jwt

        oauth = self._oauth
        assert oauth is not None
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        key = await self._key(str(header.get("kid", "")))
        if key is None:
            return None
        try:
            claims = jwt.decode(token, key=key.key, algorithms=_ALGORITHMS, audience=oauth.audience,
                                issuer=oauth.issuer, options={"require": ["exp", "iss", "aud"]}, leeway=30)
        except jwt.PyJWTError:
            return None
        name = claims.get(oauth.user_claim)
        if not isinstance(name, str) or not name or len(name) > 256 or not name.isprintable():
            return None
        raw_groups = claims.get(oauth.groups_claim, [])
        groups = tuple(g for g in raw_groups if isinstance(g, str) and g.isprintable() and len(g) <= 128) \
            if isinstance(raw_groups, list) else ()
        expires = float(claims["exp"])
        stored = await self._store.user_by_subject(name)
        if stored is not None:
            return User(stored.name, tuple(dict.fromkeys((*stored.groups, *groups))), name), expires
        if any(user.name == name for user in await self._store.users()):
            return None  # a stored user's name, not their subject: never theirs
        return User(name, groups, name), expires

    async def _key(self, kid: str) -> Any:
        import jwt

        async with self._jwks_lock:
            found = self._find(kid)
            if found is None and self._clock() - self._jwks_at >= _REFRESH_AT_MOST_EVERY:
                self._jwks_at = self._clock()
                try:
                    document = await self._fetch_json(await self._jwks_uri())
                    if not isinstance(document, dict):
                        return None
                    self._jwks = jwt.PyJWKSet.from_dict(document)
                except (jwt.PyJWTError, OSError, ValueError, KeyError, TypeError, AttributeError):
                    return None
                found = self._find(kid)
            return found

    def _find(self, kid: str) -> Any:
        if self._jwks is None:
            return None
        keys = [key for key in self._jwks.keys if key.key_id == kid or (not kid and len(self._jwks.keys) == 1)]
        return keys[0] if keys else None

    async def _jwks_uri(self) -> str:
        oauth = self._oauth
        assert oauth is not None
        if oauth.jwks_uri:
            return oauth.jwks_uri
        base = oauth.issuer.rstrip("/")
        for well_known in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            try:
                metadata = await self._fetch_json(base + well_known)
            except (OSError, ValueError):
                continue
            if isinstance(metadata, dict) and isinstance(metadata.get("jwks_uri"), str):
                return str(metadata["jwks_uri"])
        raise ValueError(f"the issuer {oauth.issuer} publishes no jwks_uri")


async def _fetch_json(url: str) -> Any:
    import json

    import httpx2

    async with httpx2.AsyncClient(timeout=httpx2.Timeout(10.0, connect=5.0), follow_redirects=False) as client:
        try:
            response = await client.get(url, headers={"Accept": "application/json"})
        except httpx2.HTTPError as exc:
            raise OSError(f"{url}: {exc}") from None
        if response.status_code != 200 or len(response.content) > _JWKS_LIMIT:
            raise ValueError(f"{url} answered {response.status_code}")
        return json.loads(response.content)
