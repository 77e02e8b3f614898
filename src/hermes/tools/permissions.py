"""Whether a tool runs, asks first, or never runs: allow, ask or deny.

The rules come from config.yaml's top-level `permissions:` (registered names, a tool's own name on
every MCP server, or toolsets, globs on each) and the server's own `approval:` (its original
names, or a mode for all of its tools).
The strongest rule wins, whatever its scope:

    deny   anywhere   the tool leaves the surface and no path calls it
    ask    anywhere   a yes is needed for each call (or "always", for the session)
    allow  anywhere   it runs
    otherwise         the tool's own annotations: `readOnlyHint` runs; anything else may change
                      anything (MCP's `destructiveHint` defaults to true) and asks where a model
                      chose the call. Where a person did (`hermes tools call`) or a client agent
                      with its own approvals did (`hermes mcp serve`), only the rules ask.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any

from hermes.config.agent_settings import Approval, ApprovalMode, Permissions
from hermes.tools.filters import first_match, own_name_hint
from hermes.tools.surface import SurfaceTool
from hermes.tools.toolsets import is_builtin


class Permission(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Verdict:
    permission: Permission
    because: str  # the rule, as the user wrote it and where, or the annotation it came from
    ruled: bool  # a rule in config.yaml (or a plugin) said so, not the tool's annotations

    def to_json(self) -> dict[str, Any]:
        return {"permission": self.permission.value, "because": self.because}


# Asks whoever can answer for this call (a person, the client of `serve`): None is a yes; a text
# says why the tool did not run, in words for whoever called it (a model reads it as the result).
Asker = Callable[[SurfaceTool, dict[str, Any], Verdict], Awaitable[str | None]]


def _top_level(tool: SurfaceTool, patterns: tuple[str, ...]) -> str | None:
    # A tool's own name reaches every MCP server's tool of that name, not the agent's own toolsets:
    # `allow: [run]` meant for a server's `run` must not let the terminal's `run` through.
    own = not is_builtin(tool.server)
    for pattern in patterns:
        if fnmatchcase(tool.toolset, pattern) or fnmatchcase(tool.name, pattern) or \
                (own and fnmatchcase(tool.original, pattern)):
            return pattern
    return None


def reads_only(tool: SurfaceTool) -> bool:
    """A tool that says it changes nothing: `readOnlyHint` (without `destructiveHint`), or one of
    hermes's own listings and reads of a server's resources and prompts."""
    if tool.kind != "tool":
        return True
    annotations = tool.definition.annotations if tool.definition is not None else None
    return bool(annotations and annotations.read_only_hint and not annotations.destructive_hint)


def verdict(tool: SurfaceTool, approval: Approval, rules: Permissions, *, cautious: bool) -> Verdict:
    """`cautious`: a model chose this call, so a tool that may change things asks by default."""
    server = f"mcp_servers.{tool.server}.approval"
    for permission in (Permission.DENY, Permission.ASK, Permission.ALLOW):
        found = _top_level(tool, getattr(rules, permission.value))
        if found is not None:
            where = "the team's policy" if found in rules.from_team else "permissions"
            return Verdict(permission, f"{where}.{permission.value}: {found}", True)
        found = first_match(tool.original, getattr(approval, permission.value))
        if found is not None:
            return Verdict(permission, f"{server}.{permission.value}: {found}", True)
        if permission is Permission.ASK and approval.mode is ApprovalMode.ASK:
            return Verdict(Permission.ASK, f"{server}: ask", True)
    if approval.mode is ApprovalMode.NEVER:
        return Verdict(Permission.ALLOW, f"{server}: never", True)
    if reads_only(tool):
        return Verdict(Permission.ALLOW, "it says it only reads" if tool.kind == "tool" else "a read", False)
    if not cautious:
        return Verdict(Permission.ALLOW, "no rule: the caller decides", False)
    return Verdict(Permission.ASK, "it does not say it only reads (no readOnlyHint)", False)


def unmatched_rules(rules: Permissions, approvals: Mapping[str, Approval],
                    offered: Mapping[str, list[SurfaceTool]]) -> list[str]:
    """Rules that match no tool of the servers offering tools now, when a close name shows what was
    meant (`mcp__my-box__x` for `mcp__my_box__x`, hermes's name in a server's own list): a rule
    that silently matches nothing is worse than none. A rule for a server not running is not news."""
    from hermes.validation import suggestion

    tools = [tool for listed in offered.values() for tool in listed]
    registered = [*(t.name for t in tools), *sorted({t.toolset for t in tools})]
    found = []
    for permission in Permission:
        for pattern in getattr(rules, permission.value):
            if _top_level_matches_any(tools, pattern):
                continue
            close = suggestion(pattern, registered)
            if close:
                found.append(f"permissions.{permission.value} names '{pattern}', which matches no tool{close}.")
    for server, listed in sorted(offered.items()):
        approval = approvals.get(server)
        originals = [t.original for t in listed]
        for permission in Permission:
            for pattern in getattr(approval, permission.value, ()) if approval else ():
                said = own_name_hint(server, pattern, originals, "the server's own names go here")
                if said is not None:
                    found.append(f"mcp_servers.{server}.approval.{permission.value} names '{pattern}', which "
                                 f"matches none of its tools{said}.")
    return found


def _top_level_matches_any(tools: list[SurfaceTool], pattern: str) -> bool:
    return any(_top_level(tool, (pattern,)) is not None for tool in tools)
