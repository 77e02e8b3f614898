"""Tool include/exclude filters, matched against the original MCP names (globs allowed)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from hermes.config.model import ToolFilter


def matches_any(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether `name` is one of `patterns` (exact, or a glob: `*`, `?`, `[...]`)."""
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def tool_allowed(name: str, rule: ToolFilter) -> bool:
    """`include` is an allowlist and wins over `exclude`; `include: []` allows nothing."""
    if rule.include is not None:
        return matches_any(name, rule.include)
    if rule.exclude is not None:
        return not matches_any(name, rule.exclude)
    return True


def filter_warnings(server: str, rule: ToolFilter) -> list[str]:
    if rule.include is not None and rule.exclude is not None:
        return [f"Server '{server}' sets both tools.include and tools.exclude; include wins and "
                f"exclude is ignored."]
    return []


def unmatched_includes(server: str, rule: ToolFilter, names: list[str]) -> list[str]:
    """An include entry that matches no tool of the server is almost always a typo (`get_sum` for
    `get-sum`): say so, with the closest name, instead of silently registering nothing."""
    from hermes.validation import suggestion

    if rule.include is None or not names:
        return []
    from hermes.tools.utilities import UTILITIES

    known = [*names, *UTILITIES]
    return [f"Server '{server}': tools.include names '{pattern}', which matches none of its tools"
            f"{suggestion(pattern, known)}."
            for pattern in rule.include if not any(fnmatchcase(name, pattern) for name in known)]
