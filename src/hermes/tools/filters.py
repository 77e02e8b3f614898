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


def unmatched_filter_entries(server: str, rule: ToolFilter, names: list[str]) -> list[str]:
    """An include or exclude entry that matches no tool of the server is almost always a typo
    (`get_sum` for `get-sum`) or hermes's own name for the tool (`mcp__s__get_sum`): say so, with
    the closest name, instead of silently registering nothing or excluding nothing."""
    from hermes.validation import suggestion

    if not names:
        return []
    from hermes.tools.naming import registered_name
    from hermes.tools.utilities import UTILITIES

    known = [*names, *UTILITIES]
    by_registered = {registered_name(server, name): name for name in known}
    found = []
    for key, patterns in (("include", rule.include), ("exclude", rule.exclude)):
        for pattern in patterns or ():
            if any(fnmatchcase(name, pattern) for name in known):
                continue
            own = by_registered.get(pattern)
            hint = f" (filters take the server's own names: write '{own}')" if own else suggestion(pattern, known)
            found.append(f"Server '{server}': tools.{key} names '{pattern}', which matches none of its tools{hint}.")
    return found
