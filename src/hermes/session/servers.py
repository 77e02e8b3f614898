"""The set of MCP servers a session should run: the project's, config.yaml's, enabled plugins'.

A project's `.hermes/config.yaml` (once trusted) wins over config.yaml for a name, and config.yaml
wins over a plugin's server of the same name; the losers are kept in `shadowed` so that
`hermes mcp list` can show every one with its source. An untrusted project's servers are there,
switched off with the reason and the command that trusts the folder, and never displace the
user's own server of the same name. No SDK import here: `list` must stay fast.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes.config.model import HermesConfig, PinPolicy, ServerConfig, ToolFilter
from hermes.config.project import ProjectServers
from hermes.errors import ConfigError
from hermes.home import Home
from hermes.tools.toolsets import builtin_server, toolset_problems

if TYPE_CHECKING:  # types only: a listing without plugins must not pay for the app machinery
    import mcp_types as types

    from hermes.apps.declaration import ServerDeclaration
    from hermes.plugins.registry import LoadedPlugins

PROJECT_SOURCE = "project"


class ConfiguredState(StrEnum):
    """A configured server as a listing shows it (before anything connects)."""

    ENABLED = "enabled"
    DISABLED = "disabled"  # enabled: false, or a global switch
    UNTRUSTED = "untrusted"  # a project's server the user has not trusted yet


@dataclass(frozen=True)
class DesiredServer:
    """A server to run, with where it came from, why it may be off, and its app declaration."""

    name: str
    config: ServerConfig
    source: str
    disabled_reason: str | None = None
    declaration: ServerDeclaration | None = None
    app_name: str | None = None
    untrusted: bool = False  # a project's server the user has not trusted: never started, not even by a probe


@dataclass
class ServerSet:
    """The servers a session runs, by name, and the entries they displaced."""

    servers: dict[str, DesiredServer] = field(default_factory=dict)
    shadowed: list[DesiredServer] = field(default_factory=list)


def _disabled_reason(config: HermesConfig, entry: ServerConfig, source: str) -> str | None:
    if not config.mcp.client:
        return "all MCP servers are off (mcp.client: false in config.yaml)"
    if not entry.enabled:
        return f"disabled in {source} (enabled: false)"
    if entry.is_stdio and not config.mcp.stdio_servers:
        return "stdio servers are off (mcp.stdio_servers: false in config.yaml)"
    return None


BUILTIN_SOURCE = "built-in"
_BUILTIN_FILES = Path(__file__).resolve().parent.parent / "builtin"
# Longer than the terminal's own longest timeout, so that a command's timeout is the one that speaks.
_BUILTIN_CALL_TIMEOUT = 3700.0


def builtin_config(toolset: str, workdir: Path | None = None) -> ServerConfig:
    """The agent's own toolset as a stdio server: its file run by this Python, in the default sandbox,
    working in `workdir` (a gateway room's own folder) or the session's working directory."""
    script = _BUILTIN_FILES / f"{toolset}_server.py"
    return ServerConfig(command=sys.executable, args=(str(script),), timeout=_BUILTIN_CALL_TIMEOUT,
                        cwd=str(workdir) if workdir else None,
                        pin=PinPolicy.OFF, tools=ToolFilter(resources=False, prompts=False))


def builtin_definitions(toolset: str) -> tuple[types.Tool, ...] | None:
    """The toolset's tools as its server lists them, kept beside it (`<toolset>_tools.json`, checked
    against the running server by the suite), so a session offers them without starting it; None
    when the file is missing or unreadable: the server then starts with the session, as any does."""
    import json

    import mcp_types as types
    from pydantic import ValidationError

    try:
        listed: Any = json.loads((_BUILTIN_FILES / f"{toolset}_tools.json").read_text(encoding="utf-8"))
        return tuple(types.Tool.model_validate(tool) for tool in listed)
    except (OSError, ValueError, TypeError, ValidationError):
        return None


def desired_servers(config: HermesConfig, plugins: LoadedPlugins | None = None, *,
                    only: frozenset[str] | set[str] | None = None,
                    include_disabled: bool = False, project: ProjectServers | None = None,
                    builtins: tuple[str, ...] = (), workdir: Path | None = None) -> ServerSet:
    """`builtins`: the agent's own toolsets this session's platform gets (`file`, `terminal`), working
    in `workdir` when given."""
    result = ServerSet()

    def add(server: DesiredServer) -> None:
        if only is not None and server.name not in only:
            return
        if include_disabled and not server.untrusted:
            server = DesiredServer(server.name, server.config, server.source, None, server.declaration,
                                   server.app_name)
        if server.name in result.servers:
            result.shadowed.append(server)
        else:
            result.servers[server.name] = server

    def add_project(project: ProjectServers) -> None:
        for name, entry in project.servers.items():
            held = project.held.get(name) if project.trusted else None
            if not project.trusted:
                reason: str | None = f"untrusted: {project.path} comes with the project and {project.why_not}; " \
                    f"run `{project.trust_command}` to use its servers"
            elif held is not None:
                reason = f"waiting for your grant: {held}; run `hermes mcp trust --grant {project.folder}` to give it"
            else:
                reason = _disabled_reason(config, entry, str(project.path))
            add(DesiredServer(name, entry, PROJECT_SOURCE, reason, untrusted=not project.trusted or held is not None))

    # A trusted project's entries override the user's; an untrusted one's come last, so the user's
    # server of the same name keeps running until the user trusts the folder.
    if project is not None and project.trusted:
        add_project(project)
    for name, entry in config.mcp_servers.items():
        add(DesiredServer(name, entry, "config.yaml", _disabled_reason(config, entry, "config.yaml")))
    for plugin in plugins.plugins if plugins else []:
        source = f"plugin:{plugin.name}"
        for name, entry in plugin.servers.items():
            add(DesiredServer(name, entry, source, _disabled_reason(config, entry, source),
                              plugin.declarations.get(name), plugin.app_name))
    if project is not None and not project.trusted:
        add_project(project)
    for toolset in builtins:
        add(DesiredServer(builtin_server(toolset), builtin_config(toolset, workdir), BUILTIN_SOURCE))
    return result


def configured_servers(home: Home, config: HermesConfig, project: ProjectServers | None = None
                       ) -> dict[str, DesiredServer]:
    """Every server a session of this HERMES_HOME would run (the project's, config.yaml's, enabled plugins')."""
    from hermes.plugins.registry import load_enabled

    return desired_servers(config, load_enabled(home, config), project=project).servers


def known_server_names(home: Home, folder: Path) -> list[str]:
    """Every configured server's name (the project's from `folder`, config.yaml's, plugins'); [] when
    a file is broken (whoever reads it for real reports that, with the file and the line)."""
    from hermes.config.project import load_project
    from hermes.config.store import ConfigStore
    from hermes.errors import HermesError

    try:
        return list(configured_servers(home, ConfigStore(home).load(), load_project(home, folder)))
    except (HermesError, OSError):
        return []


def check_toolsets(config: HermesConfig, plugins: LoadedPlugins, path: Path,
                   project: ProjectServers | None = None) -> None:
    """A ConfigError for the first name under platform_toolsets that is no toolset of these servers
    (disabled and shadowed ones count: naming them is no typo)."""
    every = desired_servers(config, plugins, include_disabled=True, project=project)
    names = {*every.servers, *(server.name for server in every.shadowed)}
    for key, rule in toolset_problems(config.platform_toolsets, names):
        raise ConfigError(rule, path=path, key=key)
