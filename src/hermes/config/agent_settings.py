"""Settings of the agent's tool use in config.yaml: each server's `approval:` and `sampling:`, and the
`permissions:` across servers. The model itself (`model:`) is `hermes.config.model_settings`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from hermes.validation import (
    Invalid,
    Loc,
    flag,
    integer,
    mapping,
    optional,
    seconds,
    shown,
    texts,
)


@dataclass(frozen=True)
class SamplingSettings:
    """What a server may ask of the model (MCP sampling), and how much."""

    enabled: bool = True
    max_tokens_cap: int = 4096
    timeout: float = 30.0
    max_rpm: int = 10
    allowed_models: tuple[str, ...] = ()  # empty: whichever model is configured
    max_tool_rounds: int = 5
    auto_approve: bool = False  # one-shot chat (no one to ask) denies unless this is true

    @classmethod
    def read(cls, value: Any, loc: Loc) -> SamplingSettings:
        data = mapping(value, loc, {"enabled", "max_tokens_cap", "timeout", "max_rpm", "allowed_models",
                                    "max_tool_rounds", "auto_approve"})
        return cls(
            enabled=optional(data, "enabled", loc, flag, True),
            max_tokens_cap=optional(data, "max_tokens_cap", loc, lambda v, at: integer(v, at, 1, 10_000_000), 4096),
            timeout=optional(data, "timeout", loc, seconds, 30.0),
            max_rpm=optional(data, "max_rpm", loc, lambda v, at: integer(v, at, 1, 100_000), 10),
            allowed_models=optional(data, "allowed_models", loc, texts, ()),
            max_tool_rounds=optional(data, "max_tool_rounds", loc, lambda v, at: integer(v, at, 0, 1000), 5),
            auto_approve=optional(data, "auto_approve", loc, flag, False),
        )


class ApprovalMode(StrEnum):
    AUTO = "auto"  # ask unless the tool says it only reads (readOnlyHint), or is named in `allow`
    ASK = "ask"  # every request the model makes of this server asks, listings and reads included
    NEVER = "never"  # nothing asks: a server the user trusts completely


@dataclass(frozen=True)
class Approval:
    """Which of a server's tools run, ask first, or never run (original MCP names, globs allowed).

    `auto` (the default) asks for every tool that does not say it only reads, the way careful agent
    CLIs do: most real servers annotate nothing, and an unannotated tool may change anything.
    `ask` covers every model-initiated request, resources and prompts included; `never` none.
    `ask: [...]` always asks for these tools (a plugin declares its code-running tools so);
    `allow: [...]` never asks for these (also in one-shot runs, which refuse what would ask);
    `deny: [...]` never runs these, on any path (they leave the tool surface).

        approval: ask                       # or auto, never
        approval: [execute_*]               # = {ask: [execute_*]}
        approval: {allow: [get_*, list_*], ask: [run_query], deny: [drop_*]}
    """

    mode: ApprovalMode = ApprovalMode.AUTO
    ask: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    @classmethod
    def read(cls, value: Any, loc: Loc) -> Approval:
        if isinstance(value, list):
            return cls(ApprovalMode.AUTO, rule_list(value, loc))
        if isinstance(value, dict):
            data = mapping(value, loc, {"mode", "ask", "allow", "deny"})
            mode = optional(data, "mode", loc, lambda v, at: _mode(v, at), ApprovalMode.AUTO)
            return cls(mode, optional(data, "ask", loc, rule_list, ()), optional(data, "allow", loc, rule_list, ()),
                       optional(data, "deny", loc, rule_list, ()))
        return cls(_mode(value, loc))

    def with_asked(self, names: tuple[str, ...]) -> Approval:
        """These settings, also asking for `names` (what a plugin or catalog entry declares)."""
        return dataclasses.replace(self, ask=tuple(dict.fromkeys((*self.ask, *names))))


@dataclass(frozen=True)
class Permissions:
    """The top-level `permissions:` of config.yaml: which tools of any server or toolset run, ask
    first, or never run. An entry is a registered name (`mcp__github__delete_repo`, `file_write`),
    a tool's own name on every MCP server (`delete_*`), or a toolset (`terminal`, `mcp-*`); globs
    allowed; at most 1000 entries a list. A `deny` anywhere wins, then an `ask`, then an `allow`
    (see `hermes.tools.permissions`).

        permissions:
          deny: [mcp__github__delete_*]
          ask: [terminal]
          allow: [file_read, mcp-linear]
    """

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    # Entries that came from a team gateway's policy, not config.yaml (said so when they rule).
    from_team: frozenset[str] = frozenset()

    @classmethod
    def read(cls, value: Any, loc: Loc) -> Permissions:
        data = mapping(value, loc, {"allow", "ask", "deny"})
        return cls(optional(data, "allow", loc, rule_list, ()), optional(data, "ask", loc, rule_list, ()),
                   optional(data, "deny", loc, rule_list, ()))


# A rule list is read on every call: thousands of globs would make each call slow, and no one
# writes them by hand.
MAX_RULES = 1000


def rule_list(value: Any, loc: Loc) -> tuple[str, ...]:
    if isinstance(value, list) and len(value) > MAX_RULES:
        raise Invalid(loc, f"has {len(value)} entries; at most {MAX_RULES} (use a glob or a toolset name)")
    return texts(value, loc)


def _mode(value: Any, loc: Loc) -> ApprovalMode:
    if value in tuple(ApprovalMode):
        return ApprovalMode(value)
    raise Invalid(loc, f"must be auto, ask, never, a list of tool names or {{allow: [...], ask: [...]}} "
                       f"(got {shown(value)})")
