"""The quick look that lets short ordinary texts through must never let a credential through: on
generated texts mixing credentials, near-misses and prose, the redaction with it equals the
redaction without it."""

from __future__ import annotations

import random
import string

import pytest

from hermes.security import clean, redact
from hermes.security.clean import clean_text, clean_value

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


def test_a_text_remembered_as_plain_is_redacted_once_its_secret_is_registered() -> None:
    """`clean_text` remembers short texts that needed nothing; registering a secret forgets them,
    and nothing remembered before the registration answers for a text after it."""
    redactor = redact.Redactor()
    before = redactor.plain_texts()
    assert clean_text("hunter22", redactor) == "hunter22"
    assert "hunter22" in redactor.plain_texts()
    redactor.register("hunter22")
    assert clean_text("hunter22", redactor) == redact.REDACTED
    assert clean_value({"hunter22": ["x", "hunter22"]}, redactor) == {redact.REDACTED: ["x", redact.REDACTED]}
    before.add("late")  # what a cleaner that looked before the registration adds goes nowhere
    assert "late" not in redactor.plain_texts()


def test_cleaning_with_the_memory_equals_cleaning_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same texts cleaned twice (the second time from memory) and with the memory off agree,
    hidden characters and registered secrets included."""
    rng = random.Random(36)
    pieces = [*PIECES, "\u200b", "\u202e", "a\u200db", "s3cr3t-value"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(5_000)]
    redactor = redact.Redactor(["s3cr3t-value"])
    first = [clean_text(text, redactor) for text in texts]
    again = [clean_text(text, redactor) for text in texts]
    monkeypatch.setattr(clean, "_REMEMBERED", -1)
    fresh = [clean_text(text, redact.Redactor(["s3cr3t-value"])) for text in texts]
    assert first == again == fresh
    assert len(redactor.plain_texts()) > 100  # the memory was used
    assert sum(f != t for f, t in zip(fresh, texts, strict=True)) > 500


def test_a_text_of_a_str_subclass_inside_a_value_is_cleaned_too() -> None:
    """Only an exact str is looked up among the plain texts; a subclass (an enum's member, a
    library's own text type) nested in a value goes through the cleaner like any text."""
    import enum

    class Field(enum.StrEnum):
        SECRET = "password=hunter2hunter2"

    class Text(str):
        pass

    redactor = redact.Redactor(["hunter2hunter2"])
    cleaned = clean_value({"a": Field.SECRET, "b": [Text("key hunter2hunter2")], Text("hunter2hunter2"): 1}, redactor)
    assert "hunter2hunter2" not in repr(cleaned)
    assert cleaned == {"a": f"password={redact.REDACTED}", "b": [f"key {redact.REDACTED}"], redact.REDACTED: 1}
