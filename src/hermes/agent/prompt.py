"""The system prompt: built once when a chat session starts, then never touched.

Providers cache a conversation's prefix; a system prompt that changes by one byte throws that cache
away on every request. So it holds only what is fixed for the session: the base instructions, the
deferred-tool catalog as it was at the start (with its stable lines for hidden servers), and the
skills that were loaded. Whatever changes later (a reload, a plugin enabled, a server that
crashed) reaches the model as a short notice in the conversation and through the tool list.
"""

from __future__ import annotations

from hermes.agent.skills import SkillEntry

BASE_INSTRUCTIONS = """You are hermes, an assistant that works through tools from MCP servers.

- Use a tool when it can answer better than you can from memory, and say what you found.
- A tool whose server or app is not available answers with a structured reason: `state`, \
`user_action` and `retry`. Tell the user plainly what is missing and what they can do \
(`user_action`); do not guess at a workaround, and retry only when `retry` allows it.
- Some tools ask the user before they run; when the user declines, accept it and say what \
that means for the task.
- Never make up a tool result. If a tool fails, say so and say why."""

DEFERRED_NOTE = """Tools are loaded on demand: call `tool_search` with a service name and an action \
(for example "github create issue") to find tools; the tools it finds can be called right after."""


def system_prompt(*, catalog: str | None, skills: list[SkillEntry]) -> str:
    """The whole system prompt; `catalog` is the deferred-tool catalog text when tools are deferred."""
    sections = [BASE_INSTRUCTIONS]
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
