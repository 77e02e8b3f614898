"""Tool include/exclude filters, matched against the original MCP names (globs allowed)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from hermes.config.model import ToolFilter


def first_match(name: str, patterns: tuple[str, ...]) -> str | None:
    """The first of `patterns` that `name` is (exact, or a glob: `*`, `?`, `[...]`), or None."""
    return next((pattern for pattern in patterns if fnmatchcase(name, pattern)), None)


def matches_any(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether `name` is one of `patterns` (exact, or a glob: `*`, `?`, `[...]`)."""
    return first_match(name, patterns) is not None


def own_name_hint(server: str, pattern: str, names: list[str], lead: str) -> str | None:
    """For an entry in a server's own list of tool names (a filter, an approval rule): None when it
    matches one of `names`; else what to say after it, the server's own name when the entry is
    hermes's name for one of its tools (`mcp__s__get_sum`), the closest name otherwise ('' for none)."""
    from hermes.tools.naming import registered_name
    from hermes.validation import suggestion

    if any(fnmatchcase(name, pattern) for name in names):
        return None
    own = next((name for name in names if registered_name(server, name) == pattern), None)
    return f" ({lead}: write '{own}')" if own is not None else suggestion(pattern, names)


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
    if not names:
        return []
    from hermes.tools.utilities import UTILITIES

    known = [*names, *UTILITIES]
    found = []
    for key, patterns in (("include", rule.include), ("exclude", rule.exclude)):
        for pattern in patterns or ():
            hint = own_name_hint(server, pattern, known, "filters take the server's own names")
            if hint is not None:
                found.append(f"Server '{server}': tools.{key} names '{pattern}', which matches none of its "
                             f"tools{hint}.")
    return found
