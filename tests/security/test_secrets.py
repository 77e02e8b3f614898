"""Canary secrets: configured through .env, used by servers, and never seen in any output or file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
