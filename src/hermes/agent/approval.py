"""The user's answer to a tool that asks, and what the model hears when the user (or the mode) says no.
Which tools ask is decided by `hermes.tools.permissions`."""

from __future__ import annotations

from enum import StrEnum

from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool


class Decision(StrEnum):
    ONCE = "once"
    ALWAYS = "always"  # for this tool: kept in config.yaml, or for this chat where a rule says ask
    DENY = "deny"


def denied_text(tool: SurfaceTool, verdict: Verdict, *, one_shot: bool) -> str:
    if not one_shot:
        return f"Not run: the user declined {tool.name}."
    if verdict.ruled:
        return (f"Not run: {tool.name} asks first ({verdict.because}), and this is a one-shot run without --yes. "
                f"Tell the user to run again with --yes or to use interactive chat.")
    return (f"Not run: {tool.name} needs the user's approval ({verdict.because}), and this is a one-shot run "
            f"without --yes. Tell the user to run again with --yes, to allow it in config.yaml "
            f"(approval: {{allow: [{tool.original}]}} on server '{tool.server}', or permissions: "
            f"{{allow: [{tool.name}]}}), or to use interactive chat.")
