"""The system prompt: built once when a chat session starts, then never touched.

Providers cache a conversation's prefix; a system prompt that changes by one byte throws that cache
away on every request. So it holds only what is fixed for the session: the base instructions, one
stable line per server whose tools are missing at the start (state, what the user can do, whether
retrying helps: a model asked about a closed app can say "start Blender" although it has no
Blender tool), the deferred-tool catalog as it was at the start, and the skills that were loaded.
Whatever changes later (a reload, an app started, a server that crashed) reaches the model as a
short notice in the conversation and through the tool list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hermes.agent.skills import SkillEntry
from hermes.security.invisible import one_line

BASE_INSTRUCTIONS = """You are hermes, an assistant that works through tools from MCP servers.

- Use a tool when it can answer better than you can from memory, and say what you found.
- A tool whose server or app is not available answers with a structured reason: `state`, \
`user_action` and `retry`. Tell the user plainly what is missing and what they can do \
(`user_action`); do not guess at a workaround, and retry only when `retry` allows it.
- Some tools ask the user before they run; when the user declines, accept it and say what \
that means for the task.
- Never make up a tool result. If a tool fails, say so and say why."""

DEFERRED_NOTE = """Tools are loaded on demand: call `tool_search` with a service name and an action \
(for example "github create issue") to find tools and their input schemas, then run one with \
`call_tool` (its name and its arguments)."""


UNAVAILABLE_HEADING = ("Servers whose tools are not available at the start of this session (a notice in the "
                       "conversation says when that changes):")


@dataclass(frozen=True)
class MissingServer:
    """One server whose tools are missing at the start, as the system prompt names it."""

    server: str
    state: str
    sentence: str  # what is wrong and what to do
    retry: str
    tools: int | None = None  # how many tools it brought when last connected

    def line(self) -> str:
        count = f", {self.tools} tools" if self.tools is not None else ""
        # The sentence may quote what a server said: one bounded line, never a section of its own.
        return f"- {self.server} ({self.state}{count}): {one_line(self.sentence)} Retry: {self.retry}."


def system_prompt(*, catalog: str | None, skills: list[SkillEntry], missing: Sequence[MissingServer] = ()) -> str:
    """The whole system prompt; `catalog` is the deferred-tool catalog text when tools are deferred."""
    sections = [BASE_INSTRUCTIONS]
    if missing:
        sections.append("\n".join([UNAVAILABLE_HEADING, *(m.line() for m in sorted(missing, key=lambda m: m.server))]))
    if catalog is not None:
        sections.append(DEFERRED_NOTE + "\n\n" + catalog.rstrip("\n"))
    loaded = [skill for skill in skills if skill.loaded]
    if loaded:
        parts = ["Skills (instructions for particular tasks; follow the one that fits):"]
        for skill in loaded:
            heading = f"## Skill: {skill.name}" + (f" ({skill.description})" if skill.description else "")
            parts.append(f"{heading}\n\n{skill.body}")
        sections.append("\n\n".join(parts))
    return "\n\n".join(sections) + "\n"
