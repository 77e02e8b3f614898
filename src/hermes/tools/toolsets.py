"""Which servers a platform gets: toolset `mcp-<server>`, allowlists and `no_mcp`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def toolset_name(server: str) -> str:
    return f"mcp-{server}"


def servers_for_platform(servers: Iterable[str], platform_toolsets: Mapping[str, tuple[str, ...]],
                         platform: str | None) -> set[str]:
    """Every server by default; a list naming any `mcp-*` toolset is an allowlist; `no_mcp` is none."""
    all_servers = set(servers)
    if platform is None or platform not in platform_toolsets:
        return all_servers
    toolsets = platform_toolsets[platform]
    if "no_mcp" in toolsets:
        return set()
    named = {t.removeprefix("mcp-") for t in toolsets if t.startswith("mcp-")}
    return all_servers & named if named else all_servers
