"""The permission rules as a table: the strongest rule wins whatever its scope (deny, then ask, then
allow), entries name registered names, a tool's own name on every server, or a toolset; without a
rule the tool's annotations decide, and only where a model chose the call."""

from __future__ import annotations

import mcp_types as types
import pytest

from hermes.config.agent_settings import Approval, ApprovalMode, Permissions
from hermes.tools.permissions import Permission, verdict
from hermes.tools.surface import SurfaceTool


def _tool(server: str = "github", original: str = "delete_repo", *, read_only: bool = False) -> SurfaceTool:
    name = f"{server.removeprefix('builtin:')}_{original}" if server.startswith("builtin:") \
        else f"mcp__{server}__{original}"
    annotations = types.ToolAnnotations(readOnlyHint=True) if read_only else None
    return SurfaceTool(name, server, "tool", original, "", {"type": "object"},
                       types.Tool(name=original, input_schema={"type": "object"}, annotations=annotations))


@pytest.mark.parametrize(("tool", "approval", "rules", "expected", "because"), [
    (_tool(), Approval(), Permissions(deny=("mcp__github__delete_*",)), "deny",
     "permissions.deny: mcp__github__delete_*"),
    (_tool(), Approval(), Permissions(deny=("delete_*",)), "deny", "permissions.deny: delete_*"),  # every server
    (_tool(), Approval(), Permissions(deny=("mcp-github",)), "deny", "permissions.deny: mcp-github"),  # a toolset
    (_tool("builtin:terminal", "run"), Approval(), Permissions(ask=("terminal",)), "ask", "permissions.ask: terminal"),
    (_tool("builtin:file", "read", read_only=True), Approval(), Permissions(deny=("file",)), "deny",
     "permissions.deny: file"),
    # deny beats allow, and ask beats allow, whatever their scope
    (_tool(), Approval(allow=("delete_repo",)), Permissions(deny=("delete_*",)), "deny", "permissions.deny: delete_*"),
    (_tool(), Approval(deny=("delete_repo",)), Permissions(allow=("mcp-github",)), "deny",
     "mcp_servers.github.approval.deny: delete_repo"),
    (_tool(read_only=True), Approval(ask=("delete_*",)), Permissions(allow=("mcp-github",)), "ask",
     "mcp_servers.github.approval.ask: delete_*"),
    (_tool(), Approval(ApprovalMode.ASK), Permissions(allow=("mcp__github__delete_repo",)), "ask",
     "mcp_servers.github.approval: ask"),
    (_tool(), Approval(ApprovalMode.NEVER), Permissions(), "allow", "mcp_servers.github.approval: never"),
    (_tool(), Approval(), Permissions(allow=("mcp__github__*",)), "allow", "permissions.allow: mcp__github__*"),
    # a toolset name is the whole name, not a glob on tool names
    (_tool(), Approval(), Permissions(deny=("github",)), "ask", "it does not say it only reads (no readOnlyHint)"),
    (_tool(read_only=True), Approval(), Permissions(), "allow", "it says it only reads"),
])
def test_the_strongest_rule_wins(tool: SurfaceTool, approval: Approval, rules: Permissions, expected: str,
                                 because: str) -> None:
    found = verdict(tool, approval, rules, cautious=True)
    assert (found.permission.value, found.because) == (expected, because)


def test_without_a_rule_only_a_model_s_call_asks() -> None:
    assert verdict(_tool(), Approval(), Permissions(), cautious=True).permission is Permission.ASK
    person = verdict(_tool(), Approval(), Permissions(), cautious=False)
    assert person.permission is Permission.ALLOW and not person.ruled
    ruled = verdict(_tool(), Approval(), Permissions(ask=("delete_repo",)), cautious=False)
    assert ruled.permission is Permission.ASK and ruled.ruled


def test_a_tool_s_own_name_reaches_mcp_servers_not_the_agent_s_toolsets() -> None:
    rules = Permissions(allow=("run",), deny=("mcp-*",))
    terminal = verdict(_tool("builtin:terminal", "run"), Approval(), rules, cautious=True)
    assert terminal.permission is Permission.ASK  # `run` meant some server's tool, not the terminal's
    assert verdict(_tool("builtin:terminal", "run"), Approval(), Permissions(allow=("terminal_run",)),
                   cautious=True).permission is Permission.ALLOW
    assert verdict(_tool("shell", "run"), Approval(), rules, cautious=True).because == "permissions.deny: mcp-*"
