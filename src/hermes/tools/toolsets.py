"""Which toolsets a platform gets: the agent's own (`file`, `terminal`), MCP servers (`mcp-<server>`),
the presets `hermes-cli` and `hermes-gateway`, and `no_mcp`.

A platform that `platform_toolsets` does not list gets every MCP server and its preset (the CLI
`hermes-cli`, every other platform `hermes-gateway`); a listed one gets exactly what it names, so
`discord: [hermes-gateway]` means the agent's own tools and no MCP server on Discord (the user's
documents' own example). A session without a platform (`hermes mcp serve`) offers MCP servers only.
A name that is none of these is an error with a suggestion, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

NO_MCP = "no_mcp"
PREFIX = "mcp-"
FILE = "file"
TERMINAL = "terminal"
BUILTIN_TOOLSETS = (FILE, TERMINAL)
CLI_PRESET = "hermes-cli"
GATEWAY_PRESET = "hermes-gateway"
PRESETS: Mapping[str, tuple[str, ...]] = {CLI_PRESET: (FILE, TERMINAL), GATEWAY_PRESET: (FILE, TERMINAL)}
# A built-in toolset runs as a server of this name; no configured server can have it (':' is not
# allowed in a server name), and its tools are registered as `<toolset>_<tool>` (`file_read`).
BUILTIN_PREFIX = "builtin:"
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


def builtin_server(toolset: str) -> str:
    return BUILTIN_PREFIX + toolset


def is_builtin(server: str) -> bool:
    return server.startswith(BUILTIN_PREFIX)


# The server each built-in toolset runs as.
BUILTIN_SERVERS = tuple(builtin_server(toolset) for toolset in BUILTIN_TOOLSETS)


def shown_server(server: str) -> str:
    """A server's name as the user and the model read it: a built-in toolset by its own name (`file`)."""
    return server.removeprefix(BUILTIN_PREFIX)


def toolset_name(server: str) -> str:
    return shown_server(server) if is_builtin(server) else f"{PREFIX}{server}"


def _named(platform_toolsets: Mapping[str, tuple[str, ...]], platform: str) -> tuple[str, ...] | None:
    """What the platform's entry names, presets expanded; None when the platform is not listed."""
    listed = platform_toolsets.get(platform)
    if listed is None:
        return None
    expanded: list[str] = []
    for name in listed:
        expanded += PRESETS.get(name, (name,))
    return tuple(expanded)


def builtin_toolsets(platform_toolsets: Mapping[str, tuple[str, ...]], platform: str | None) -> tuple[str, ...]:
    """The agent's own toolsets this platform gets (none without a platform)."""
    if platform is None:
        return ()
    named = _named(platform_toolsets, platform)
    if named is None:
        named = PRESETS[CLI_PRESET if platform == "cli" else GATEWAY_PRESET]
    return tuple(t for t in BUILTIN_TOOLSETS if t in named)


def servers_for_platform(servers: Iterable[str], platform_toolsets: Mapping[str, tuple[str, ...]],
                         platform: str | None) -> set[str]:
    """The servers (built-in ones included) whose tools the platform gets."""
    all_servers = set(servers)
    mcp = {s for s in all_servers if not is_builtin(s)}
    builtins = {builtin_server(t) for t in builtin_toolsets(platform_toolsets, platform)} & all_servers
    named = _named(platform_toolsets, platform) if platform is not None else None
    if named is None:
        return mcp | builtins
    if NO_MCP in named:
        return builtins
    return builtins | (mcp & {t.removeprefix(PREFIX) for t in named if t.startswith(PREFIX)})


def toolset_problems(platform_toolsets: Mapping[str, tuple[str, ...]], servers: Iterable[str]
                     ) -> list[tuple[str, str]]:
    """(key, rule) of each name under platform_toolsets that is no toolset here: (`platform_toolsets.cli`,
    `unknown toolset 'mcp-githb' (did you mean 'mcp-github'?) …`)."""
    from hermes.validation import suggestion

    known = {*BUILTIN_TOOLSETS, *PRESETS, NO_MCP, *(f"{PREFIX}{s}" for s in servers if not is_builtin(s))}
    problems = []
    for platform, names in platform_toolsets.items():
        for name in names:
            if name not in known:
                what = "no MCP server of that name is configured" if name.startswith(PREFIX) else \
                    f"toolsets are {', '.join((*BUILTIN_TOOLSETS, *PRESETS, NO_MCP))} and mcp-<server>"
                problems.append((f"platform_toolsets.{platform}",
                                 f"unknown toolset '{name}'{suggestion(name, known)} ({what})"))
    return problems
