"""The redactor both ways: ordinary content comes back byte for byte, secrets of every kind never.

- A corpus of real ordinary outputs (READMEs, listings, S3-style JSON, logs, package files; see
  `tests/data/collect_redaction_corpus.py`) and generated ones (logs with levels, JSON with
  `key` fields, prose about tokens) pass unchanged: no false positives.
- Canary secrets of every kind, registered or found by shape, put into that ordinary content at
  random places, never survive.
- A session: `env:` values that are settings (`LOG_LEVEL: info`, `DEBUG: "true"`) leave results
  alone; the ones that are secrets, and everything a `${VAR}` brought in, are hidden.
"""

from __future__ import annotations

import gzip
import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hermes.config.model import ServerConfig
from hermes.config.resolve import resolve_server
from hermes.home import Home
from hermes.security.credentials import credential_like, secret_setting
from hermes.security.redact import REDACTED, Redactor
from tests.support import CANARY, fast_entry, write_config

CORPUS_FILE = Path(__file__).parent.parent / "data" / "redaction_corpus.json.gz"
CORPUS: dict[str, Any] = json.loads(gzip.decompress(CORPUS_FILE.read_bytes()))
TEXTS = [text for texts in CORPUS["corpus"].values() for text in texts]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def test_the_real_corpus_passes_byte_for_byte() -> None:
    redactor = Redactor()
    changed = [text[:200] for text in TEXTS if redactor(text) != text]
    assert len(TEXTS) >= 700
    assert changed == []


# Words and phrases of ordinary output; "Bearer" and "Basic" come only in the prose they appear in
# ("Bearer <anything>" is where a token is expected, so it is no ordinary text to generate).
PHRASES = ["Basic Usage", "Use a Bearer token", "the Basic plan", "Bearer authentication"]
WORDS = ["info", "debug", "true", "false", "key", "value", "token", "session", "auth", "Usage", *PHRASES,
         "README.md", "src/main.py", "v1.2.3", "2026-11-30T12:00:00Z", "ok", "level", "the", "channel", "message",
         "x86_64-linux-gnu", "libfontconfig1-dev", "d41d8cd98f00b204e9800998ecf8427e", "3f2a", "user@example.com"]
LEVELS = st.sampled_from(["info", "INFO", "debug", "WARNING", "error", "trace"])
ordinary_line = st.one_of(
    st.builds(lambda lvl, words: f"level={lvl} msg=\"{' '.join(words)}\" key=value",
              LEVELS, st.lists(st.sampled_from(WORDS), max_size=8)),
    st.builds(lambda lvl, words, n: json.dumps({"level": lvl, "msg": " ".join(words), "key": f"job-{n}",
                                                "session": n, "token_count": n}),
              LEVELS, st.lists(st.sampled_from(WORDS), max_size=8), st.integers(0, 10**6)),
    st.builds(lambda names: json.dumps({"Contents": [{"Key": n, "Size": len(n)} for n in names]}),
              st.lists(st.sampled_from(WORDS), max_size=6)),
    st.builds(lambda words: "## " + " ".join(words), st.lists(st.sampled_from(WORDS), min_size=1, max_size=5)),
    st.text(alphabet=string.ascii_letters + " .,:;-_/", max_size=80),
)


@FAST
@given(st.lists(ordinary_line, min_size=1, max_size=12))
def test_generated_ordinary_output_passes_unchanged(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert Redactor()(text) == text


random_token = st.text(alphabet=string.ascii_letters + string.digits, min_size=24, max_size=40).filter(
    lambda t: credential_like(t + "9aZ"))
SHAPED = st.one_of(
    random_token.map(lambda t: "ghp_" + t),
    random_token.map(lambda t: "github_pat_" + t),
    random_token.map(lambda t: "sk-proj-" + t),
    random_token.map(lambda t: "xoxb-" + t[:12] + "-" + t[12:]),
    st.text(alphabet=string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda t: "AKIA" + t),
    random_token.map(lambda t: f"eyJhbGciOiJIUzI1NiJ9.eyJ{t}.{t[::-1]}"),
)
IN_PLACE = st.one_of(
    random_token.map(lambda t: ("Authorization: Bearer {}", t + "9aZ")),
    random_token.map(lambda t: ("?token={}&page=2", t + "9aZ")),
    random_token.map(lambda t: ('{{"password": "{}"}}', t)),
    random_token.map(lambda t: ("api_key={}", t)),
    random_token.map(lambda t: ("client_secret: {}", t)),
    random_token.map(lambda t: ("postgresql://me:{}@db.internal/app", t)),
    random_token.map(lambda t: ("session={}", t + "9aZ")),
)


@FAST
@given(st.lists(ordinary_line, min_size=1, max_size=6), SHAPED, st.integers(0, 5))
def test_secret_shapes_are_hidden_anywhere(lines: list[str], secret: str, where: int) -> None:
    assume(not any(secret in line for line in lines))  # the secret is the inserted line's, not an ordinary one's
    lines.insert(where % (len(lines) + 1), f"found {secret} here")
    out = Redactor()("\n".join(lines))
    assert secret not in out and REDACTED in out


@FAST
@given(st.lists(ordinary_line, min_size=1, max_size=6), IN_PLACE, st.integers(0, 5))
def test_secrets_in_places_that_promise_one_are_hidden(lines: list[str], case: tuple[str, str], where: int) -> None:
    template, secret = case
    assume(not any(secret in line for line in lines))  # a bare token in an ordinary line promises nothing
    lines.insert(where % (len(lines) + 1), template.format(secret))
    out = Redactor()("\n".join(lines))
    assert secret not in out and REDACTED in out


@FAST
@given(st.lists(ordinary_line, min_size=1, max_size=6), random_token, st.integers(0, 5))
def test_registered_secrets_are_hidden_in_every_escaped_form(lines: list[str], token: str, where: int) -> None:
    assume(not any(token in line for line in lines))  # an ordinary line may hold the bare token: not the secret
    secret = f"{token}\"/é"
    redactor = Redactor([secret])
    lines.insert(where % (len(lines) + 1), json.dumps({"echo": secret}) + " " + repr(secret))
    out = redactor("\n".join(lines))
    assert token not in out


@pytest.mark.parametrize(("name", "value", "secret"), [
    ("LOG_LEVEL", "info", False), ("DEBUG", "true", False), ("MODE", "production", False),
    ("SESSION_TIMEOUT", "30", False), ("AUTH_MODE", "oauth", False), ("KEYBOARD_LAYOUT", "us", False),
    ("DATA_DIR", "/home/me/data", False), ("REGION", "eu-west-1", False), ("PORT", "9876", False),
    ("GITHUB_TOKEN", "ghp_" + "a1B2" * 6, True), ("API_KEY", "k-12345678", True), ("DB_PASSWORD", "hunter2", True),
    ("Authorization", "Bearer abc.def-ghi_jkl", True), ("X-Api-Key", "0f1e2d3c4b5a69788796a5b4", True),
    ("SLACK_BOT_TOKEN", "xoxb-1234567890-abcdefghij", True), ("CONFIG", CANARY, True),
    ("Accept", "application/json", False), ("User-Agent", "hermes/0.1", False),
    # The name decides, in every naming style, even for a value that spells out what it is.
    ("BOX_KEY", "SECRETVALUE-9876", True), ("ServiceToken", "plainword", True), ("github_pat", "shortpat", True),
    ("db-pass", "letmein", True), ("x.credential", "cred-abcd", True), ("clientSecret", "orange-sky", True),
    ("Authorization", "Bearer abc", True),
    # ... unless it says where the secret is, or is a plain setting.
    ("KEY_FILE", "./key.pem", False), ("TOKEN_URL", "https://auth.example/token", False),
    ("PASSWORD_FILE", "/run/secrets/db", False), ("AUTH_ENABLED", "true", False), ("TOKEN_TTL", "3600", False),
])
def test_settings_are_secrets_by_name_or_looks(name: str, value: str, secret: bool) -> None:
    assert secret_setting(name, value) is secret


def test_env_settings_are_not_secrets_but_credentials_and_interpolated_values_are(tmp_path: Path) -> None:
    config = ServerConfig.from_data({"command": "srv", "args": ["${NOTES}", "${LEVEL}"], "env": {
        "LOG_LEVEL": "info", "DEBUG": "true", "FAKE_API_KEY": "${KEY}", "OWN_TOKEN": CANARY}})
    resolved = resolve_server("box", config, {"KEY": "from-dotenv-9aZ42k", "NOTES": str(tmp_path),
                                              "LEVEL": "debug"})
    assert set(resolved.secrets) >= {"from-dotenv-9aZ42k", CANARY}
    assert not {"info", "true", "debug", str(tmp_path)} & set(resolved.secrets)


@pytest.mark.anyio
async def test_a_session_leaves_ordinary_words_alone_and_hides_its_secrets(home: Home) -> None:
    from hermes.session.core import Session

    write_config(home, {"mcp_servers": {"box": fast_entry(env={"LOG_LEVEL": "info", "DEBUG": "true",
                                                                "FAKE_API_KEY": CANARY})}})
    async with Session(home) as session:
        text = f"info: the flag is true; the key is {CANARY}"
        result = await session.call("mcp__box__echo", {"text": text})
    assert result.text == f"info: the flag is true; the key is {REDACTED}"


@pytest.mark.anyio
async def test_a_server_s_question_hides_its_secrets_like_its_results(home: Home) -> None:
    """A question is server output too: the form a user sees (or a client of `serve`) never shows
    a secret the server was given."""
    import mcp_types as types

    from hermes.mcp.handlers import ClientHandlers
    from hermes.session.core import Session
    from tests.support import stdio_entry

    asked: list[str] = []

    async def elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    for era in ("auto", "legacy"):  # asked as an input-required round, and on the session
        write_config(home, {"mcp_servers": {"smug": stdio_entry("smuggler.py", env={"FAKE_API_KEY": CANARY},
                                                                protocol=era)}})
        async with Session(home, handlers=ClientHandlers(elicitation=elicit)) as session:
            result = await session.call("mcp__smug__ask", {})
        assert result.text == "answered decline"
    assert len(asked) == 2 and all(f"What is your name? {REDACTED}" in message for message in asked), asked
    assert not any(CANARY in message for message in asked)
