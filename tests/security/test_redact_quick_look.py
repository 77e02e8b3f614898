"""The quick look that lets short ordinary texts through must never let a credential through: on
generated texts mixing credentials, near-misses and prose, the redaction with it equals the
redaction without it."""

from __future__ import annotations

import random
import string

import pytest

from hermes.security import redact

PIECES = [
    "hello", "world", "Basic Usage", "a Bearer token", "README.md", "1.2.3", "true", "x", "é", "İ", "K", "ß",
    "password", "Password: ", "api_key=", "TOKEN:", '"secret": "', "session=", "sig=", "Authorization: Bearer ",
    "https://user:", "@example.com", "://a:b@", " ", "\n", "=", ":", '"', "'",
]
ALPHABET = string.ascii_letters + string.digits


def _token(rng: random.Random) -> str:
    prefix = rng.choice(["ghp_", "github_pat_", "sk-", "sk-live_", "sk_live_", "xoxb-", "AKIA", "AIza", "eyJ", ""])
    return prefix + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(4, 44)))


def _text(rng: random.Random) -> str:
    parts = [rng.choice(PIECES) if rng.random() < 0.7 else _token(rng) for _ in range(rng.randint(1, 12))]
    text = "".join(parts)
    return text[:redact._QUICK_LOOK]


def test_the_quick_look_changes_no_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(35)
    texts = [_text(rng) for _ in range(20_000)]
    quick = [redact.redact_shapes(text) for text in texts]
    monkeypatch.setattr(redact, "_QUICK_LOOK", -1)  # every text the long way
    full = [redact.redact_shapes(text) for text in texts]
    differing = [(t, q, f) for t, q, f in zip(texts, quick, full, strict=True) if q != f]
    assert differing == []
    assert sum(q != t for q, t in zip(quick, texts, strict=True)) > 1000  # the texts did hold credentials
    assert sum(q == t for q, t in zip(quick, texts, strict=True)) > 1000  # and ordinary ones
