"""The curated MCP catalog: manifests, states, one-command install against local stand-in servers."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pexpect

from hermes.catalog.manifest import load_entries
from hermes.config.store import ConfigStore
from hermes.home import Home
from tests.support import CANARY, PYTHON, SERVERS, hermes, stdio_entry, write_config

BOX = str(SERVERS / "fast.py")  # SDK-free: the catalog probes a tool list, nothing more


def test_shipped_entries_parse_and_cover_the_list() -> None:
    entries, warnings = load_entries()
    assert warnings == []
    assert set(entries) >= {"github", "filesystem", "git", "postgres", "slack", "linear", "sentry", "n8n", "time",
                            "fetch"}
    assert entries["linear"].auth == "oauth" and entries["linear"].is_remote
    assert entries["slack"].settings[0].secret and entries["time"].settings == ()


def test_unknown_schema_version_is_skipped_with_a_warning(home: Home) -> None:
    home.mcp_catalog.mkdir()
    (home.mcp_catalog / "future.json").write_text(json.dumps({"schema": 2, "name": "future"}))
    (home.mcp_catalog / "broken.json").write_text("{")
    entries, warnings = load_entries(home.mcp_catalog)
    assert "future" not in entries
    assert any("future.json: skipped, catalog schema version 2 is not supported" in w for w in warnings)
    assert any(w.startswith("broken.json: skipped") for w in warnings)
    listing = hermes("mcp", "catalog", home=home)
    assert listing.returncode == 0 and "catalog schema version 2 is not supported" in listing.stderr


def _local_entry(home: Home, **overrides: Any) -> None:
    """A catalog entry of our own whose server is the fast test server."""
    home.mcp_catalog.mkdir(exist_ok=True)
    entry = {"schema": 1, "name": "box", "title": "Box", "description": "Test tools.",
             "transport": {"type": "stdio", "command": PYTHON, "args": [BOX], "env": {"FAKE_API_KEY": "${BOX_KEY}"}},
             "auth": {"type": "api_key", "settings": [
                 {"name": "BOX_KEY", "prompt": "API key", "secret": True},
                 {"name": "BOX_REGION", "prompt": "Region", "secret": False, "default": "eu"}]},
             "tools": {"default_excluded": ["crash", "fail"]},
             "post_install": "Box is ready."}
    entry.update(overrides)
    (home.mcp_catalog / "box.json").write_text(json.dumps(entry))


def test_install_non_interactive_writes_env_reference_and_default_selection(home: Home) -> None:
    _local_entry(home)
    result = hermes("mcp", "install", "box", "--set", f"BOX_KEY={CANARY}", "--yes", home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Installed 'box' with 12 of 14 tools." in result.stdout and "Box is ready." in result.stdout
    config_text = home.config.read_text()
    assert CANARY not in config_text and "${BOX_KEY}" in config_text
    assert f"BOX_KEY={CANARY}" in home.dotenv.read_text()
    assert stat.S_IMODE(home.dotenv.stat().st_mode) == 0o600
    server = ConfigStore(home).load().mcp_servers["box"]
    assert server.tools.include is not None and "crash" not in server.tools.include and "echo" in server.tools.include
    assert CANARY not in result.stdout + result.stderr
    catalog = json.loads(hermes("mcp", "catalog", "--json", home=home).stdout)["catalog"]
    states = {r["name"]: r["state"] for r in catalog}
    assert states["box"] == "installed (enabled)" and states["time"] == "available"


def test_previous_selection_wins_and_missing_settings_are_named(home: Home) -> None:
    _local_entry(home)
    missing = hermes("mcp", "install", "box", "--yes", home=home)
    assert missing.returncode == 2 and "needs BOX_KEY (API key); pass --set BOX_KEY=..." in missing.stderr
    assert not home.config.exists()
    write_config(home, {"mcp_servers": {"box": {**stdio_entry(), "tools": {"include": ["echo"]}}}})
    again = hermes("mcp", "install", "box", "--set", "BOX_KEY=k-123456", "--yes", home=home)
    assert again.returncode == 0 and "1 of 14 tools" in again.stdout
    assert ConfigStore(home).load().mcp_servers["box"].tools.include == ("echo",)
    unknown = hermes("mcp", "install", "nope", "--yes", home=home)
    assert unknown.returncode == 3 and "has no entry 'nope'" in unknown.stderr


def test_failed_probe_saves_disabled_with_the_reason(home: Home) -> None:
    _local_entry(home)
    result = hermes("mcp", "install", "box", "--set", "BOX_KEY=k-123456", "--yes", "--command", "no-such-program-x",
                    home=home)
    assert result.returncode == 1
    assert "command 'no-such-program-x' was not found" in result.stdout and "disabled" in result.stdout
    assert ConfigStore(home).load().mcp_servers["box"].enabled is False


def test_launch_override_for_a_remote_entry(home: Home, http_server: Any) -> None:
    url = http_server()
    result = hermes("mcp", "install", "time", "--yes", "--url", url, home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ConfigStore(home).load().mcp_servers["time"].url == url


def _spawn(home: Home, *args: str) -> pexpect.spawn:
    return pexpect.spawn(PYTHON, ["-m", "hermes", *args], encoding="utf-8", timeout=60, dimensions=(50, 160),
                         env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm"})


def test_interactive_install_prompts_secrets_and_checklist(home: Home) -> None:
    _local_entry(home)
    child = _spawn(home, "mcp", "install", "box")
    child.expect("API key")
    child.sendline(CANARY)
    child.expect("Region")
    child.sendline("")  # keep the default
    child.expect("Tools to offer")
    # Everything starts checked (the user's documents: all selected); what the entry advises
    # against is marked, to uncheck.
    child.expect(r"fail .*\[changes things: uncheck it if you do not need it\]")
    child.send(" ")  # uncheck echo, the first tool
    child.send("\r")
    child.expect("Installed 'box' with 13 of 14 tools")
    child.expect(pexpect.EOF)
    assert CANARY not in home.config.read_text() and CANARY in home.dotenv.read_text()
    assert "echo" not in (ConfigStore(home).load().mcp_servers["box"].tools.include or ())


def test_picker_browses_installs_disables_and_removes(home: Home) -> None:
    _local_entry(home, auth={"type": "none"}, transport={"type": "stdio", "command": PYTHON, "args": [BOX]})
    down = "\x1b[B"
    child = _spawn(home, "mcp")
    child.expect("MCP servers")
    child.send("\r")  # the first entry: box (available)
    child.expect(r"box \[available\]")
    child.send("\r")  # Install
    child.expect("Tools to offer")
    child.send("\r")
    child.expect("Installed 'box'")
    child.expect("MCP servers")
    child.send("\r")
    child.expect(r"box \[installed \(enabled\)\]")
    child.send("\r")  # Disable
    child.expect("box disabled")
    assert ConfigStore(home).load().mcp_servers["box"].enabled is False
    child.expect("MCP servers")
    child.send("\r")
    child.expect(r"box \[installed \(disabled\)\]")
    child.send(down * 2 + "\r")  # Remove
    child.expect("Remove box")
    child.send("y")
    child.expect("Removed box")
    child.expect("MCP servers")
    child.send("\x03")
    child.expect(pexpect.EOF)
    assert "box" not in ConfigStore(home).load().mcp_servers


def test_picker_refuses_without_a_terminal(home: Home) -> None:
    result = hermes("mcp", home=home)
    assert result.returncode == 2 and "needs a terminal" in result.stderr


def test_remove_deletes_oauth_tokens(home: Home) -> None:
    write_config(home, {"mcp_servers": {"linear": {"url": "https://mcp.linear.app/mcp", "auth": "oauth"}}})
    home.tokens.mkdir(mode=0o700)
    for name in ("linear.json", "linear.client.json"):
        (home.tokens / name).write_text("{}")
    assert {r["name"]: r["state"] for r in json.loads(hermes("mcp", "catalog", "--json", home=home).stdout)[
        "catalog"]}["linear"] == "enabled"
    result = hermes("mcp", "remove", "linear", home=home)
    assert result.returncode == 0 and "and its OAuth tokens" in result.stdout
    assert list(Path(home.tokens).iterdir()) == []


def test_the_pinned_install_step_runs_before_the_probe(home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "prepared"
    _local_entry(home, install={"command": [PYTHON, "-c", f"open({str(marker)!r}, 'w').write('ok')"]},
                 transport={"type": "stdio", "command": PYTHON, "args": [BOX]}, auth={"type": "none"})
    result = hermes("mcp", "install", "box", "--yes", home=home)
    assert result.returncode == 0 and marker.read_text() == "ok"
    _local_entry(home, install={"command": [PYTHON, "-c", "raise SystemExit('no network')"]},
                 transport={"type": "stdio", "command": PYTHON, "args": [BOX]}, auth={"type": "none"})
    again = hermes("mcp", "install", "box", "--yes", home=home)
    assert again.returncode == 0 and "failed (exit code 1: no network); trying the server anyway" in again.stderr


def test_without_a_terminal_or_yes_a_failed_install_changes_nothing(home: Home) -> None:
    _local_entry(home, auth={"type": "none"}, transport={"type": "stdio", "command": PYTHON,
                                                         "args": ["-c", "raise SystemExit(4)"]})
    write_config(home, {"mcp_servers": {"other": {"command": "x"}}})
    before = home.config.read_bytes()
    ran = hermes("mcp", "install", "box", home=home)
    assert ran.returncode != 0 and "Nothing was changed" in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    assert home.config.read_bytes() == before
    kept = hermes("mcp", "install", "box", "--yes", home=home)
    assert "Keeping it in config.yaml, disabled (--yes)." in kept.stdout + kept.stderr
