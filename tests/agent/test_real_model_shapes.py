"""What real model servers do, against a scripted model as strict as llama.cpp's server.

A cut-off tool call, a failed turn, an interruption and a tools-changed notice must all leave a
history that a strict template takes; `finish_reason: length` is said, never hidden; only what a
retry can fix is retried; and what a model sends is hostile input: bounded, parsed carefully,
never a crash, never a terminal escape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes.agent.chat import ChatOptions, open_chat
from hermes.agent.provider import ModelError
from hermes.cli.chat_ui import OneShotUI
from hermes.home import Home
from tests.agent.conftest import model_config
from tests.support import fast_entry, hermes, write_config

CUT = {"tool_calls": [{"name": "mcp__box__echo", "arguments": '{"text": "hel'}], "finish_reason": "length"}


def _config(home: Home, model: Any, **extra: Any) -> None:
    write_config(home, {"model": model_config(model, **extra), "mcp_servers": {"box": fast_entry()}})


def _arguments(bodies: list[dict[str, Any]]) -> list[str]:
    return [c["function"]["arguments"] for body in bodies for m in body["messages"] for c in m.get("tool_calls") or []]


def test_a_cut_off_tool_call_is_asked_again_with_more_room(home: Home, scripted_model: Any) -> None:
    model = scripted_model({"steps": [CUT, {"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "hi"}}]},
                                      {"answer_from_tool": True, "prefix": "said: "}], "alternation": True})
    _config(home, model, max_tokens=16)
    ran = hermes("chat", "-q", "say hi", "--json", home=home)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["answer"] == "said: hi"
    bodies = model.bodies()
    assert [b.get("max_tokens") for b in bodies] == [16, 64, 16]
    assert all(json.loads(a) is not None for a in _arguments(bodies))  # nothing cut ever went back


def test_a_tool_call_cut_again_is_recorded_with_valid_arguments_and_the_model_told(home: Home,
                                                                                   scripted_model: Any) -> None:
    model = scripted_model({"steps": [CUT, CUT, {"content": "sorry, let me be brief"}], "alternation": True})
    _config(home, model, max_tokens=16)
    data = json.loads(hermes("chat", "-q", "say hi", "--json", home=home).stdout)
    assert data["answer"] == "sorry, let me be brief" and data["error"] is None
    [run] = data["tool_calls"]
    assert run["status"] == "invalid" and "cut off at the model's token limit" in run["result"]
    last = model.bodies()[-1]["messages"]
    assert [c["function"]["arguments"] for m in last for c in m.get("tool_calls") or []] == ["{}"]


def test_a_cut_off_answer_is_said_in_the_exit_status_the_text_and_the_json(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"content": "The three reasons are: one, two", "finish_reason": "length"}])
    _config(home, model, max_tokens=8)
    ran = hermes("chat", "-q", "why?", home=home)
    assert ran.returncode == 1 and "one, two" in ran.stdout
    assert "cut off at the token limit (model.max_tokens is 8)" in ran.stderr
    data = json.loads(hermes("chat", "-q", "why?", "--json", home=home).stdout)
    assert data["cut_off"] is True and data["finish_reason"] == "length"


def _turns(home: Home, questions: list[str], between: Any = None) -> list[str]:
    async def run() -> list[str]:
        answers = []
        async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
            for index, question in enumerate(questions):
                try:
                    answers.append((await chat.agent.turn(question)).answer)
                except ModelError as exc:
                    answers.append(f"error: {exc}")
                if between is not None:
                    await between(chat, index)
        return answers

    return anyio.run(run)


def test_a_failed_turn_and_a_notice_never_make_two_user_messages_in_a_row(home: Home, scripted_model: Any) -> None:
    model = scripted_model({"steps": [{"status": 400, "message": "context length exceeded"},
                                      {"content": "second"}, {"content": "third"}], "alternation": True})
    _config(home, model)

    async def reload_with_more(chat: Any, index: int) -> None:
        if index == 1:
            write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry(),
                                                                               "more": fast_entry("--lean")}})
            await chat.reload()

    answers = _turns(home, ["first", "again", "and now"], reload_with_more)
    assert answers[0].startswith("error:") and "context length exceeded" in answers[0]
    assert answers[1:] == ["second", "third"]  # the strict template took every later request
    last = model.bodies()[-1]["messages"]
    assert "MCP server 'more' was added" in last[-1]["content"] and last[-1]["content"].endswith("and now")
    # The refused message is forgotten (refused for its length, it would be refused on every later
    # turn); the model never saw it, so no trace of it is left to explain.
    assert all(m.get("content") != "first" for body in model.bodies()[1:] for m in body["messages"])


@pytest.mark.parametrize(("status", "tries"), [(500, 1), (400, 1), (502, 4), (503, 4), (429, 4)])
def test_only_what_can_succeed_on_a_retry_is_retried(home: Home, scripted_model: Any, status: int,
                                                     tries: int) -> None:
    words = "Failed to parse tool call arguments as JSON: " + "x" * 600 + " the useful end"
    model = scripted_model([{"status": status, "message": words, "headers": {"retry-after": "0"}}])
    _config(home, model)
    ran = hermes("chat", "-q", "x", home=home)
    assert ran.returncode == 1 and len(model.bodies()) == tries
    assert "Failed to parse tool call arguments as JSON" in ran.stderr and "the useful end" in ran.stderr


@pytest.mark.parametrize("answer", [
    {"raw": "{}"}, {"raw": '{"choices": []}'}, {"raw": '{"choices": [{"index": 0}]}'},
    {"raw": '{"choices": [{"message": {"content": 7}}]}'}, {"raw": "not json at all"},
    {"raw": '{"choices": [{"message": {"tool_calls": [{"function": {"name": null, "arguments": 5}}]}}]}'},
    {"raw": "[" * 5000 + "]" * 5000},
], ids=["empty", "no choices", "no message", "number content", "not json", "bad call", "deep"])
def test_a_malformed_answer_is_one_sentence_never_a_crash(home: Home, scripted_model: Any,
                                                          answer: dict[str, Any]) -> None:
    model = scripted_model([answer])
    _config(home, model)
    ran = hermes("chat", "-q", "x", home=home)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr and "unexpected error" not in ran.stderr
    assert ran.stderr.strip().startswith("Error: ") and ran.stderr.count("\n") <= 2, ran.stderr


def _model_error(home: Home, text: str, *, stream: bool) -> str:
    """The `ModelError` one turn of `text` ends with, in process ("no error" when it answered)."""
    async def run() -> str:
        async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
            try:
                await chat.agent.turn(text, stream=stream)
            except ModelError as exc:
                return str(exc)
        return "no error"

    return anyio.run(run)


def test_a_broken_stream_line_is_one_sentence(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"raw_stream": ['data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}',
                                            "data: {this is not json", "data: [DONE]"]}])
    _config(home, model)
    assert "cannot" in _model_error(home, "x", stream=True)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_an_endless_answer_is_cut_off_in_bounded_memory(home: Home, scripted_model: Any, stream: bool) -> None:
    import resource

    model = scripted_model([{"endless": True}])
    _config(home, model)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    said = _model_error(home, "go on", stream=stream)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "larger than" in said or "longer than" in said, said
    assert grown_mb < 600, grown_mb


def test_deeply_nested_arguments_are_an_error_result(home: Home, scripted_model: Any) -> None:
    nested = '{"text": ' + "[" * 900 + "]" * 900 + "}"
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": nested}]}, {"content": "ok"}])
    _config(home, model)
    data = json.loads(hermes("chat", "-q", "x", "--json", home=home).stdout)
    assert data["tool_calls"][0]["status"] == "invalid" and "nest more than 64" in data["tool_calls"][0]["result"]


def test_terminal_escapes_from_the_model_never_reach_the_terminal(home: Home, scripted_model: Any,
                                                                  tmp_path: Path) -> None:
    evil = "hello \x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x07\x1b[2Jworld\x9b31m"
    model = scripted_model([{"content": evil}])
    _config(home, model)
    ran = hermes("chat", "-q", "x", home=home)
    assert "\x1b" not in ran.stdout and "\x07" not in ran.stdout and "\x9b" not in ran.stdout
    assert "hello" in ran.stdout and "world" in ran.stdout


def test_a_tool_name_the_model_makes_up_reaches_the_terminal_without_escapes_or_hidden_text(
        home: Home, scripted_model: Any) -> None:
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "obey")
    name = f"mcp__box__echo\x1b]0;owned\x07{hidden}\u2066x"
    model = scripted_model([{"tool_calls": [{"name": name, "arguments": {"text": "\x1b[2Jhi\u206a"}}]},
                            {"content": "done"}])
    _config(home, model)
    ran = hermes("chat", "-q", "x", home=home)
    assert "mcp__box__echo]0;owned" in ran.stderr  # the call was shown, without what it hid
    for bad in ("\x1b", "\x07", "\u2066", "\u206a", hidden[0]):
        assert bad not in ran.stderr and bad not in ran.stdout
