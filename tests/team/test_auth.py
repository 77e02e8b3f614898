"""Who a bearer token is: a static key by its hash, or a JWT of the team's issuer checked in full."""

from __future__ import annotations

import base64
import json
from typing import Any

import jwt
import pytest

from hermes.config.team_settings import TeamOAuth
from hermes.team.auth import REMEMBER_SECONDS, Authenticator, key_hash, new_key
from hermes.team.memory_store import MemoryStore
from hermes.team.records import User
from tests.team.issuer import ISSUER_AUDIENCE, Signer

pytestmark = pytest.mark.anyio

ISSUER = "https://id.example.org"


class Documents:
    """The issuer's metadata and JWKS, by URL, counting fetches (our own `fetch_json` seam)."""

    def __init__(self, signer: Signer) -> None:
        self.by_url: dict[str, Any] = {f"{ISSUER}/.well-known/oauth-authorization-server":
                                       {"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks"},
                                       f"{ISSUER}/jwks": signer.jwks()}
        self.fetched: list[str] = []

    async def __call__(self, url: str) -> Any:
        self.fetched.append(url)
        if url not in self.by_url:
            raise OSError(f"{url}: 404")
        return self.by_url[url]


def _authenticator(store: MemoryStore, signer: Signer, clock: list[float] | None = None) -> tuple[Authenticator,
                                                                                                 Documents]:
    documents = Documents(signer)
    now = clock or [0.0]
    oauth = TeamOAuth(issuer=ISSUER, audience=ISSUER_AUDIENCE, user_claim="sub", groups_claim="groups")
    return Authenticator(store, oauth, fetch_json=documents, clock=lambda: now[0]), documents


async def test_a_static_key_names_its_user_and_a_removed_user_is_let_go_after_a_short_while() -> None:
    store = MemoryStore()
    key = new_key()
    await store.add_user(User("alice", ("dev",)), key_hash(key))
    now = [0.0]
    auth = Authenticator(store, None, clock=lambda: now[0])
    assert await auth.user(key) == User("alice", ("dev",))
    assert await auth.user(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert await auth.user("") is None and await auth.user("hmk_") is None
    await store.remove_user("alice")
    assert await auth.user(key) is not None  # remembered for a moment: no database query per call
    now[0] += REMEMBER_SECONDS
    assert await auth.user(key) is None


async def test_a_jwt_of_the_issuer_names_its_user_with_the_token_s_groups_and_the_stored_ones() -> None:
    signer = Signer(ISSUER)
    store = MemoryStore()
    await store.add_user(User("ann", ("billing",), "ann-sub"), None)
    auth, documents = _authenticator(store, signer)
    assert await auth.user(signer.token("ann-sub", groups=["dev"])) == User("ann", ("billing", "dev"), "ann-sub")
    assert await auth.user(signer.token("zoe", groups=["ops", 7])) == User("zoe", ("ops",), "zoe")
    assert documents.fetched == [f"{ISSUER}/.well-known/oauth-authorization-server", f"{ISSUER}/jwks"]


def _unsigned(claims: dict[str, Any], alg: str = "none") -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': alg, 'kid': 'key-1', 'typ': 'JWT'})}.{part(claims)}."


async def test_tokens_that_are_not_the_issuer_s_for_this_audience_are_nobody() -> None:
    signer = Signer(ISSUER)
    auth, _ = _authenticator(MemoryStore(), signer)
    good = jwt.decode(signer.token("ann"), options={"verify_signature": False})
    public_pem = signer.jwks()["keys"][0]["n"]
    refused = [
        signer.token("ann", audience="https://other.example.org/mcp"),
        signer.token("ann", issuer="https://evil.example.org"),
        signer.token("ann", lifetime=-120),  # expired beyond the leeway
        Signer(ISSUER).token("ann"),  # same kid, another key
        _unsigned(good),  # alg none
        jwt.encode(good, public_pem, algorithm="HS256", headers={"kid": "key-1"}),  # the public key as an HMAC secret
        signer.token(""),  # no user
        "a.b.c",
    ]
    for token in refused:
        assert await auth.user(token) is None, token


async def test_an_unknown_key_id_fetches_the_jwks_again_but_not_on_every_request() -> None:
    signer = Signer(ISSUER)
    clock = [0.0]
    auth, documents = _authenticator(MemoryStore(), signer, clock)
    assert await auth.user(signer.token("ann")) is not None
    rotated = Signer(ISSUER, kid="key-2")
    documents.by_url[f"{ISSUER}/jwks"] = rotated.jwks()
    clock[0] += 1.0
    assert await auth.user(rotated.token("ann")) is None  # too soon after the last fetch
    assert await auth.user(rotated.token("bob")) is None
    clock[0] += 60.0
    assert await auth.user(rotated.token("ann")) is not None  # the rotated key, fetched once
    assert documents.fetched.count(f"{ISSUER}/jwks") == 2


async def test_a_token_never_becomes_a_static_key_user_of_the_same_name() -> None:
    signer = Signer(ISSUER)
    store = MemoryStore()
    await store.add_user(User("gina", ("dev",)), key_hash(new_key()))
    auth, _ = _authenticator(store, signer)
    assert await auth.user(signer.token("gina", groups=["dev"])) is None


async def test_a_jwks_that_is_not_a_key_set_is_nobody_not_a_crash() -> None:
    signer = Signer(ISSUER)
    for document in ([], "keys", {"keys": "no"}, {"keys": [{"kty": "XX"}]}):
        auth, documents = _authenticator(MemoryStore(), signer)
        documents.by_url[f"{ISSUER}/jwks"] = document
        assert await auth.user(signer.token("ann")) is None, document
