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
