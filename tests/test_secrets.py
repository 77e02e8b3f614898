"""Canary secrets: configured through .env, used by servers, and never seen in any output or file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes.config.dotenv import set_dotenv
from hermes.home import Home
from tests.conftest import CANARY, hermes, stdio_entry, write_config


def test_canary_never_leaks(home: Home, http_server: Any) -> None:
    url = http_server("--require-bearer", CANARY)
    set_dotenv(home.dotenv, {"CANARY_KEY": CANARY})
    write_config(home, {"mcp_servers": {
        "box": stdio_entry("toolbox.py", "--stderr-secret", env={"FAKE_API_KEY": "${CANARY_KEY}"}),
        "crashy": stdio_entry("toolbox.py", "--stderr-secret", "--crash-after", "0",
                              env={"FAKE_API_KEY": "${env:CANARY_KEY}"}),
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
