"""Qwen2.5-Coder-1.5B-Instruct, the largest tool-capable GGUF a registry carries (`.ci/llama.sh`),
under its own template on llama.cpp, with the agent's own tools and an MCP server as the user's
documents configure the CLI.

The model writes its calls as JSON code blocks, which llama.cpp hands back as the answer's text
(the first test shows that on the raw API, so the rest cannot pass by llama.cpp parsing them).
hermes runs them through the same gate as native calls, does not show them as the answer, and the
history it sends back is taken by the same server. A 1.5B model's wording is not asserted.
"""

from __future__ import annotations

import io
import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pexpect
import pyte
import pytest

from hermes.home import Home
from tests.support import PATIENCE, PYTHON, fast_entry, hermes, write_config

# The user's documents: `cli: [hermes-cli, file, terminal, mcp-github, mcp-linear]`; one MCP
# server here (a real process) stands in for their two.
DOCUMENTS_CLI = ["hermes-cli", "file", "terminal", "mcp-box"]
RAW_TOOLS = [{"type": "function", "function": {
    "name": "file_read", "description": "Read a text file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]


def _configure(home: Home, url: str) -> None:
    write_config(home, {"model": {"base_url": url, "name": "local", "max_tool_rounds": 2},
                        "mcp_servers": {"box": fast_entry(tools={"include": ["add", "echo"]})},
                        "platform_toolsets": {"cli": DOCUMENTS_CLI}})


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("status: draft\n")
    return work


@pytest.fixture
def qwen15(llama: Any) -> Any:
    return llama(model="qwen15", template=None, context=8192)


def test_the_model_writes_its_call_as_a_code_block_llama_cpp_does_not_parse(qwen15: Any) -> None:
    body = {"model": "local", "temperature": 0, "tools": RAW_TOOLS,
            "messages": [{"role": "user", "content": "Read the file notes.txt."}]}
    request = urllib.request.Request(f"{qwen15.url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=PATIENCE) as answer:
        message = json.load(answer)["choices"][0]["message"]
    assert not message.get("tool_calls"), message
    assert message["content"].lstrip().startswith("```json") and '"file_read"' in message["content"], message


def test_read_edit_run_and_an_mcp_tool_from_calls_written_as_text(home: Home, qwen15: Any, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    work = _work(tmp_path)
    monkeypatch.chdir(work)
    _configure(home, qwen15.url)

    def turn(question: str, tool: str) -> dict[str, Any]:
        data = json.loads(hermes("chat", "-q", question, "--json", "--yes", home=home).stdout)
        # The request after the call carried it back as a native call with its result: refused,
        # the turn would have ended in an error.
        assert data["error"] is None, data["error"]
        runs = [r for r in data["tool_calls"] if r["name"] == tool]
        assert runs and runs[0]["status"] == "ok", data["tool_calls"]
        assert '"arguments"' not in (data["answer"] or ""), data["answer"]
        calls = [m for m in data["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
        assert calls and calls[0]["tool_calls"][0]["function"]["name"] == tool
        return dict(runs[0])

    assert "status: draft" in turn("Read the file notes.txt.", "file_read")["result"]
    turn("Replace the text 'draft' with 'final' in notes.txt.", "file_edit")
    assert (work / "notes.txt").read_text() == "status: final\n"
    assert "hermes-was-here" in turn("Run the command: echo hermes-was-here", "terminal_run")["result"]
    assert turn("Use the add tool to add 2 and 3.", "mcp__box__add")["result"] == "5"


def test_in_the_terminal_the_call_runs_and_its_json_is_never_shown(home: Home, qwen15: Any, tmp_path: Path) -> None:
    work = _work(tmp_path)
    _configure(home, qwen15.url)
    environment = {**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"}
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "chat"], encoding="utf-8", timeout=PATIENCE, cwd=str(work),
                          env=environment, dimensions=(40, 160))
    child.expect("/help lists commands")
    child.expect("›")
    seen = child.logfile_read = io.StringIO()
    child.send("Read the file notes.txt.\r")
    child.expect("✓ file_read")
    child.expect("›")
    screen = pyte.Screen(160, 40)
    pyte.Stream(screen).feed(seen.getvalue())
    shown = "\n".join(screen.display)
    assert '"arguments"' not in shown and "```json" not in shown, shown
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
