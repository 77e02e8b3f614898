"""`hermes chat` against a real llama.cpp server: tool calls, cut-off calls, strict templates.

Qwen2.5-Coder-0.5B with a template llama.cpp can parse its tool calls from (`.ci/llama.sh`), and
the same model under Mistral-Nemo's template, which refuses any history whose roles do not
alternate (400) and any tool-call id that is not nine characters. What is asserted is what hermes
owns: the calls it runs, and a history every later request is accepted with; a 0.5B model's
wording is not.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pexpect
import pytest

from hermes.agent.chat import ChatOptions, open_chat
from hermes.agent.loop import TurnStopped
from hermes.agent.provider import ModelError
from hermes.cli.chat_ui import OneShotUI
from hermes.home import Home
from tests.support import PATIENCE, fast_entry, hermes, write_config

ADD = "Use the add tool to add 2 and 3."


def _config(home: Home, url: str, **model: Any) -> None:
    # The box server's three tools only (not the agent's own ten): what is under test is the call
    # round trip, and a 0.5B model's output stops parsing as calls with thirteen tools offered.
    write_config(home, {"model": {"base_url": url, "name": "local", "max_tool_rounds": 2, **model},
                        "mcp_servers": {"box": fast_entry(tools={"include": ["add", "echo", "slow"]})},
                        "platform_toolsets": {"cli": ["mcp-box"]}})


def _no_server_refusal(text: str) -> None:
    assert "(500)" not in text and "(400)" not in text, text


def test_a_real_tool_call_plain_and_streamed(home: Home, llama: Any) -> None:
    server = llama()
    _config(home, server.url)
    ran = hermes("chat", "-q", ADD, "--json", home=home)
    data = json.loads(ran.stdout)
    _no_server_refusal(str(data["error"]))
    adds = [r for r in data["tool_calls"] if r["name"] == "mcp__box__add"]
    assert adds and adds[0]["status"] == "ok" and adds[0]["result"] == "5", data["tool_calls"]

    async def streamed() -> list[Any]:
        async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
            try:
                await chat.agent.turn(ADD, stream=True)
            except TurnStopped:
                pass  # a 0.5B model may add again and again: the runs it got are what counts
            except ModelError as exc:
                _no_server_refusal(str(exc))
                raise
            turn = chat.agent.last_turn
            assert turn is not None
            return turn.tool_runs

    runs = anyio.run(streamed)
    assert any(r.name == "mcp__box__add" and r.result == "5" for r in runs), runs


def test_a_tool_call_cut_off_at_max_tokens_never_poisons_the_conversation(home: Home, llama: Any) -> None:
    server = llama()
    _config(home, server.url, max_tokens=4)

    async def two_turns() -> list[str]:
        said = []
        async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
            for question in (ADD, "And 4 and 5?", "Thanks."):
                try:
                    turn = await chat.agent.turn(question)
                    said.append(f"{turn.finish_reason}: {turn.answer}")
                except ModelError as exc:
                    said.append(f"error: {exc}")
                except Exception as exc:  # TurnStopped and the like: still no server refusal
                    said.append(f"stopped: {exc}")
            history = chat.agent.history
        for message in history:
            for call in message.get("tool_calls") or []:
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
        return said

    said = anyio.run(two_turns)
    for line in said:
        _no_server_refusal(line)
    assert len(said) == 3


def test_a_strict_template_takes_every_request_after_a_failed_turn_and_a_reload(home: Home, llama: Any) -> None:
    server = llama(template="strict", context=2048)
    _config(home, server.url, max_tokens=16)

    async def session() -> list[str]:
        said = []
        async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
            for index, question in enumerate(["Say hello.", "x " * 4000, "Say hello again.", "And once more."]):
                if index == 3:
                    write_config(home, {"model": {"base_url": server.url, "name": "local", "max_tokens": 16},
                                        "mcp_servers": {"box": fast_entry(), "more": fast_entry("--lean")}})
                    await chat.reload()
                try:
                    said.append((await chat.agent.turn(question)).finish_reason or "")
                except ModelError as exc:
                    said.append(f"error: {exc}")
        return said

    said = anyio.run(session)
    assert said[1].startswith("error:") and "context" in said[1].lower(), said  # too long: refused
    for line in (said[0], said[2], said[3]):
        assert not line.startswith("error:"), said  # alternation held: after the failure and the notice


def test_a_strict_template_takes_the_next_turn_after_ctrl_c(home: Home, llama: Any, tmp_path: Path) -> None:
    server = llama(template="strict")
    _config(home, server.url, max_tokens=400)
    child = pexpect.spawn(sys.executable, ["-m", "hermes", "chat"], encoding="utf-8", timeout=PATIENCE * 3,
                          cwd=str(tmp_path), dimensions=(40, 160),
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"})
    child.expect("/help lists commands")
    child.expect("›")
    # A long message: one thread takes seconds to read it, and the status line says the request
    # is in flight, so the Ctrl-C lands while it is.
    child.send("Read this and then write a long story about a lighthouse keeper: " + "the sea is grey. " * 150 + "\r")
    child.expect("waiting for local")
    child.sendintr()
    child.expect("interrupted")
    child.expect("›")
    child.send("Say hello.\r")
    child.expect("waiting for local")  # the turn is under way (the prompt's redraws also show "›")
    index = child.expect(["›", "Error:"])
    assert index == 0, child.before
    child.sendeof()
    child.expect(pexpect.EOF)
    _no_server_refusal(str(child.before))


@pytest.mark.parametrize("model", ["smollm"])
def test_a_model_without_tool_support_still_answers(home: Home, llama: Any, model: str) -> None:
    server = llama(model=model, template=None)
    _config(home, server.url, max_tokens=32)
    ran = hermes("chat", "-q", "What is the capital of France?", "--json", home=home)
    data = json.loads(ran.stdout)
    assert data["error"] is None and data["answer"], data


def test_hermes_model_finds_and_checks_a_real_server(home: Home, llama: Any) -> None:
    server = llama()
    write_config(home, {"mcp_servers": {}})
    ran = hermes("model", "--base-url", server.url, home=home)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "answered" in ran.stdout and "Saved in" in ran.stdout
    from hermes.config.store import ConfigStore

    settings = ConfigStore(home).load().model
    assert settings is not None and settings.base_url == server.url and settings.name


def test_a_call_under_the_model_s_own_template_runs(home: Home, llama: Any) -> None:
    """Qwen's own template (the GGUF's) asks for <tool_call> tags a 0.5B model does not write: the
    call runs all the same, parsed by llama.cpp or, where it hands the call back as text, by hermes
    (`agent/text_calls.py`); either way the history holds it as a native call."""
    server = llama(template=None)
    _config(home, server.url)
    data = json.loads(hermes("chat", "-q", ADD, "--json", home=home).stdout)
    _no_server_refusal(str(data["error"]))
    adds = [r for r in data["tool_calls"] if r["name"] == "mcp__box__add"]
    assert adds and adds[0]["status"] == "ok" and adds[0]["result"] == "5", data
    assistant = [m for m in data["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    assert assistant and assistant[0]["tool_calls"][0]["function"]["name"] == "mcp__box__add"


def _builtins(home: Home, url: str, toolset: str) -> None:
    write_config(home, {"model": {"base_url": url, "name": "local", "max_tool_rounds": 2},
                        "platform_toolsets": {"cli": [toolset]}})


def test_the_agent_s_own_tools_read_edit_and_run_with_a_real_model(home: Home, llama: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("status: draft\n")
    monkeypatch.chdir(work)
    server = llama()

    def turn(question: str, toolset: str) -> dict[str, Any]:
        _builtins(home, server.url, toolset)
        data = json.loads(hermes("chat", "-q", question, "--json", "--yes", home=home).stdout)
        _no_server_refusal(str(data["error"]))
        return dict(data)

    read = turn("Use the file_read tool to read the file notes.txt.", "file")
    assert any(r["name"] == "file_read" and r["status"] == "ok" and "status: draft" in r["result"]
               for r in read["tool_calls"]), read["tool_calls"]
    edited = turn("Use the file_edit tool on notes.txt to replace the text 'draft' with 'final'.", "file")
    assert any(r["name"] == "file_edit" and r["status"] == "ok" for r in edited["tool_calls"]), edited["tool_calls"]
    assert (work / "notes.txt").read_text() == "status: final\n"
    ran = turn("Use the terminal_run tool to run the command: echo hermes-was-here", "terminal")
    assert any(r["name"] == "terminal_run" and "hermes-was-here" in r["result"] for r in ran["tool_calls"]), \
        ran["tool_calls"]
