"""The conversation after the system prompt, kept valid for every OpenAI-compatible server.

Real servers apply their model's chat template to the whole history on every request, and strict
templates refuse what a lenient scripted model would take. So the history hermes sends is always:

- **alternating**: a user message is never followed by another one. Notices ("the available tools
  changed") wait for the next user message and go in front of its text; a turn that ends without
  an answer (interrupted, failed, out of tool rounds) is closed with a short assistant message
  that says so, so the next user message follows an assistant one (Mistral's template answers
  400 otherwise, on every later request);
- **parseable**: every tool call carries arguments that are a JSON object. A call whose arguments
  were not one (cut off at `max_tokens`, or simply broken) is recorded with `{}` and its result
  says what was wrong (llama.cpp answers 500 to a history holding `{"a": 2, "b": 3`);
- **answered**: every tool call has exactly one tool result, cancelled ones included;
- **well-formed ids**: tool-call ids are hermes's own, nine letters and digits (the form the
  strictest templates demand), mapped from whatever the model sent.

Everything that enters is redacted once, here, so what was sent stays a stable prefix.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from hermes.security.redact import Redactor

MAX_ARGUMENT_CHARS = 1_000_000  # the arguments of one tool call
MAX_ARGUMENT_DEPTH = 64  # nesting of those arguments
PLACEHOLDER_ARGUMENTS = "{}"


@dataclass(frozen=True)
class Arguments:
    """A tool call's arguments as the model wrote them, parsed, or why they cannot be used."""

    value: dict[str, Any] | None
    problem: str | None = None


def _depth(value: Any) -> int:
    """How deeply `value` nests, counted without recursion (a hostile value may nest thousands deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_ARGUMENT_DEPTH:
            return depth
        if isinstance(item, dict):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
    return deepest


def parse_arguments(name: str, raw: str, *, cut_off: bool = False) -> Arguments:
    """The arguments of a call of `name`: a JSON object within bounds, or a sentence for the model."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return Arguments(None, f"The arguments of {name} are {len(raw)} characters long, more than hermes accepts "
                               f"({MAX_ARGUMENT_CHARS}); send smaller arguments.")
    problem: str | None = None
    value: Any = None
    try:
        value = json.loads(raw.strip() or "{}")
    except RecursionError:
        problem = f"The arguments of {name} nest too deeply."
    except ValueError as exc:
        why = "they were cut off at the model's token limit (max_tokens)" if cut_off else f"{exc}"
        return Arguments(None, f"The arguments of {name} are not valid JSON ({why}); call it again with a complete "
                               f"JSON object.")
    if problem is None and not isinstance(value, dict):
        problem = f"The arguments of {name} must be a JSON object, not {type(value).__name__}."
    if problem is None and _depth(value) > MAX_ARGUMENT_DEPTH:
        problem = f"The arguments of {name} nest more than {MAX_ARGUMENT_DEPTH} levels deep."
    return Arguments(value if problem is None else None, problem)


def short_id(original: str, index: int) -> str:
    """Nine letters and digits, the same for the same call of the same reply."""
    return hashlib.sha256(f"{index}:{original}".encode()).hexdigest()[:9]


class Conversation:
    def __init__(self, redactor: Redactor) -> None:
        self.messages: list[dict[str, Any]] = []
        self._redactor = redactor
        self._notices: list[str] = []

    def clear(self) -> None:
        self.messages = []
        self._notices = []

    def notice(self, text: str) -> None:
        """Something the model should hear; it goes in front of the next user message."""
        self._notices.append(text)

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(self._redactor.value(message))

    def user(self, text: str) -> None:
        if self.messages and self.messages[-1]["role"] != "assistant":
            self.close("(No answer to the previous message.)")
        content = "\n\n".join([*self._notices, text])
        self._notices = []
        self._append({"role": "user", "content": content})

    def assistant(self, content: str, calls: list[tuple[str, str, str]]) -> None:
        """The model's reply: its text and its tool calls as (hermes's id, name, arguments JSON)."""
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = [{"id": call_id, "type": "function",
                                      "function": {"name": name, "arguments": arguments}}
                                     for call_id, name, arguments in calls]
        self._append(message)

    def tool(self, call_id: str, text: str) -> None:
        """A tool result; `text` was redacted where it was built (a second pass costs megabytes)."""
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def unanswered(self) -> list[str]:
        """Ids of the last reply's tool calls that have no result yet."""
        for position in range(len(self.messages) - 1, -1, -1):
            message = self.messages[position]
            if message["role"] == "assistant":
                answered = {m.get("tool_call_id") for m in self.messages[position + 1:] if m["role"] == "tool"}
                return [c["id"] for c in message.get("tool_calls") or [] if c["id"] not in answered]
        return []

    def mark(self) -> tuple[int, list[str]]:
        """Where the conversation stands, to `rewind` to if a turn's request never reaches the model."""
        return len(self.messages), list(self._notices)

    def rewind(self, mark: tuple[int, list[str]]) -> bool:
        """Forget a turn the model never answered (only its user message was added), its notices
        waiting again; False, and nothing changed, when the model did answer something."""
        length, notices = mark
        if len(self.messages) != length + 1 or self.messages[-1]["role"] != "user":
            return False
        del self.messages[length:]
        self._notices = notices + self._notices
        return True

    def restore(self, messages: list[dict[str, Any]]) -> None:
        """Take up a saved conversation (already checked message by message), made valid again:
        results only for calls that were made, each call answered, no two user messages in a row."""
        self.clear()
        for message in messages:
            if message["role"] == "tool":
                if message.get("tool_call_id") in self.unanswered():
                    self.messages.append(message)
                continue
            if message["role"] == "user" and (self.unanswered() or
                                              (self.messages and self.messages[-1]["role"] != "assistant")):
                self.close("(No answer to the previous message.)")
            elif message["role"] == "assistant" and self.unanswered():
                self.close("(No answer: the chat ended here.)")
            self.messages.append(message)
        if (self.messages and self.messages[-1]["role"] != "assistant") or self.unanswered():
            self.close("(No answer: the chat ended before this was answered.)")

    def close(self, why: str) -> None:
        """End a turn that has no answer: every call answered, then an assistant line saying why."""
        for call_id in self.unanswered():
            self.tool(call_id, json.dumps({"error": f"Not run: {why}"}))
        if not self.messages or (self.messages[-1]["role"] == "assistant" and not self.messages[-1].get("tool_calls")):
            return
        self._append({"role": "assistant", "content": why})
