"""The CLI people expect: adding servers as typed, importing from other clients, everyday verbs,
suggestions for typos, tables that fit, completion, and exit codes as documented."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes.config.store import ConfigStore
from hermes.home import Home
from tests.npm_tools import NpmTools
from tests.support import CANARY, SERVERS, fast_entry, hermes, write_config


def _servers(home: Home) -> dict[str, Any]:
    return {name: entry for name, entry in ConfigStore(home).load().mcp_servers.items()}


def test_everything_after_the_double_dash_is_the_command_verbatim(home: Home) -> None:
    ran = hermes("mcp", "add", "files", "--env", "MODE=ro", "--", "npx", "-y", "@scope/pkg", "--filter=a,b",
                 "--root", "/my folder", home=home)
    assert ran.returncode == 0, ran.stderr
    entry = _servers(home)["files"]
    assert entry.command == "npx" and entry.args == ("-y", "@scope/pkg", "--filter=a,b", "--root", "/my folder")
    assert dict(entry.env) == {"MODE": "ro"}
    # --args: one argument per flag, never split on commas.
    two = hermes("mcp", "add", "two", "--command", "srv", "--args", "--x=1,2", "--args", "y", home=home)
    assert two.returncode == 0
    assert _servers(home)["two"].args == ("--x=1,2", "y")


def test_a_whole_command_line_in_command_gets_the_double_dash_hint(home: Home) -> None:
    ran = hermes("mcp", "add", "pkg", "--command", "npx -y some-pkg", home=home)
    assert ran.returncode == 2 and "hermes mcp add pkg -- npx -y some-pkg" in ran.stderr
    assert not home.config.exists()
    bad = hermes("mcp", "add", "web", "--url", "ftp://example.org/mcp", home=home)
    assert bad.returncode == 2 and "http:// or https://" in bad.stderr
    spaced = hermes("mcp", "add", "my server", "--", "srv", home=home)
    assert spaced.returncode == 2 and "not a valid server name" in spaced.stderr and "Traceback" not in spaced.stderr


def test_add_json_takes_other_clients_shape_and_moves_secrets_to_dotenv(home: Home) -> None:
    stdio = {"command": "npx", "args": ["-y", "gh-server"], "env": {"GITHUB_TOKEN": CANARY, "LOG": "debug"}}
    ran = hermes("mcp", "add-json", "github", json.dumps(stdio), home=home)
    assert ran.returncode == 0, ran.stderr
    remote = {"type": "sse", "url": "https://mcp.example.org/sse", "headers": {"Authorization": f"Bearer {CANARY}2"}}
    assert hermes("mcp", "add-json", "remote", json.dumps(remote), home=home).returncode == 0
    config = home.config.read_text()
    assert CANARY not in config and "${GITHUB_TOKEN}" in config and "Bearer ${REMOTE_AUTHORIZATION}" in config
    assert "LOG: debug" in config and "transport: sse" in config
    dotenv = home.dotenv.read_text()
    assert f"GITHUB_TOKEN={CANARY}" in dotenv and f"REMOTE_AUTHORIZATION={CANARY}2" in dotenv
    assert stat.S_IMODE(home.dotenv.stat().st_mode) == 0o600
    broken = hermes("mcp", "add-json", "x", "{not json", home=home)
    assert broken.returncode == 2 and "not valid JSON" in broken.stderr
    neither = hermes("mcp", "add-json", "x", '{"args": []}', home=home)
    assert neither.returncode == 2 and "needs 'command' (stdio) or 'url' (HTTP)" in neither.stderr
    misspelt = hermes("mcp", "add-json", "x", '{"comand": "npx", "args": []}', home=home)
    assert misspelt.returncode == 2 and "'comand' (did you mean 'command'?)" in misspelt.stderr
    assert "x:" not in home.config.read_text()


def test_add_json_takes_the_mcpservers_block_a_readme_shows(home: Home) -> None:
    block = {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}
    ran = hermes("mcp", "add-json", "mem", json.dumps(block), home=home)
    assert ran.returncode == 0 and "the block calls it 'memory'; it is added as 'mem'" in ran.stderr
    vscode = {"servers": {"a": {"command": "a-server"}, "b": {"url": "https://b.example.org/mcp"}}}
    assert hermes("mcp", "add-json", "b", json.dumps(vscode), home=home).returncode == 0
    entries = YAML(typ="safe").load(home.config.read_text())["mcp_servers"]
    assert entries == {"mem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
                       "b": {"url": "https://b.example.org/mcp"}}
    before = home.config.read_text()
    many = hermes("mcp", "add-json", "c", json.dumps(vscode), home=home)
    assert many.returncode == 2 and "holds 2 servers (a, b) and none is called 'c'" in many.stderr
    assert "hermes mcp import" in many.stderr and home.config.read_text() == before


@pytest.fixture
def other_clients(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user home and a project where Claude Desktop, Claude Code, Cursor, VS Code and Goose left servers."""
    user = tmp_path / "user"
    project = tmp_path / "project"
    (user / ".config" / "Claude").mkdir(parents=True)
    (user / ".config" / "Claude" / "claude_desktop_config.json").write_text(json.dumps({"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": CANARY}},
        "existing": {"command": "other"}}}))
    project.mkdir()
    (user / ".claude.json").write_text(json.dumps({
        "mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                                  "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": CANARY}}},
        "projects": {str(project): {"mcpServers": {"notes db": {"command": "uvx", "args": ["notes-mcp"]}}}}}))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "linear": {"type": "http", "url": "https://mcp.linear.app/mcp"}}}))
    (user / ".cursor").mkdir()
    (user / ".cursor" / "mcp.json").write_text("{ this is not json")
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(json.dumps({
        "inputs": [{"id": "api-key", "type": "promptString", "password": True}],
        "servers": {"weather": {"type": "stdio", "command": "weather-mcp", "env": {"API_KEY": "${input:api-key}"}}}}))
    (user / ".config" / "goose").mkdir(parents=True)
    (user / ".config" / "goose" / "config.yaml").write_text(
        "extensions:\n  developer:\n    type: builtin\n    name: developer\n"
        "  fetch:\n    type: stdio\n    name: fetch\n    cmd: uvx\n    args: [mcp-server-fetch]\n    enabled: true\n")
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(project)
    return project


def test_import_shows_what_it_found_then_adds_the_new_ones(home: Home, other_clients: Path) -> None:
    write_config(home, {"mcp_servers": {"existing": fast_entry()}})
    listed = hermes("mcp", "import", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    found = {(r["client"], r["name"]): r for r in json.loads(listed.stdout)["found"]}
    assert ("Claude Desktop", "github") in found and ("Goose", "fetch") in found
    assert ("Claude Code (this project)", "notes-db") in found and ("Claude Code (.mcp.json)", "linear") in found
    assert "already configured" in found[("Claude Desktop", "existing")]["skip"]
    assert "the same server as in Claude Desktop" in found[("Claude Code", "github")]["skip"]
    assert "Cursor" in listed.stderr and "not valid JSON" in listed.stderr
    assert CANARY not in listed.stdout + listed.stderr
    assert not any(name == "developer" for _, name in found)  # Goose's built-in is not an MCP server
    added = hermes("mcp", "import", "--yes", home=home)
    assert added.returncode == 0, added.stderr
    servers = _servers(home)
    assert set(servers) == {"existing", "github", "notes-db", "fetch"}
    assert servers["existing"].command.endswith("python") or "fast.py" in " ".join(servers["existing"].args)
    # What the project's own files (.mcp.json, .vscode/mcp.json) bring stays the project's, untrusted:
    # a repository cannot put servers into the user's config, where they would start from any folder.
    project = ConfigStore(home, other_clients / ".hermes" / "config.yaml").load().mcp_servers
    assert set(project) == {"linear", "weather"}
    assert project["linear"].url == "https://mcp.linear.app/mcp"
    assert dict(project["weather"].env) == {"API_KEY": "${API_KEY}"}
    assert "set API_KEY in .env" in added.stdout
    assert f"start only once you trust the folder: review it, then run `hermes mcp trust {other_clients}`" \
        in added.stdout
    rows = {r["name"]: r for r in json.loads(hermes("mcp", "list", "--json", home=home).stdout)["servers"]}
    assert rows["linear"]["state"] == "untrusted" and rows["weather"]["state"] == "untrusted"
    assert CANARY not in home.config.read_text() and f"GITHUB_PERSONAL_ACCESS_TOKEN={CANARY}" in home.dotenv.read_text()
    again = hermes("mcp", "import", "--yes", home=home)
    assert again.returncode == 0 and "Nothing new to add" in again.stdout


def test_import_from_a_file_and_without_a_terminal(home: Home, tmp_path: Path) -> None:
    source = tmp_path / "servers.json"
    source.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    refused = hermes("mcp", "import", "--from", str(source), home=home)
    assert refused.returncode == 2 and "--yes" in refused.stderr and not home.config.exists()
    assert hermes("mcp", "import", "--from", str(source), "--yes", home=home).returncode == 0
    assert _servers(home)["time"].args == ("mcp-server-time",)
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    nothing = hermes("mcp", "import", "--from", str(empty), home=home)
    assert "holds no MCP servers" in nothing.stderr


def test_import_never_shows_a_secret_of_the_file_it_reads(home: Home, tmp_path: Path) -> None:
    source = tmp_path / "servers.json"
    source.write_text(json.dumps({"mcpServers": {
        "gh": {"command": "npx", "args": ["-y", "gh-mcp", "--token", f"ghp_{CANARY}abcdefghij12"]},
        "api": {"url": f"https://me:{CANARY}@api.example/mcp?api_key={CANARY}"},
        "env": {"command": "srv", "env": {"API_KEY": "${API_KEY:-" + CANARY + "}"}},
        "ftp": {"url": f"ftp://files.example/?token={CANARY}"}}}))
    outputs = []
    for extra in ((), ("--json",), ("--yes",)):
        ran = hermes("mcp", "import", "--from", str(source), *extra, home=home)
        outputs += [ran.stdout, ran.stderr]
    listed = hermes("mcp", "list", home=home)
    joined = "\n".join([*outputs, listed.stdout, listed.stderr])
    assert "gh-mcp" in joined and "api.example" in joined and "API_KEY" in joined  # the rows are there
    assert CANARY not in joined


@pytest.mark.parametrize("servers", [
    {"a\ud800b": {"command": "srv"}},
    {"srv": {"command": "srv", "env": {"K": "v\udc80"}}},
    {"srv": {"command": "s\ud800rv"}},
])
def test_import_refuses_a_file_with_text_that_is_not_unicode_and_writes_nothing(home: Home, tmp_path: Path,
                                                                                  servers: dict[str, Any]) -> None:
    source = tmp_path / ".mcp.json"
    source.write_text(json.dumps({"mcpServers": servers}))  # escaped: \ud800 in the file's text
    for extra in ((), ("--json",), ("--yes",)):
        ran = hermes("mcp", "import", "--from", str(source), *extra, home=home)
        assert ran.returncode == 2, ran.stderr
        assert str(source) in ran.stderr and "not valid Unicode (a lone surrogate) at mcpServers." in ran.stderr
        assert "unexpected error" not in ran.stderr and not home.config.exists()


def test_a_lone_surrogate_in_config_yaml_is_listed_not_an_unexpected_error(home: Home) -> None:
    """YAML's "\\ud800" escape reads as a lone surrogate, which has no UTF-8 form: JSON carries it
    as its own escape, and a table shows the replacement character."""
    home.root.mkdir(parents=True, exist_ok=True)
    home.config.write_text('mcp_servers:\n  s:\n    command: "\\ud800x"\n')
    listed = hermes("mcp", "list", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["servers"][0]["target"] == "\ud800x"
    for command in (("mcp", "list"), ("mcp", "get", "s")):
        shown = hermes(*command, home=home)
        assert shown.returncode == 0 and "\ufffdx" in shown.stdout, shown.stderr
        assert "unexpected error" not in shown.stderr


def test_get_enable_disable_logout_and_suggestions(home: Home) -> None:
    write_config(home, {"mcp_servers": {"files": fast_entry(env={"TOKEN": CANARY}),
                                        "web": {"url": f"https://u:{CANARY}@example.org/mcp",
                                                "headers": {"Authorization": f"Bearer {CANARY}"}}}})
    got = hermes("mcp", "get", "files", "--json", home=home)
    data = json.loads(got.stdout)
    assert data["scope"] == "user" and data["settings"]["env"] == {"TOKEN": "<hidden>"}
    web = hermes("mcp", "get", "web", home=home)
    assert web.returncode == 0 and CANARY not in web.stdout + got.stdout and "Authorization=<hidden>" in web.stdout
    typo = hermes("mcp", "get", "fils", home=home)
    assert typo.returncode == 3 and "did you mean 'files'?" in typo.stderr
    assert hermes("mcp", "disable", "files", home=home).returncode == 0
    assert _servers(home)["files"].enabled is False
    status = json.loads(hermes("mcp", "status", "--json", home=home).stdout)["sessions"][0]["servers"]
    files = next(s for s in status if s["name"] == "files")
    assert "hermes mcp enable files" in files["unavailable"]["user_action"]
    assert hermes("mcp", "enable", "files", home=home).returncode == 0
    assert _servers(home)["files"].enabled is True and "enabled" not in home.config.read_text()
    assert hermes("mcp", "enable", "nope", home=home).returncode == 3
    home.tokens.mkdir(parents=True)
    (home.tokens / "web.json").write_text("{}")
    out = hermes("mcp", "logout", "web", home=home)
    assert out.returncode == 0 and "tokens are deleted" in out.stdout and not (home.tokens / "web.json").exists()
    assert "nothing to delete" in hermes("mcp", "logout", "web", home=home).stdout


def test_tools_describe_and_unknown_tools(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    described = hermes("tools", "describe", "mcp__box__get_weather", home=home)
    assert described.returncode == 0
    assert "tool 'get-weather' of MCP server 'box'" in described.stdout and "city" in described.stdout
    assert "Annotations: read-only: yes" in described.stdout  # what the definition says, not only its schema
    schema = json.loads(hermes("tools", "describe", "mcp__box__echo", "--json", home=home).stdout)
    assert schema["definition"]["inputSchema"]["required"] == ["text"]
    missing = hermes("tools", "describe", "mcp__box__ech", home=home)
    assert missing.returncode == 3 and "did you mean 'mcp__box__echo'?" in missing.stderr
    call = hermes("tools", "call", "mcp__box__ech", home=home)
    assert call.returncode == 3 and "did you mean 'mcp__box__echo'?" in call.stderr
    lacking = hermes("tools", "call", "mcp__box__echo", "--args", "{}", home=home)
    assert lacking.returncode == 2 and "Missing required arguments for mcp__box__echo: text" in lacking.stderr


def test_typos_in_platforms_and_top_level_keys(home: Home) -> None:
    write_config(home, {"mcp_server": {"x": fast_entry()}, "other_tool": {"kept": True}})
    listed = hermes("mcp", "list", home=home)
    assert "unknown top-level key mcp_server (did you mean 'mcp_servers'?)" in listed.stderr
    assert "other_tool" not in listed.stderr
    platform = hermes("tools", "list", "--platform", "telegrm", home=home)
    assert platform.returncode == 2 and "did you mean 'telegram'?" in platform.stderr
    command = hermes("toools", "list", home=home)
    assert command.returncode == 2 and "Did you mean 'tools'?" in command.stderr


def test_tables_fit_the_terminal_width(home: Home) -> None:
    long_args = [f"--option-number-{i}=value" for i in range(12)]
    write_config(home, {"mcp_servers": {"wide": {"command": "srv", "args": long_args,
                                                 "tools": {"include": [f"tool_{i}" for i in range(20)]}}}})
    narrow = hermes("mcp", "list", home=home, env={"COLUMNS": "80"})
    assert all(len(line) <= 80 for line in narrow.stdout.splitlines()), narrow.stdout
    assert "…" in narrow.stdout
    wide = hermes("mcp", "list", home=home, env={"COLUMNS": ""})  # not a terminal, no COLUMNS: nothing is cut
    assert long_args[-1] in wide.stdout
    catalog = hermes("mcp", "catalog", home=home, env={"COLUMNS": "80"})
    assert all(len(line) <= 80 for line in catalog.stdout.splitlines()), catalog.stdout


def test_completion_and_version(home: Home) -> None:
    write_config(home, {"mcp_servers": {"files": fast_entry(), "fetch": fast_entry()}})
    for shell in ("bash", "zsh", "fish"):
        script = hermes("completion", shell, home=home)
        assert script.returncode == 0 and "_HERMES_COMPLETE" in script.stdout
    import subprocess

    from tests.support import PYTHON

    env = {"HERMES_HOME": str(home.root), "_HERMES_COMPLETE": "bash_complete", "COMP_WORDS": "hermes mcp get f",
           "COMP_CWORD": "3", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([PYTHON, "-m", "hermes"], env=env, capture_output=True, text=True)
    assert done.stdout.split() == ["plain,fetch", "plain,files"]
    version = hermes("--version", home=home)
    assert version.returncode == 0 and version.stdout.startswith("hermes, version ")


def test_a_listing_does_not_wait_for_the_slowest_server(home: Home) -> None:
    write_config(home, {"mcp_servers": {"quick": fast_entry(), "slow": fast_entry("--ready-delay", "600")}})
    listed = json.loads(hermes("tools", "list", "--json", "--wait", "1", home=home).stdout)
    assert any(t["server"] == "quick" for t in listed["tools"])
    slow = next(u for u in listed["unavailable"] if u["server"] == "slow")
    assert slow["state"] == "starting"
    status = json.loads(hermes("mcp", "status", "--json", "--wait", "1", home=home).stdout)
    assert {s["name"]: s["state"] for s in status["sessions"][0]["servers"]} == {"quick": "connected",
                                                                                 "slow": "starting"}


def test_a_name_that_does_not_resolve_says_so(home: Home) -> None:
    write_config(home, {"mcp_servers": {"far": {"url": "https://no-such-host.invalid/mcp"}}})
    tested = hermes("mcp", "test", "far", home=home)
    assert tested.returncode == 1 and "could not resolve host no-such-host.invalid" in tested.stdout
    payload = json.loads(hermes("tools", "call", "mcp__far__x", "--json", home=home).stdout)
    assert "HERMES_HOME/logs" not in payload["error"] and "what the server answered" in payload["error"]


def test_installing_filesystem_names_the_folder_it_exposes(home: Home, npm: NpmTools, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    ran = hermes("mcp", "install", "filesystem", "--yes", "--set", f"FILESYSTEM_ROOT={notes}",
                 "--command", npm.filesystem[0], "--args", npm.filesystem[1], "--args", str(notes), home=home)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"The model can read and search {notes} and everything under it" in ran.stdout
    assert _servers(home)["filesystem"].roots == (str(notes),)
    # The entry declares what its sandbox gives: no network (the folder is shared by its argument).
    assert _servers(home)["filesystem"].sandbox.network == "none"
    allowed = hermes("tools", "call", "mcp__filesystem__list_allowed_directories", home=home)
    assert str(notes) in allowed.stdout


def test_a_bad_setting_in_a_new_entry_is_a_sentence_once_the_config_has_servers(home: Home) -> None:
    write_config(home, {"mcp_servers": {"a": fast_entry()}})
    before = home.config.read_bytes()
    ran = hermes("mcp", "add", "b", "--command", "x", "--timeout", "-5", home=home)
    assert ran.returncode == 2 and "mcp_servers.b.timeout: must be a positive number" in ran.stderr, ran.stderr
    assert "unexpected" not in ran.stderr and home.config.read_bytes() == before


def test_claude_code_forms_of_add_work_as_they_do_there(home: Home) -> None:
    assert hermes("mcp", "add", "linear", "https://mcp.linear.app/mcp", home=home).returncode == 0
    assert hermes("mcp", "add", "api", "--transport", "http", "--url", "https://api.example.com/mcp",
                  home=home).returncode == 0
    assert hermes("mcp", "add", "old", "--transport", "sse", "--url", "https://old.example.com/sse",
                  home=home).returncode == 0
    servers = _servers(home)
    assert servers["linear"].url == "https://mcp.linear.app/mcp" and servers["linear"].command is None
    assert servers["api"].transport_name == "http" and servers["old"].transport_name == "sse"


def test_the_documented_comma_form_of_args_is_three_arguments(home: Home) -> None:
    ran = hermes("mcp", "add", "my-git-server", "--command", "uvx", "--args",
                 "mcp-server-git,--repository,/home/user/project", home=home)
    assert ran.returncode == 0 and "split at its commas into 3 arguments" in ran.stderr
    assert _servers(home)["my-git-server"].args == ("mcp-server-git", "--repository", "/home/user/project")
    # Repeated --args and everything after -- are kept exactly as typed, commas included.
    hermes("mcp", "add", "a", "--command", "tool", "--args", "x,y", "--args", "z", home=home)
    hermes("mcp", "add", "b", "--", "tool", "--only=x,y", home=home)
    assert _servers(home)["a"].args == ("x,y", "z") and _servers(home)["b"].args == ("--only=x,y",)


def test_secrets_given_with_e_and_h_go_to_dotenv(home: Home) -> None:
    token = f"ghp_{CANARY}"
    ran = hermes("mcp", "add", "gh", "-e", f"GITHUB_TOKEN={token}", "-e", "LOG_LEVEL=info", "--", "gh-mcp",
                 home=home)
    assert ran.returncode == 0, ran.stderr
    added = hermes("mcp", "add", "remote", "--url", "https://api.example.com/mcp", "-H",
                   f"Authorization: Bearer {token}", home=home)
    assert added.returncode == 0, added.stderr
    config = home.config.read_text()
    assert CANARY not in config and CANARY not in ran.stdout + ran.stderr + added.stdout + added.stderr
    servers = _servers(home)
    assert dict(servers["gh"].env) == {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "info"}
    assert dict(servers["remote"].headers)["Authorization"].startswith("Bearer ${")
    assert f"GITHUB_TOKEN={token}" in home.dotenv.read_text()


def test_a_typo_elsewhere_in_the_config_is_named_not_taken_for_a_missing_server(home: Home) -> None:
    write_config(home, {"model": {"base_ur": "http://127.0.0.1:9/v1", "name": "m"},
                        "mcp_servers": {"box": fast_entry()}})
    tested = hermes("mcp", "test", "box", home=home)
    assert tested.returncode == 2 and "model.base_ur: is not a known key (did you mean 'base_url'?)" in tested.stderr
    assert "No MCP server named" not in tested.stderr


def test_import_reads_real_files_as_their_clients_write_them(home: Home, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """VS Code's mcp.json has comments, trailing commas and ${workspaceFolder}; Goose names
    variables it passes through in `env_keys`; Cursor's SSE servers are known by their URL."""
    user, project = tmp_path / "user", tmp_path / "project"
    (project / ".vscode").mkdir(parents=True)
    (project / ".vscode" / "mcp.json").write_text(
        '{\n  // Servers for this workspace\n  "servers": {\n    "files": {\n      "type": "stdio",\n'
        '      "command": "npx", /* the reference server */\n'
        '      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}/docs", "a//b",],\n'
        '    },\n  },\n}\n')
    (user / ".config" / "goose").mkdir(parents=True)
    (user / ".config" / "goose" / "config.yaml").write_text(
        "extensions:\n  github:\n    type: stdio\n    name: github\n    cmd: github-mcp\n    args: []\n"
        "    env_keys: [GITHUB_TOKEN]\n    enabled: true\n")
    # Cursor's documented remote forms: no type; an SSE server's URL ends in /sse.
    (user / ".cursor").mkdir()
    (user / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "events": {"url": "http://localhost:3000/sse"}, "remote": {"url": "https://mcp.example.com/mcp"}}}))
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(project)
    added = hermes("mcp", "import", "--yes", home=home)
    assert added.returncode == 0, added.stderr
    assert _servers(home)["events"].transport == "sse" and _servers(home)["remote"].transport is None
    files = ConfigStore(home, project / ".hermes" / "config.yaml").load().mcp_servers["files"]
    assert files.args == ("-y", "@modelcontextprotocol/server-filesystem", f"{project}/docs", "a//b")
    assert dict(_servers(home)["github"].env) == {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}


def test_a_placeholder_left_in_a_header_is_named_not_a_raw_encoding_error(home: Home) -> None:
    write_config(home, {"mcp_servers": {"gh": {"url": "http://127.0.0.1:9/mcp",
                                               "headers": {"Authorization": "Bearer ghp_…"}}}})
    tested = hermes("mcp", "test", "gh", home=home)
    out = tested.stdout + tested.stderr
    assert tested.returncode != 0 and "UnicodeEncodeError" not in out
    assert "header Authorization holds a character HTTP headers cannot carry (U+2026 at position 11)" in out


def test_a_broken_npx_cache_is_named_with_its_fix(home: Home) -> None:
    npm_said = ("npm error code ENOTEMPTY\\nnpm error syscall rename\\nnpm error path "
                "/home/me/.npm/_npx/9f2c/node_modules/@modelcontextprotocol/server-everything\\n")
    failing = {"command": "sh", "args": ["-c", f"printf '{npm_said}' >&2; exit 1"]}
    write_config(home, {"mcp_servers": {"everything": failing}})
    tested = hermes("mcp", "test", "everything", home=home)
    assert tested.returncode == 1 and "npx's package cache looks broken" in tested.stdout, tested.stdout
    assert "rm -rf ~/.npm/_npx" in tested.stdout
    tools = json.loads(hermes("tools", "list", "--json", home=home).stdout)
    waiting = {u["server"]: u for u in tools["unavailable"]}["everything"]
    assert "rm -rf ~/.npm/_npx" in waiting["user_action"]


def test_a_first_npx_start_fetches_its_package_outside_the_connect_timeout(home: Home, tmp_path: Path) -> None:
    """A launcher's first fetch can take minutes: it gets its own budget, the connect timeout covers
    only the start, and a fetched package is not fetched again. Here a stand-in `npx` whose warm
    fetches for 9 s when its package is not cached yet, with a connect timeout of 6 s (the start
    itself, two stdlib-only Python starts, must fit in it on a loaded machine: 2 s did not)."""
    import sys

    folder = tmp_path / "bin"
    folder.mkdir()
    user = tmp_path / "user"
    user.mkdir()
    shutil.copy(SERVERS / "fast.py", folder / "fast.py")
    (folder / "npx").write_text(
        f"#!{sys.executable}\n"
        "import os, sys, time\n"
        "fetched = os.path.join(os.environ.get('npm_config_cache') or os.path.expanduser('~/.npm'), 'fetches')\n"
        "if not os.path.exists(fetched):  # the package is not in the cache yet: fetch it\n"
        "    time.sleep(9)\n"
        "    with open(fetched, 'a') as f: f.write('fetched\\n')\n"
        "if any(a.startswith('--package=') for a in sys.argv):\n"
        "    sys.exit(0)\n"
        f"os.execv(sys.executable, [sys.executable, {str(folder / 'fast.py')!r}])\n")
    (folder / "npx").chmod(0o755)
    write_config(home, {"mcp_servers": {"pkg": {"command": "npx", "args": ["-y", "@example/server@1.0.0"],
                                                "connect_timeout": 6}}})
    env = {"PATH": f"{folder}:{os.environ['PATH']}", "HOME": str(user)}
    first = hermes("mcp", "test", "pkg", home=home, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    log = home.server_log("pkg").read_text()
    assert "first start: fetching the package with `npx -y --package=@example/server@1.0.0 -- node -e 0`" in log
    again = hermes("mcp", "test", "pkg", home=home, env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    # Once, not at every start; into the server's own cache (a sandboxed server never writes the user's).
    private = home.root / "cache" / "sandbox" / "pkg" / "npm" / "fetches"
    assert private.read_text() == "fetched\n" and not (user / ".npm").exists()


def test_a_reader_that_leaves_the_pipe_early_ends_hermes_quietly(home: Home) -> None:
    """`hermes mcp list | head -1`: no 'unexpected error', the exit status of a SIGPIPE'd program."""
    import subprocess
    import sys

    # Far more than a pipe holds (about 45 bytes a server, 64 KiB a pipe): hermes is still writing
    # when the reader leaves, however late the reader reads its line.
    write_config(home, {"mcp_servers": {f"s{i}": {"command": f"srv{i}"} for i in range(4000)}})
    process = subprocess.Popen([sys.executable, "-m", "hermes", "mcp", "list"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "HERMES_HOME": str(home.root)})
    assert process.stdout is not None and process.stdout.readline()
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 141 and b"unexpected" not in err and b"Traceback" not in err, err


def test_the_tool_catalog_as_json(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    shown = json.loads(hermes("tools", "catalog", "--json", home=home).stdout)
    assert shown["catalog"].startswith("Tools available through tool_search") and "echo" in shown["catalog"]
