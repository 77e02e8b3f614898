"""The `hermes` CLI as a user runs it: exit codes, JSON, no SDK import where it isn't needed, no leaks."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from hermes.home import Home
from tests.support import CANARY, PYTHON, fast_entry, hermes, stdio_entry, wait_for, write_config


def _imported_modules(*args: str, home: Home, exit_code: int = 0) -> set[str]:
    result = subprocess.run([PYTHON, "-X", "importtime", "-m", "hermes", *args], capture_output=True, text=True,
                            env={**os.environ, "HERMES_HOME": str(home.root)}, timeout=60)
    assert result.returncode == exit_code, result.stderr
    return {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("args", [("--help",), ("mcp", "--help"), ("mcp", "list", "--json"), ("mcp", "list")])
def test_help_and_list_never_import_the_sdk(home: Home, args: tuple[str, ...]) -> None:
    write_config(home, {"mcp_servers": {f"s{i}": stdio_entry() for i in range(20)}})
    modules = _imported_modules(*args, home=home)
    assert "hermes.cli.main" in modules
    heavy = {m for m in modules if m.split(".")[0] in {"mcp", "mcp_types", "httpx2", "starlette", "uvicorn",
                                                       "openai", "prompt_toolkit", "questionary", "psutil"}}
    assert heavy == set()
    if args[0] == "mcp":
        # Commands load their modules on first use: a listing pays neither for the agent nor for the
        # other clients' importers, and without plugins not for the app machinery either.
        unneeded = {m for m in modules if m.startswith(("hermes.agent", "hermes.cli.chat", "hermes.config.importers",
                                                         "hermes.apps", "hermes.config.trust", "traceback"))}
        assert unneeded == set()


def test_gateway_status_loads_neither_the_agent_nor_the_sdk(home: Home) -> None:
    """A status reads config.yaml and the service's record; it checks the settings a start would,
    without loading what only a running gateway needs."""
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m"},
                        "gateway": {"telegram": {"token": "t", "api_url": "http://127.0.0.1:9"}}})
    modules = _imported_modules("gateway", "status", home=home, exit_code=1)  # 1: not running
    assert "hermes.gateway.settings" in modules
    loaded = {m for m in modules if m.split(".")[0] in {"mcp", "mcp_types", "openai"} or
              m.startswith(("hermes.agent", "hermes.session.core", "hermes.gateway.run"))}
    assert loaded == set()


def test_add_list_remove_and_exit_codes(home: Home) -> None:
    assert hermes("mcp", "add", "x", home=home).returncode == 2
    assert hermes("mcp", "add", "x", "--command", "a", "--url", "http://b", home=home).returncode == 2
    assert hermes("mcp", "add", "x", "--url", "http://b", "--env", "K=V", home=home).returncode == 2
    bad_header = hermes("mcp", "add", "x", "--url", "http://b", "--header", "nocolon", home=home)
    assert bad_header.returncode == 2 and "KEY:VALUE" in bad_header.stderr
    ok = hermes("mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", f"Authorization: Bearer {CANARY}",
                "--transport", "sse", home=home)
    assert ok.returncode == 0, ok.stderr
    ok = hermes("mcp", "add", "local", "--env", f"API_KEY={CANARY}", "--disabled", "--", "srv", "-v",
                "--filter=a,b", home=home)
    assert ok.returncode == 0, ok.stderr
    again = hermes("mcp", "add", "local", "--command", "srv", home=home)
    assert again.returncode == 2 and "already configured" in again.stderr
    listing = hermes("mcp", "list", "--json", home=home)
    assert listing.returncode == 0
    rows = {r["name"]: r for r in json.loads(listing.stdout)["servers"]}
    assert rows["web"]["transport"] == "sse" and rows["web"]["enabled"] is True
    assert rows["local"] == {"name": "local", "transport": "stdio", "target": "srv -v --filter=a,b", "tools": "all",
                             "enabled": False, "state": "disabled", "scope": "user", "source": "config.yaml",
                             "auth": "none", "app_bound": False, "shadowed_by": None,
                             "why_off": "disabled in config.yaml (enabled: false)"}
    table = hermes("mcp", "list", home=home)
    assert "local" in table.stdout and "sse" in table.stdout
    for output in (listing.stdout, table.stdout, listing.stderr, table.stderr):
        assert CANARY not in output
    assert hermes("mcp", "remove", "nope", home=home).returncode == 3
    for command in (("mcp", "test", "nope"), ("mcp", "configure", "nope")):
        missing = hermes(*command, home=home)
        assert missing.returncode == 3 and "No MCP server named 'nope'" in missing.stderr
    assert hermes("mcp", "remove", "local", home=home).returncode == 0
    assert "local" not in hermes("mcp", "list", home=home).stdout


def test_mcp_test_reports_timings_and_failures(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(home, {"mcp_servers": {
        "box": fast_entry(env={"FAKE_API_KEY": CANARY}, tools={"exclude": ["crash"]}),
        "broken": fast_entry("--stderr-secret", "--exit-at-start", "3", env={"FAKE_API_KEY": CANARY}),
    }})
    good = hermes("mcp", "test", "box", "--json", home=home)
    assert good.returncode == 0, good.stderr
    report = json.loads(good.stdout)
    assert report["ok"] and report["connect_ms"] > 0 and report["server_info"].startswith("fast")
    selected = {t["name"]: t["selected"] for t in report["tools"]}
    assert selected["echo"] is True and selected["crash"] is False
    text = hermes("mcp", "test", "box", home=home)
    assert "connected in" in text.stdout and "[ ] crash" in text.stdout
    bad = hermes("mcp", "test", "broken", home=home)
    assert bad.returncode == 1
    assert "broken: failed:" in bad.stdout and "exit code 3" in bad.stdout
    assert "starting with key [REDACTED]" in bad.stdout
    for output in (good.stdout, text.stdout, bad.stdout, bad.stderr):
        assert CANARY not in output
    assert CANARY not in home.server_log("broken").read_text()


def test_tools_list_and_call(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry(), "lean": fast_entry("--lean"),
                                        "gone": {"command": "no-such-binary-for-hermes"}}})
    listing = hermes("tools", "list", "--json", home=home)
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    names = {t["name"] for t in data["tools"]}
    assert "mcp__box__get_weather" in names and "mcp__lean__ping" in names
    assert {s["original"] for s in data["skipped"]} == {"a.b", "a-b"}
    assert [u["server"] for u in data["unavailable"]] == ["gone"]
    assert "no-such-binary-for-hermes" in data["unavailable"][0]["reason"]
    text = hermes("tools", "list", home=home)
    assert "mcp__box__echo" in text.stdout and "skipped: a.b (lean)" in text.stdout
    assert "unavailable: gone" in text.stdout
    call = hermes("tools", "call", "mcp__box__echo", "--args", '{"text": "hi there"}', home=home)
    assert call.returncode == 0 and call.stdout.strip() == "hi there"
    failing = hermes("tools", "call", "mcp__box__fail", "--args", '{"text": "x"}', home=home)
    assert failing.returncode == 1 and "failure while using x" in failing.stderr
    unavailable = hermes("tools", "call", "mcp__gone__x", "--json", home=home)
    assert unavailable.returncode == 1 and json.loads(unavailable.stdout)["state"] == "failed"
    assert hermes("tools", "call", "mcp__box__echo", "--args", "{not json", home=home).returncode == 2
    assert hermes("tools", "call", "mcp__box__echo", "--args", "[1]", home=home).returncode == 2


def test_status_and_reload_without_a_session(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry(), "off": fast_entry(enabled=False)}})
    reload = hermes("mcp", "reload", home=home)
    assert reload.returncode == 0 and "No running hermes session" in reload.stdout
    status = hermes("mcp", "status", "--json", home=home)
    assert status.returncode == 0, status.stderr
    servers = {s["name"]: s for s in json.loads(status.stdout)["sessions"][0]["servers"]}
    assert servers["box"]["state"] == "connected" and servers["box"]["tools"] == 14
    assert servers["off"]["state"] == "disabled" and "enabled: false" in servers["off"]["unavailable"]["reason"]


def test_status_asks_the_running_session(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    serve = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "serve"],
                             env={**os.environ, "HERMES_HOME": str(home.root)}, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: bool(list(home.run.glob("session-*.json"))))
        status = hermes("mcp", "status", "--json", home=home)
        assert status.returncode == 0
        sessions = json.loads(status.stdout)["sessions"]
        assert sessions[0]["session_pid"] == serve.pid
        assert sessions[0]["servers"][0]["name"] == "box"
        runtime = next(home.run.glob("session-*.json"))
        assert oct(runtime.stat().st_mode & 0o777) == "0o600"
        write_config(home, {"mcp_servers": {"box": fast_entry(timeout=5)}})
        reload = hermes("mcp", "reload", home=home)
        assert reload.returncode == 0 and "Restarted: box" in reload.stdout
        home.config.write_text("mcp_servers:\n  box: [broken\n")
        refused = hermes("mcp", "reload", home=home)
        assert refused.returncode == 1 and "not valid YAML" in refused.stderr
        status = hermes("mcp", "status", home=home)
        assert "connected" in status.stdout
    finally:
        serve.terminate()
        serve.wait(timeout=20)
