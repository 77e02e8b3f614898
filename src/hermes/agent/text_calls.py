"""Tool calls a model wrote as text: small local models often answer with the call itself instead of
the API's `tool_calls` (a llama.cpp server parses only its template's own format).

Recognised, only in a reply without native tool calls and only when every such call names a tool
the request offered (anything else is an answer that happens to contain JSON):

    <tool_call>{"name": "...", "arguments": {...}}</tool_call>      (Qwen, Hermes templates)
    ```json {"name": "...", "arguments": {...}} ```                  (a JSON code block)
    {"name": "...", "arguments": {...}}                              (the whole reply)

`parameters` is taken for `arguments` (Llama's spelling). The calls then run through the same
loop, gate and approval as native ones, and the conversation records them as native calls, so
the history sent back is valid for the API and for the model's template.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from hermes.agent.provider import ModelReply, ToolCallRequest

# A reply longer than this is an answer, not a call (and is never parsed as one).
MAX_TEXT = 64 * 1024
MAX_CALLS = 16
# The marks of a call written as text; `held_call_text` watches a stream for the same ones.
TAG_OPEN, TAG_CLOSE, FENCE = "<tool_call>", "</tool_call>", "```"
FENCE_INFOS = ("json", "tool_call", "tool")  # what may follow a fence that holds a call
# No whitespace matched around the lazy group (the piece is stripped instead): `\s*(.*?)\s*` backtracks
# cubically on a fence followed by thousands of blank lines, which blocked the loop for minutes.
TAGGED = re.compile(f"{TAG_OPEN}(.*?){TAG_CLOSE}", re.DOTALL)
FENCED = re.compile(f"{FENCE}(?:{'|'.join(FENCE_INFOS)})?(.*?){FENCE}", re.DOTALL)


def parse_call(text: str, offered: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """The call a piece of text is (a tool's name and its arguments), or None."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or value["name"] not in offered:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # the API's own shape: arguments as a JSON text
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
    if not isinstance(arguments, dict) or set(value) - {"name", "arguments", "parameters", "id", "type"}:
        return None
    return value["name"], arguments


def text_calls(reply: ModelReply, offered: Collection[str]) -> ModelReply:
    """The reply with the calls its text holds moved to `tool_calls` (what is left of the text
    stays its content); the reply as it was when it holds none, or anything else."""
    content = reply.content or ""
    if reply.tool_calls or not offered or not content.strip() or len(content) > MAX_TEXT:
        return reply
    for pattern, closer in ((TAGGED, TAG_CLOSE), (FENCED, FENCE)):
        # Without its closer a pattern finds nothing, however many openers there are (and looking
        # for each of 5,000 openers' closers is quadratic).
        pieces = pattern.findall(content) if closer in content else []
        if pieces:
            if len(pieces) > MAX_CALLS:
                return reply
            found = [parse_call(piece.strip(), offered) for piece in pieces]
            if any(call is None for call in found):
                return reply
            rest = pattern.sub("", content).strip()
            return _with(reply, [call for call in found if call is not None], rest)
    whole = parse_call(content.strip(), offered)
    return _with(reply, [whole], "") if whole is not None else reply


def _with(reply: ModelReply, calls: list[tuple[str, dict[str, Any]]], rest: str) -> ModelReply:
    # Ids unique in the whole conversation: a template may pair results with calls by id.
    requests = tuple(ToolCallRequest(f"call_{uuid.uuid4().hex[:12]}", name, json.dumps(arguments, ensure_ascii=False))
                     for name, arguments in calls)
    return replace(reply, content=rest, tool_calls=requests, finish_reason="tool_calls")
