"""Which servers a platform gets: toolset `mcp-<server>`, allowlists and `no_mcp`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

NO_MCP = "no_mcp"
PREFIX = "mcp-"
# The platforms a hermes agent runs on; config.yaml may name more under platform_toolsets.
KNOWN_PLATFORMS = ("cli", "telegram", "discord", "slack", "whatsapp", "signal", "email", "matrix", "mattermost",
                   "sms", "homeassistant", "api_server", "webhook")


def platform_problem(platform: str, platform_toolsets: Mapping[str, tuple[str, ...]]) -> str | None:
    """Why `platform` is not one hermes knows (a typo would otherwise silently mean "every server")."""
    from hermes.validation import suggestion

    known = set(KNOWN_PLATFORMS) | set(platform_toolsets)
    if platform in known:
        return None
    return (f"unknown platform '{platform}'{suggestion(platform, known)}; known: {', '.join(sorted(known))} "
            f"(add others under platform_toolsets in config.yaml)")


def toolset_name(server: str) -> str:
    return f"{PREFIX}{server}"


def servers_for_platform(servers: Iterable[str], platform_toolsets: Mapping[str, tuple[str, ...]],
                         platform: str | None) -> set[str]:
    """A platform not listed gets every server; a listed one gets exactly the `mcp-*` toolsets it names.

    So `discord: [hermes-gateway]` means no MCP tools on Discord (the documents' own example), and
    `no_mcp` says the same explicitly.
    """
    all_servers = set(servers)
    if platform is None or platform not in platform_toolsets:
        return all_servers
    toolsets = platform_toolsets[platform]
    if NO_MCP in toolsets:
        return set()
    return all_servers & {t.removeprefix(PREFIX) for t in toolsets if t.startswith(PREFIX)}
