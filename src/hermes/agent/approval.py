"""Which tool calls ask the user first, and what the model hears when the user (or the mode) says no."""

from __future__ import annotations

from enum import StrEnum

from hermes.config.agent_settings import Approval, ApprovalMode
from hermes.tools.filters import matches_any
from hermes.tools.surface import SurfaceTool


class Decision(StrEnum):
    ONCE = "once"
    ALWAYS = "always"  # for this tool, for the rest of the session
    DENY = "deny"


def is_destructive(tool: SurfaceTool) -> bool:
    annotations = tool.definition.annotations if tool.definition is not None else None
    if annotations is None:
        return False
    # MCP: destructiveHint is meaningful only for a tool that is not read-only, and defaults to true
    # there; hermes asks only when the server says so outright, or the user's config does.
    return bool(annotations.destructive_hint) and not annotations.read_only_hint


def needs_approval(tool: SurfaceTool, approval: Approval) -> bool:
    if tool.kind != "tool" or approval.mode is ApprovalMode.NEVER:
        return False
    if approval.mode is ApprovalMode.ASK:
        return True
    if approval.mode is ApprovalMode.LIST and matches_any(tool.original, approval.tools):
        return True
    return is_destructive(tool)


def denied_text(tool: SurfaceTool, *, one_shot: bool) -> str:
    if one_shot:
        return (f"Not run: {tool.name} needs the user's approval (it can change things), and this is a one-shot "
                f"run without --yes. Tell the user to run again with --yes, or in interactive chat, to allow it.")
    return f"Not run: the user declined {tool.name}."
