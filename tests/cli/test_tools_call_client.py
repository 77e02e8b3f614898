"""`hermes tools call` as a complete MCP client, against the reference servers from npm and a Python
SDK server: tasks, progress, sampling without a model, elicitation with and without `--yes`,
and server logs into the server's own (redacted) log file (roots: `tests/mcp/test_roots.py`)."""

from __future__ import annotations

import json

import pytest

from hermes.home import Home
from tests.npm_tools import NpmTools
from tests.support import fast_entry, hermes, stdio_entry, write_config


@pytest.fixture
def everything(home: Home, npm: NpmTools) -> Home:
    write_config(home, {"mcp_servers": {"everything": {"command": npm.everything[0], "args": npm.everything[1:]}}})
    return home


def test_a_task_only_tool_runs_as_a_task_and_reports_its_status(everything: Home) -> None:
    ran = hermes("tools", "call", "mcp__everything__simulate_research_query", "--args", '{"topic": "tea"}',
                 home=everything)
    assert ran.returncode == 0, ran.stderr
    assert "Research Report" in ran.stdout and "tea" in ran.stdout
    # The task's status messages arrive as progress while it runs.
    assert "progress:" in ran.stderr, ran.stderr


def test_a_long_running_tool_shows_its_progress(everything: Home) -> None:
    ran = hermes("tools", "call", "mcp__everything__trigger_long_running_operation",
                 "--args", '{"duration": 1, "steps": 3}', home=everything)
    assert ran.returncode == 0, ran.stderr
    assert [line for line in ran.stderr.splitlines() if line.startswith("progress:")] == \
        ["progress: 1/3", "progress: 2/3", "progress: 3/3"]


def test_sampling_without_a_model_is_refused_with_the_reason(everything: Home) -> None:
    ran = hermes("tools", "call", "mcp__everything__trigger_sampling_request",
                 "--args", '{"prompt": "hi", "maxTokens": 5}', home=everything)
    assert "no model to sample with" in ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr


def test_elicitation_is_declined_without_a_terminal_and_yes_needs_every_required_default(everything: Home) -> None:
    declined = hermes("tools", "call", "mcp__everything__trigger_elicitation_request", home=everything)
    assert "declined: no terminal to ask in" in declined.stderr
    # Its form requires `name`, which has no default: --yes cannot answer for the user.
    still = hermes("tools", "call", "mcp__everything__trigger_elicitation_request", "--yes", home=everything)
    assert "declined: a required field has no default" in still.stderr


def test_yes_accepts_a_form_whose_every_field_has_a_default(home: Home) -> None:
    write_config(home, {"mcp_servers": {"conf": stdio_entry("conformance_server.py")}})
    ran = hermes("tools", "call", "mcp__conf__test_elicitation_sep1034_defaults", "--yes", home=home)
    assert ran.returncode == 0, ran.stderr
    assert "action=accept" in ran.stdout and "John Doe" in ran.stdout and "95.5" in ran.stdout


def test_server_log_messages_land_in_its_log_redacted(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    canary = "canary-log-4b7e0d19a2"
    monkeypatch.setenv("FAST_TOKEN", canary)
    write_config(home, {"mcp_servers": {"fast": fast_entry(env={"FAST_TOKEN": "${FAST_TOKEN}"})}})
    ran = hermes("tools", "call", "mcp__fast__log", "--args", json.dumps({"text": f"the key is {canary}"}),
                 home=home)
    assert ran.returncode == 0 and canary not in ran.stdout + ran.stderr
    logged = home.server_log("fast").read_text()
    assert "[warning fast]" in logged and "the key is [REDACTED]" in logged and canary not in logged
