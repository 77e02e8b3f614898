"""Keeping a conversation within the model's context window (`model.context_window`).

Tool results are what grows a conversation: past the budget, the oldest ones are shortened first,
in place and marked, so the model knows something was cut, and later requests keep the same
(shortened) prefix. The system prompt and what the user and the model wrote are never touched.
Sizes are estimated (about four characters a token), not counted: good enough to stay clear of
the limit, and free.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
KEEP_CHARS = 400  # what a shortened tool result keeps of its start
SHORTENED = "[shortened by hermes to fit the context window: {omitted} characters left out]"


def estimated_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    size = sum(len(json.dumps(m, ensure_ascii=False)) for m in messages)
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False))
    return size // CHARS_PER_TOKEN + 1


def fit(system: dict[str, Any], history: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
        context_window: int | None, reserve: int) -> int:
    """Shorten the oldest tool results in `history` until everything fits; returns how many were shortened."""
    if context_window is None:
        return 0
    budget = context_window - reserve
    shortened = 0
    for message in history:
        if estimated_tokens([system, *history], tools) <= budget:
            break
        content = message.get("content")
        if message.get("role") != "tool" or not isinstance(content, str) or len(content) <= KEEP_CHARS * 2 \
                or content.endswith("characters left out]"):
            continue
        omitted = len(content) - KEEP_CHARS
        message["content"] = content[:KEEP_CHARS] + "\n" + SHORTENED.format(omitted=omitted)
        shortened += 1
    return shortened
