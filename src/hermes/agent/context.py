"""Keeping a conversation within the model's context window (`model.context_window`).

Tool results are what grows a conversation: past the budget, the oldest ones are shortened first,
in place and marked, so the model knows something was cut, and later requests keep the same
(shortened) prefix. The system prompt and what the user and the model wrote are never touched.

Sizes are estimated from characters, not counted: no tokenizer fits every OpenAI-compatible
model. The estimate starts at four characters a token and then learns this model's ratio from the
`prompt_tokens` the provider reports for what was sent, so a model (or a language) that packs
fewer characters into a token is still kept under its window; it never learns a looser ratio.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_CHARS_PER_TOKEN = 4.0  # also the most it learns: learning only ever makes the budget stricter
MIN_CHARS_PER_TOKEN = 1.0  # a report below this is not a tokenizer, it is a broken server
KEEP_CHARS = 400  # what a shortened tool result keeps of its start
SHORTENED = "[shortened by hermes to fit the context window: {omitted} characters left out]"


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


class ContextBudget:
    def __init__(self, context_window: int | None, reserve: int) -> None:
        self.context_window = context_window
        self.reserve = reserve  # room kept for the answer (max_tokens)
        self.chars_per_token = DEFAULT_CHARS_PER_TOKEN
        self._sent_chars: int | None = None  # the size of the last request `fit` saw

    def fit(self, system: dict[str, Any], history: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """Shorten the oldest tool results in `history` until everything fits; returns how many were shortened."""
        if self.context_window is None:
            return 0
        budget_chars = (self.context_window - self.reserve) * self.chars_per_token
        total = _size(system) + sum(_size(m) for m in history) + (_size(tools) if tools else 0)
        shortened = 0
        for message in history:
            if total <= budget_chars:
                break
            content = message.get("content")
            if message.get("role") != "tool" or not isinstance(content, str) or len(content) <= KEEP_CHARS * 2 \
                    or content.endswith("characters left out]"):
                continue
            before = _size(message)
            message["content"] = content[:KEEP_CHARS] + "\n" + SHORTENED.format(omitted=len(content) - KEEP_CHARS)
            total += _size(message) - before
            shortened += 1
        self._sent_chars = total
        return shortened

    def learn(self, usage: dict[str, int]) -> None:
        """The provider said how many tokens the last request took: use this model's own ratio."""
        tokens = usage.get("prompt_tokens")
        if self._sent_chars is None or not tokens or tokens <= 0:
            return
        self.chars_per_token = max(MIN_CHARS_PER_TOKEN, min(DEFAULT_CHARS_PER_TOKEN, self._sent_chars / tokens))
        self._sent_chars = None
