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


def reads_only(tool: SurfaceTool) -> bool:
    """A tool that says it changes nothing: `readOnlyHint` (without `destructiveHint`), or one of
    hermes's own listings and reads of a server's resources and prompts."""
    if tool.kind != "tool":
        return True
    annotations = tool.definition.annotations if tool.definition is not None else None
    return bool(annotations and annotations.read_only_hint and not annotations.destructive_hint)


def needs_approval(tool: SurfaceTool, approval: Approval) -> bool:
    """Whether a model's call of `tool` asks the user first (in one-shot runs: is refused without --yes).

    Under `auto`, every tool that does not say it only reads asks: MCP's `destructiveHint` defaults
    to true for a tool that is not read-only, and most real servers annotate nothing."""
    if approval.mode is ApprovalMode.NEVER or matches_any(tool.original, approval.allow):
        return False
    if approval.mode is ApprovalMode.ASK or matches_any(tool.original, approval.ask):
        return True
    return not reads_only(tool)


def denied_text(tool: SurfaceTool, *, one_shot: bool) -> str:
    if one_shot:
        return (f"Not run: {tool.name} needs the user's approval (it does not say it only reads), and this is a "
                f"one-shot run without --yes. Tell the user to run again with --yes, to allow it in config.yaml "
                f"(approval: {{allow: [{tool.original}]}} on server '{tool.server}'), or to use interactive chat.")
    return f"Not run: the user declined {tool.name}."
