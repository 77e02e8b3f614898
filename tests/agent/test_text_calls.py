"""Tool calls a small model writes as text are recognised, run through the same loop and gate, and
recorded as native calls; anything else that contains JSON stays an answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes.agent.provider import ModelReply
from hermes.agent.text_calls import text_calls
from hermes.home import Home
from tests.agent.conftest import model_config
from tests.support import START_WAIT, fast_entry, hermes, write_config

OFFERED = ["mcp__box__echo", "mcp__box__delete"]


def _calls(content: str) -> list[tuple[str, dict[str, Any]]] | None:
    reply = text_calls(ModelReply(content), OFFERED)
    if not reply.tool_calls:
        assert reply.content == content  # untouched
        return None
    return [(call.name, json.loads(call.arguments)) for call in reply.tool_calls]


@pytest.mark.parametrize(("content", "expected"), [
    ('```json\n{"name": "mcp__box__echo", "arguments": {"text": "hi"}}\n```', [("mcp__box__echo", {"text": "hi"})]),
    ('<tool_call>\n{"name": "mcp__box__echo", "arguments": {"text": "a"}}\n</tool_call>\n'
     '<tool_call>{"name": "mcp__box__delete", "arguments": {"what": "b"}}</tool_call>',
     [("mcp__box__echo", {"text": "a"}), ("mcp__box__delete", {"what": "b"})]),
    ('{"name": "mcp__box__echo", "parameters": {"text": "llama"}}', [("mcp__box__echo", {"text": "llama"})]),
    ('{"name": "mcp__box__echo", "arguments": "{\\"text\\": \\"as text\\"}"}',
     [("mcp__box__echo", {"text": "as text"})]),
    # not calls: an unknown tool, JSON that is data, prose around a lone object, one bad block of two
    ('```json\n{"name": "rm_rf", "arguments": {}}\n```', None),
    ('```json\n{"name": "Ada", "age": 36}\n```', None),
    ('Here is the config: {"name": "mcp__box__echo", "arguments": {}} as you asked.', None),
    ('```json\n{"name": "mcp__box__echo", "arguments": {}}\n```\n```json\n[1, 2]\n```', None),
    ('{"name": "mcp__box__echo", "arguments": [1]}', None),
    ("[" * 100_000, None),
])
def test_what_counts_as_a_call_written_as_text(content: str, expected: list[Any] | None) -> None:
    assert _calls(content) == expected


def test_the_prose_beside_a_call_stays_the_reply_s_text() -> None:
    reply = text_calls(ModelReply('I will echo it.\n```json\n{"name": "mcp__box__echo", "arguments": {}}\n```'),
                       OFFERED)
    assert reply.content == "I will echo it." and len(reply.tool_calls) == 1
    assert text_calls(ModelReply("x" * 70_000 + '{"name": "mcp__box__echo"}'), OFFERED).tool_calls == ()


def test_a_call_written_as_text_runs_through_the_gate_and_the_history_stays_valid(home: Home,
                                                                                 scripted_model: Any) -> None:
    written = {"content": 'Calling the tool now.\n```json\n{"name": "mcp__box__echo", "arguments": '
                          '{"text": "from text"}}\n```'}
    model = scripted_model([written, {"answer_from_tool": True}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"box": fast_entry()}})
    turn = json.loads(hermes("chat", "-q", "echo it", "--json", *START_WAIT, home=home).stdout)
    assert [(r["name"], r["status"]) for r in turn["tool_calls"]] == [("mcp__box__echo", "ok")]
    assert "from text" in turn["answer"]
    sent = model.bodies()[1]["messages"]
    call = sent[-2]
    assert call["role"] == "assistant" and call["content"] == "Calling the tool now."
    assert call["tool_calls"][0]["function"]["name"] == "mcp__box__echo"
    assert sent[-1] == {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": "from text"}
    # The same gate as a native call: a tool that asks is refused in a one-shot run without --yes.
    asking = scripted_model([{"content": '<tool_call>{"name": "mcp__box__delete", "arguments": {"what": "x"}}'
                                         '</tool_call>'}, {"content": "ok"}])
    write_config(home, {"model": model_config(asking), "mcp_servers": {"box": fast_entry()}})
    refused = json.loads(hermes("chat", "-q", "delete it", "--json", *START_WAIT, home=home).stdout)
    assert [r["status"] for r in refused["tool_calls"]] == ["denied"]
