"""`hermes doctor` checks everything at once against real parts (a model endpoint on loopback, real
stdio servers, the machine's bubblewrap) and gives the fix for each failure."""

from __future__ import annotations

import json
from typing import Any

from hermes.home import Home
from tests.agent.conftest import model_config
from tests.support import PYTHON, fast_entry, hermes, write_config


def test_doctor_checks_everything_and_names_each_fix(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "get_time", "arguments": {}}]}])
    write_config(home, {"model": model_config(model), "mcp_servers": {
        "box": fast_entry(),
        "broken": {"command": PYTHON, "args": ["-c", "import sys; sys.exit('TOKEN_FOR_DOCTOR is not set')"]},
        "off": {**fast_entry(), "enabled": False}}})
    home.dotenv.write_text("SOMETHING=1\n")
    home.dotenv.chmod(0o644)
    ran = hermes("doctor", "--json", home=home, env={"TOKEN_FOR_DOCTOR": "shell-value"})
    assert ran.returncode == 1
    checks = {c["name"]: c for c in json.loads(ran.stdout)["checks"]}
    assert checks["config.yaml"]["verdict"] == "ok"
    assert checks[".env"]["verdict"] == "fail" and f"chmod 600 {home.dotenv}" in checks[".env"]["fix"]
    assert checks["model"]["verdict"] == "ok" and "tool calls work" in checks["model"]["detail"]
    assert checks["server box"]["verdict"] == "ok" and "connected" in checks["server box"]["detail"]
    assert checks["server broken"]["verdict"] == "fail"
    assert "env: {TOKEN_FOR_DOCTOR: ${TOKEN_FOR_DOCTOR}}" in checks["server broken"]["fix"]
    assert checks["server off"]["verdict"] == "skip"
    assert checks["sandbox"]["verdict"] in ("ok", "fail") and checks["sandbox"]["detail"]
    assert "shell-value" not in ran.stdout + ran.stderr

    home.dotenv.chmod(0o600)
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    table = hermes("doctor", home=home)
    assert "no model configured" in table.stdout and "server box" in table.stdout
    assert table.returncode == (0 if "✗" not in table.stdout else 1)

    home.config.write_text("mcp_servers: [oops\n")
    broken = hermes("doctor", "--json", home=home)
    first = json.loads(broken.stdout)["checks"][0]
    assert broken.returncode == 1 and first["name"] == "config.yaml" and first["verdict"] == "fail"
    assert str(home.config) in first["detail"]


def test_debug_shows_the_log_on_stderr_redacted_and_only_for_that_command(home: Home) -> None:
    import os

    canary = "sk-debugcanary0123456789abcdefXYZ"
    home.ensure()
    home.dotenv.write_text(f"FAKE_API_KEY={canary}\n")
    home.dotenv.chmod(0o600)
    write_config(home, {"mcp_servers": {"box": fast_entry("--describe-env", "FAKE_API_KEY",
                                                          env={"FAKE_API_KEY": "${FAKE_API_KEY}"})}})
    ran = hermes("--debug", "tools", "call", "mcp__box__echo", "--args", json.dumps({"text": canary}), home=home)
    assert ran.returncode == 0
    assert "debug: hermes.mcp.connection DEBUG: server box: connected" in ran.stderr
    assert "server box: calling echo" in ran.stderr
    assert canary not in ran.stderr and "HERMES_DEBUG" not in os.environ
    quiet = hermes("tools", "call", "mcp__box__echo", "--args", '{"text": "x"}', home=home)
    assert "debug:" not in quiet.stderr
