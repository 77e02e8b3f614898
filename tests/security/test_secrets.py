"""Canary secrets: configured through .env, used by servers, and never seen in any output or file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes.config.dotenv import set_dotenv
from hermes.home import Home
from tests.support import CANARY, fast_entry, hermes, write_config


def test_canary_never_leaks(home: Home, http_server: Any) -> None:
    url = http_server("--require-bearer", CANARY)
    set_dotenv(home.dotenv, {"CANARY_KEY": CANARY})
    write_config(home, {"mcp_servers": {
        "box": fast_entry("--stderr-secret", env={"FAKE_API_KEY": "${CANARY_KEY}"}),
        "crashy": fast_entry("--stderr-secret", "--exit-at-start", "3", env={"FAKE_API_KEY": "${env:CANARY_KEY}"}),
        "web": {"url": url, "headers": {"Authorization": "Bearer ${CANARY_KEY}"}},
    }})
    outputs: list[str] = []
    for args in (
        ("mcp", "list"), ("mcp", "list", "--json"),
        ("mcp", "test", "box"), ("mcp", "test", "box", "--json"),
        ("mcp", "test", "crashy"), ("mcp", "test", "crashy", "--json"),
        ("mcp", "test", "web", "--json"),
        ("mcp", "status"), ("mcp", "status", "--json"),
        ("tools", "list"), ("tools", "list", "--json"),
        ("tools", "call", "mcp__box__fail", "--args", json.dumps({"text": f"key={CANARY}"})),
        ("tools", "call", "mcp__web__fail", "--args", json.dumps({"text": CANARY}), "--json"),
        ("tools", "call", "mcp__crashy__echo", "--args", '{"text": "x"}', "--json"),
    ):
        result = hermes(*args, home=home)
        outputs += [result.stdout, result.stderr]
    joined = "\n".join(outputs)
    assert "[REDACTED]" in joined  # the canary really went through the redactor
    assert "connected in" in joined and '"state": "failed"' in joined
    assert CANARY not in joined
    for path in Path(home.root).rglob("*"):
        if path.is_file() and path != home.dotenv:
            assert CANARY not in path.read_text(errors="replace"), path


def test_reprs_never_show_secret_values() -> None:
    from hermes.apps.liveness import LiveEndpoint
    from hermes.apps.runtimefile import RuntimeEndpoint
    from hermes.config.model import ServerConfig
    from hermes.config.resolve import resolve_server
    from hermes.mcp.endpoint import Endpoint

    config = ServerConfig.from_data({"url": "https://x.example/mcp", "headers": {"Authorization": f"Bearer {CANARY}"},
                                     "oauth": {"client_id": "id", "client_secret": CANARY}})
    stdio = ServerConfig.from_data({"command": "srv", "env": {"API_KEY": CANARY}})
    objects = [config, config.oauth, stdio, resolve_server("s", config, {}), resolve_server("t", stdio, {}),
               Endpoint("http://127.0.0.1:1/mcp", {"Authorization": f"Bearer {CANARY}"}),
               RuntimeEndpoint(1, "127.0.0.1", 1, CANARY), LiveEndpoint("http://127.0.0.1:1/mcp", 1, CANARY, "/f")]
    for item in objects:
        assert CANARY not in repr(item), type(item).__name__
    # Hidden, yet still saying what it holds (not a bare `<object at 0x…>`).
    assert repr(config.oauth) == "OAuthSettings(client_id='id', client_secret=<hidden>, scope=None)"


def test_dotenv_values_in_a_url_never_show(home: Home) -> None:
    """A `.env` value in a URL's user info or query is a secret wherever the URL is printed."""
    from tests.support import free_port

    port = free_port()  # nothing listens: every command has to explain the failure, URL and all
    set_dotenv(home.dotenv, {"SIG": f"sig-{CANARY}", "PW": f"pw-{CANARY}"})
    write_config(home, {"mcp_servers": {
        "signed": {"url": f"http://127.0.0.1:{port}/mcp?sig=${{SIG}}", "connect_timeout": 10},
        "userinfo": {"url": f"http://me:${{PW}}@127.0.0.1:{port}/mcp", "connect_timeout": 10},
        "literal": {"url": f"http://127.0.0.1:{port}/mcp?token={CANARY}&api_key={CANARY}x", "connect_timeout": 10},
    }})
    outputs = []
    for args in (("mcp", "list"), ("mcp", "list", "--json"), ("mcp", "test", "signed"), ("mcp", "test", "userinfo"),
                 ("mcp", "status", "--json"), ("tools", "list", "--json"),
                 ("tools", "call", "mcp__signed__x", "--json")):
        result = hermes(*args, home=home)
        outputs += [result.stdout, result.stderr]
    joined = "\n".join(outputs)
    assert f"127.0.0.1:{port}" in joined and "[REDACTED]" in joined
    assert CANARY not in joined
    for path in home.root.rglob("*"):
        if path.is_file() and path not in (home.dotenv, home.config):
            assert CANARY not in path.read_text(errors="replace"), path


def test_escaped_forms_of_a_secret_are_hidden_too() -> None:
    from hermes.security.redact import Redactor

    secret = f"{CANARY}\n\"quoted\"/x"
    redactor = Redactor([secret])
    for shown in (secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]):
        assert CANARY not in redactor(f"Illegal header value {shown!s} ..."), shown


@pytest.mark.anyio
async def test_oauth_tokens_are_registered_as_soon_as_they_are_loaded(home: Home) -> None:
    from hermes.mcp.oauth.provider import build_provider
    from hermes.mcp.oauth.storage import write_json
    from hermes.security.redact import Redactor

    home.ensure()
    home.tokens.mkdir()
    write_json(home.token_file("remote"), {"token": {"access_token": f"at-{CANARY}", "token_type": "Bearer",
                                                      "refresh_token": f"rt-{CANARY}"},
                                            "resource": "https://remote.example/mcp"})
    redactor = Redactor()
    provider = build_provider(home, "remote", "https://remote.example/mcp", None, redactor=redactor)
    assert await provider.file_storage.get_tokens() is not None
    assert redactor(f"server said: bad token at-{CANARY} (refresh rt-{CANARY})") == \
        "server said: bad token [REDACTED] (refresh [REDACTED])"
    # For another URL the token is not used, and still never shown.
    elsewhere = Redactor()
    other = build_provider(home, "remote", "https://elsewhere.example/mcp", None, redactor=elsewhere)
    assert await other.file_storage.get_tokens() is None
    assert elsewhere(f"at-{CANARY}") == "[REDACTED]"


def test_what_a_server_echoes_back_on_success_is_redacted_everywhere(home: Home,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOX_TOKEN", CANARY)
    write_config(home, {"mcp_servers": {"box": fast_entry("--describe-env", "BOX_TOKEN",
                                                          env={"BOX_TOKEN": "${BOX_TOKEN}"})}})
    outputs = [hermes("tools", "list", home=home), hermes("tools", "list", "--json", home=home),
               hermes("tools", "describe", "mcp__box__echo", "--json", home=home),
               hermes("tools", "search", "echo", "--json", home=home),
               hermes("mcp", "test", "box", home=home),
               hermes("tools", "call", "mcp__box__reveal", "--args", '{"variable": "BOX_TOKEN"}', home=home),
               hermes("tools", "call", "mcp__box__echo", "--args", json.dumps({"text": CANARY}), "--json", home=home)]
    for ran in outputs:
        assert CANARY not in ran.stdout + ran.stderr, ran.stdout
    assert "the value is [REDACTED]" in outputs[5].stdout
    assert "started with [REDACTED]" in outputs[0].stdout + outputs[1].stdout


def test_the_log_of_an_unexpected_error_hides_dotenv_values(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes.cli.main import unexpected

    home.ensure()
    home.dotenv.write_text(f"API_KEY={CANARY}\n")
    monkeypatch.setenv("HERMES_HOME", str(home.root))
    sentence = unexpected(RuntimeError(f"the server said: key {CANARY} refused"))
    log = (home.logs / "hermes.log").read_text()
    assert "RuntimeError" in log and "refused" in log and CANARY not in log and CANARY not in sentence
