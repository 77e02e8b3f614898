"""`hermes chat -q`: one turn against a real (scripted) OpenAI-compatible server with real MCP servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes.home import Home
from tests.agent.conftest import ScriptedModel, model_config
from tests.support import CANARY, START_WAIT, fast_entry, hermes, stdio_entry, write_config


def _config(home: Home, model: ScriptedModel, servers: dict[str, Any] | None = None, **model_extra: Any) -> None:
    write_config(home, {"model": model_config(model, **model_extra),
                        "mcp_servers": servers if servers is not None else {"box": fast_entry()}})


def test_an_answer_that_uses_a_real_tool_and_the_whole_turn_as_json(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "from the tool"}}]},
                            {"answer_from_tool": True, "prefix": "The tool said: "}])
    _config(home, model)
    ran = hermes("chat", "-q", "What does the tool say?", home=home)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "The tool said: from the tool"
    assert "→ mcp__box__echo" in ran.stderr and "✓ mcp__box__echo ok" in ran.stderr
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "from the tool"}}]},
                            {"answer_from_tool": True, "prefix": "The tool said: "}])
    _config(home, model)
    as_json = hermes("chat", "-q", "Again, as JSON", "--json", home=home)
    data = json.loads(as_json.stdout)
    assert data["answer"] == "The tool said: from the tool" and data["rounds"] == 1
    [call] = data["tool_calls"]
    assert call["name"] == "mcp__box__echo" and call["arguments"] == {"text": "from the tool"}
    assert call["status"] == "ok" and call["result"] == "from the tool"
    assert data["usage"]["total_tokens"] == 30 and data["messages"][0]["role"] == "system"
    # What the model was offered: the session's surface, as function tools.
    offered = {t["function"]["name"] for t in model.bodies()[0]["tools"]}
    assert {"mcp__box__echo", "mcp__box__get_weather", "mcp__box__delete"} <= offered


def test_parallel_tool_calls_run_at_the_same_time(home: Home, scripted_model: Any) -> None:
    # The tool answers 'met' only when a second call of it is running at the same moment.
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__rendezvous"}, {"name": "mcp__box__rendezvous"}]},
                            {"content": "done"}])
    _config(home, model)
    data = json.loads(hermes("chat", "-q", "meet", "--json", home=home).stdout)
    assert [c["result"] for c in data["tool_calls"]] == ["met", "met"]
    sent = model.bodies()[1]["messages"]
    calls = next(m for m in sent if m.get("tool_calls"))["tool_calls"]
    # hermes's own nine-character ids, each call answered once, in order.
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [c["id"] for c in calls]
    assert all(len(c["id"]) == 9 and c["id"].isalnum() for c in calls) and len({c["id"] for c in calls}) == 2


def test_an_unavailable_tool_answers_the_model_with_its_structured_reason(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "mcp__broken__echo", "arguments": {"text": "x"}}]},
                            {"answer_from_tool": True}])
    _config(home, model, {"box": fast_entry(), "broken": fast_entry("--exit-at-start", "3")})
    ran = hermes("chat", "-q", "use the broken one", "--json", home=home)
    assert ran.returncode == 0
    result = json.loads(json.loads(ran.stdout)["tool_calls"][0]["result"])
    assert result["server"] == "broken" and result["state"] in ("failed", "parked")
    assert result["user_action"] and result["retry"] == "after_user_action"
    sent = next(m for m in model.bodies()[1]["messages"] if m["role"] == "tool")["content"]
    assert json.loads(sent)["state"] == result["state"]


def test_arguments_that_are_not_json_come_back_as_an_error_result(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": "{not json"}]},
                            {"content": "sorry"}])
    _config(home, model)
    data = json.loads(hermes("chat", "-q", "x", "--json", home=home).stdout)
    assert data["answer"] == "sorry" and data["tool_calls"][0]["status"] == "invalid"
    assert "not valid JSON" in next(m for m in model.bodies()[1]["messages"] if m["role"] == "tool")["content"]


def test_canary_secrets_never_reach_the_model(home: Home, scripted_model: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOX_TOKEN", CANARY)
    (home.root / ".env").write_text(f"MODEL_KEY=key-{CANARY}\n")
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__reveal", "arguments": {"variable": "BOX_TOKEN"}},
                                            {"name": "mcp__box__fail", "arguments": {"text": CANARY}}]},
                            {"answer_from_tool": True}])
    _config(home, model, {"box": fast_entry(env={"BOX_TOKEN": "${BOX_TOKEN}"})}, api_key="${MODEL_KEY}")
    ran = hermes("chat", "-q", f"my own text mentions {CANARY} too", "--json", home=home)
    assert ran.returncode == 0, ran.stderr
    bodies = json.dumps(model.bodies())
    assert CANARY not in bodies and "[REDACTED]" in bodies
    assert CANARY not in ran.stdout + ran.stderr
    # The key went where it belongs (the Authorization header), and only there.
    assert {r["authorization"] for r in model.requests()} == {f"Bearer key-{CANARY}"}


def test_destructive_tools_are_refused_in_one_shot_unless_yes(home: Home, scripted_model: Any) -> None:
    steps = [{"tool_calls": [{"name": "mcp__box__delete", "arguments": {"what": "the file"}}]},
             {"answer_from_tool": True}]
    _config(home, scripted_model(steps))
    refused = json.loads(hermes("chat", "-q", "delete it", "--json", home=home).stdout)
    assert refused["tool_calls"][0]["status"] == "denied" and "--yes" in refused["answer"]
    _config(home, scripted_model(steps))
    allowed = json.loads(hermes("chat", "-q", "delete it", "--json", "--yes", home=home).stdout)
    assert allowed["answer"] == "deleted the file"


def test_approval_ask_in_config_covers_a_harmless_tool_too(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "x"}}]},
                            {"answer_from_tool": True}])
    _config(home, model, {"box": fast_entry(approval=["ech*"])})
    data = json.loads(hermes("chat", "-q", "x", "--json", home=home).stdout)
    assert data["tool_calls"][0]["status"] == "denied"


def test_the_turn_stops_after_max_tool_rounds(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "again"}}]}])
    _config(home, model, max_tool_rounds=2)
    ran = hermes("chat", "-q", "loop forever", home=home)
    assert ran.returncode == 1
    assert "after 2 rounds" in ran.stderr and "model.max_tool_rounds" in ran.stderr
    assert len(model.bodies()) == 3


def test_old_tool_results_are_shortened_to_fit_never_the_system_prompt(home: Home, scripted_model: Any) -> None:
    big = "x" * 40_000
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": big}}]},
                            {"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "small"}}]},
                            {"content": "fine"}])
    _config(home, model, context_window=8000, max_tokens=1000)
    assert hermes("chat", "-q", "x", home=home).returncode == 0
    first, second, third = model.bodies()
    assert first["messages"][0] == second["messages"][0] == third["messages"][0]
    tool_texts = [m["content"] for m in third["messages"] if m["role"] == "tool"]
    assert "shortened by hermes to fit the context window" in tool_texts[0] and len(tool_texts[0]) < 1000
    assert tool_texts[1] == "small"


@pytest.mark.parametrize("reported_tokens, shortened", [(10, False), (1_000_000, True)])
def test_the_budget_learns_the_models_own_token_ratio(home: Home, scripted_model: Any, reported_tokens: int,
                                                     shortened: bool) -> None:
    # 12,000 characters fit a 10,000-token budget at four characters a token; they do not when the
    # provider reports that this model's tokens are about one character each.
    usage = {"prompt_tokens": reported_tokens, "completion_tokens": 5, "total_tokens": reported_tokens + 5}
    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "y" * 12_000}}],
                             "usage": usage},
                            {"content": "fine"}])
    _config(home, model, context_window=11_000, max_tokens=1000)
    assert hermes("chat", "-q", "x", home=home).returncode == 0
    tool_text = next(m["content"] for m in model.bodies()[1]["messages"] if m["role"] == "tool")
    assert ("shortened by hermes to fit the context window" in tool_text) is shortened


def test_deferred_tools_are_found_then_called(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"tool_calls": [{"name": "tool_search", "arguments": {"query": "weather"}}]},
                            {"tool_calls": [{"name": "call_tool", "arguments": {"name": "mcp__box__get_weather",
                                                                              "arguments": {"city": "Porto"}}}]},
                            {"answer_from_tool": True},
                            {"tool_calls": [{"name": "mcp__box__get_weather", "arguments": {"city": "Faro"}}]},
                            {"answer_from_tool": True}])
    _config(home, model, deferred_tools=True)
    ran = hermes("chat", "-q", "weather in Porto?", home=home)
    assert ran.returncode == 0 and ran.stdout.strip() == "sunny in Porto"
    first, second, _ = model.bodies()
    # The same two tools in every request: the start of the prompt never changes.
    assert [t["function"]["name"] for t in first["tools"]] == ["tool_search", "call_tool"]
    assert first["tools"] == second["tools"]
    assert "mcp__box__get_weather" in next(m for m in second["messages"] if m["role"] == "tool")["content"]
    assert "box (14 tools)" in first["messages"][0]["content"]
    assert first["messages"][0] == second["messages"][0]
    # A model that calls a found tool by its own name is served too.
    again = hermes("chat", "-q", "and in Faro?", home=home)
    assert again.stdout.strip() == "sunny in Faro"


def test_streaming_and_plain_replies_both_work(home: Home, scripted_model: Any) -> None:
    # Interactive chat streams; the scripted model sends its answer in pieces and tool calls split up.
    import anyio

    from hermes.agent.chat import ChatOptions, open_chat
    from hermes.cli.chat_ui import OneShotUI

    model = scripted_model([{"tool_calls": [{"name": "mcp__box__echo", "arguments": {"text": "streamed tool"}}]},
                            {"answer_from_tool": True, "prefix": "streamed: "}])
    _config(home, model)
    pieces: list[str] = []

    class Collecting(OneShotUI):
        async def text(self, delta: str) -> None:
            pieces.append(delta)

    async def run() -> str:
        async with open_chat(home, ChatOptions(), Collecting()) as chat:
            return (await chat.agent.turn("go", stream=True)).answer

    assert anyio.run(run) == "streamed: streamed tool"
    assert len(pieces) >= 3 and "".join(pieces) == "streamed: streamed tool"
    assert all(body["stream"] for body in model.bodies())


def test_without_a_model_the_error_shows_the_block_to_add(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    ran = hermes("chat", "-q", "hello", home=home)
    assert ran.returncode == 2
    assert "No model is configured" in ran.stderr and "base_url:" in ran.stderr and str(home.config) in ran.stderr


def test_a_model_setting_that_is_not_a_block_is_refused_by_chat_only(home: Home) -> None:
    home.config.write_text("model: some-model\nmcp_servers:\n  box: {command: x}\n")
    ran = hermes("chat", "-q", "hello", home=home)
    assert ran.returncode == 2 and "line 1" not in ran.stderr
    assert f"{home.config}: model: must be a mapping with base_url and name (got 'some-model')" in ran.stderr
    assert hermes("mcp", "list", home=home).returncode == 0


def test_model_and_base_url_on_the_command_line_are_enough(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"content": "hi there"}])
    write_config(home, {"mcp_servers": {}})
    ran = hermes("chat", "-q", "hello", "--model", "other-model", "--base-url", model.url, home=home)
    assert ran.returncode == 0 and ran.stdout.strip() == "hi there"
    assert model.bodies()[0]["model"] == "other-model"


@pytest.mark.parametrize(("steps", "expected"), [
    ([{"status": 401, "message": "bad key"}], "refused the API key (401)"),
    ([{"status": 404, "message": "no such model"}], "has no model 'test-model' (404)"),
    ([{"status": 400, "message": "context too long"}], "refused the request (400): context too long"),
    ([{"status": 503, "headers": {"retry-after-ms": "1"}}], "failed (503) after 3 retries"),
    ([{"status": 429, "headers": {"retry-after-ms": "1"}}], "kept answering 429"),
])
def test_provider_errors_are_one_sentence(home: Home, scripted_model: Any, steps: list[dict[str, Any]],
                                         expected: str) -> None:
    model = scripted_model(steps)
    _config(home, model)
    ran = hermes("chat", "-q", "hello", home=home)
    assert ran.returncode == 1 and expected in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr and len(ran.stderr.strip().splitlines()) == 1
    retried = steps[0]["status"] in (429, 503)
    assert len(model.bodies()) == (4 if retried else 1)


def test_a_429_then_an_answer_is_retried_quietly(home: Home, scripted_model: Any) -> None:
    model = scripted_model([{"status": 429, "headers": {"retry-after-ms": "1"}}, {"content": "after the wait"}])
    _config(home, model)
    ran = hermes("chat", "-q", "hello", home=home)
    assert ran.returncode == 0 and ran.stdout.strip() == "after the wait"


def test_unreachable_and_silent_endpoints(home: Home, scripted_model: Any) -> None:
    from tests.support import free_port

    write_config(home, {"model": {"base_url": f"http://127.0.0.1:{free_port()}/v1", "name": "m"},
                        "mcp_servers": {}})
    refused = hermes("chat", "-q", "hello", home=home)
    assert refused.returncode == 1 and "Cannot reach the model endpoint" in refused.stderr
    model = scripted_model([{"hang": True}])
    _config(home, model, {}, timeout=1)
    silent = hermes("chat", "-q", "hello", home=home)
    assert silent.returncode == 1 and "did not answer within 1 s" in silent.stderr


def test_sampling_from_a_server_goes_to_the_model_when_the_server_may(home: Home, scripted_model: Any) -> None:
    conformance = stdio_entry("conformance_server.py", approval="never")
    steps = [{"tool_calls": [{"name": "mcp__conf__test_sampling", "arguments": {"prompt": "What is 6 times 7?"}}]},
             {"content": "forty-two"},  # the server's sampling request
             {"answer_from_tool": True}]
    model = scripted_model(steps)
    _config(home, model, {"conf": {**conformance, "sampling": {"auto_approve": True, "max_tokens_cap": 50}}})
    data = json.loads(hermes("chat", "-q", "ask the server", "--json", *START_WAIT, home=home).stdout)
    assert "forty-two" in data["answer"]
    sampling = model.bodies()[1]
    assert sampling["messages"] == [{"role": "user", "content": "What is 6 times 7?"}]
    assert sampling["max_tokens"] == 50 and "tools" not in sampling
    # Without auto_approve, a one-shot run has no one to ask: refused, and the tool says so.
    denied_model = scripted_model([steps[0], {"answer_from_tool": True}])
    _config(home, denied_model, {"conf": conformance})
    denied = json.loads(hermes("chat", "-q", "ask the server", "--json", *START_WAIT, home=home).stdout)
    assert "no one can approve it in a one-shot run" in denied["answer"]
    assert len(denied_model.bodies()) == 2


def test_elicitation_in_one_shot_is_declined(home: Home, scripted_model: Any) -> None:
    conformance = stdio_entry("conformance_server.py", approval="never")
    model = scripted_model([{"tool_calls": [{"name": "mcp__conf__test_elicitation_sep1034_defaults"}]},
                            {"answer_from_tool": True}])
    _config(home, model, {"conf": conformance})
    ran = hermes("chat", "-q", "fill the form", *START_WAIT, home=home)
    assert "action=decline" in ran.stdout and "declined: a one-shot run has no one to ask" in ran.stderr


# Declared values of every naming style, each spelling out what it is (a doc-style value is still the
# user's secret when the user declared it under a secret's name), and short ones.
DECLARED = {"BOX_KEY": "SECRETVALUE-9876", "ServiceToken": "plainwordtoken", "github_pat": "patvalue77",
            "db-pass": "letmein", "x.credential": "cred-abcd", "AUTH": "q1w2e3r4", "clientSecret": "orange-sky"}


def test_declared_secrets_and_short_bearer_tokens_never_reach_the_model_or_the_terminal(
        home: Home, scripted_model: Any) -> None:
    calls = [{"name": "mcp__box__reveal", "arguments": {"variable": name}, "id": f"call{i:05d}x"}
             for i, name in enumerate(DECLARED)]
    shapes = "Authorization: Bearer abc.def.ghi and sk-live_abcdefghij and authorization: Basic dXNlcjpw"
    calls.append({"name": "mcp__box__echo", "arguments": {"text": shapes}, "id": "call99999x"})
    model = scripted_model([{"tool_calls": calls}, {"answer_from_tool": True, "prefix": "said: "}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry(env=dict(DECLARED))}})
    ran = hermes("chat", "-q", "Show me the values", "--json", "--yes", home=home)
    assert ran.returncode == 0, ran.stderr
    sent = json.dumps(model.requests())
    assert sent.count("[REDACTED]") >= len(DECLARED) + 3  # every value went through the tool and was hidden
    for value in [*DECLARED.values(), "abc.def.ghi", "sk-live_abcdefghij", "dXNlcjpw"]:
        assert value not in sent and value not in ran.stdout and value not in ran.stderr, value
    for path in Path(home.root).rglob("*"):  # transcripts, logs, caches: everything but the user's own config
        if path.is_file() and path != home.config:
            assert not any(v in path.read_text(errors="replace") for v in DECLARED.values()), path
