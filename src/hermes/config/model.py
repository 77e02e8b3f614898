"""The typed shape of `config.yaml`, validated strictly; errors point at the file, line and key.

Written in the validation kit (`hermes.validation`, which says why not pydantic); errors carry the
dotted key, and `parse_config` adds the file and the line.

Values stay uninterpolated here: `${VAR}` is resolved at connect time (see `interpolate`), so a
missing variable only affects the one server that needs it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hermes.config.agent_settings import Approval, Permissions, SamplingSettings
from hermes.config.sandbox import SandboxMode, SandboxSettings, read_mode
from hermes.errors import ConfigError
from hermes.validation import (
    PLUGIN_NAME,
    PLUGIN_NAME_RULE,
    Invalid,
    Loc,
    choice,
    enum_choice,
    flag,
    http_url,
    mapping,
    optional,
    port,
    seconds,
    shown,
    suggestion,
    text,
    text_map,
    texts,
)

if TYPE_CHECKING:  # read only where config.yaml has the section (see HermesConfig.gateway)
    from hermes.config.gateway_settings import GatewaySettings
    from hermes.config.model_settings import ModelSettings
    from hermes.config.team_settings import TeamSettings

# \Z, not $: `$` also matches before a final newline, and "name\n" would pass (a log file named with it).
SERVER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\Z")


def check_server_name(name: str, loc: Loc) -> None:
    """Names become file names (logs, tokens) and tool-name prefixes: no separators, no dot-only names."""
    if not SERVER_NAME.match(name) or set(name) <= {"."}:
        raise Invalid(loc, "is not a valid server name (1-64 letters, digits, '_', '.', '-'; not starting with "
                           "'.' or '-')")


@dataclass(frozen=True)
class ToolFilter:
    """A server's `tools:`: which of its tools, resources and prompts reach the surface."""

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    resources: bool = True
    prompts: bool = True

    @classmethod
    def read(cls, value: Any, loc: Loc) -> ToolFilter:
        data = mapping(value, loc, {"include", "exclude", "resources", "prompts"})
        return cls(
            include=texts(data["include"], (*loc, "include")) if data.get("include") is not None else None,
            exclude=texts(data["exclude"], (*loc, "exclude")) if data.get("exclude") is not None else None,
            resources=optional(data, "resources", loc, flag, True),
            prompts=optional(data, "prompts", loc, flag, True),
        )


def _metadata_document_url(value: Any, loc: Loc) -> str:
    url = text(value, loc)
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.path in ("", "/") or not parts.hostname:
        raise Invalid(loc, f"must be an https URL with a path (a Client ID Metadata Document), not {shown(url)}")
    return url


@dataclass(frozen=True, repr=False)
class OAuthSettings:
    """A server's `oauth:`: how hermes presents itself to its authorization server."""

    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    redirect_port: int | None = None
    # A Client ID Metadata Document (2025-11-25): an https URL, with a path, that describes hermes
    # as a client; used as the client id where the authorization server supports it.
    client_metadata_url: str | None = None

    @classmethod
    def read(cls, value: Any, loc: Loc) -> OAuthSettings:
        data = mapping(value, loc, {"client_id", "client_secret", "scope", "redirect_port", "client_metadata_url"})
        return cls(
            client_id=optional(data, "client_id", loc, text, None),
            client_secret=optional(data, "client_secret", loc, text, None),
            scope=optional(data, "scope", loc, text, None),
            redirect_port=optional(data, "redirect_port", loc, port, None),
            client_metadata_url=optional(data, "client_metadata_url", loc, _metadata_document_url, None),
        )

    def __repr__(self) -> str:
        return f"OAuthSettings(client_id={self.client_id!r}, client_secret=<hidden>, scope={self.scope!r})"


class PinPolicy(StrEnum):
    """What a changed tool definition does (see `hermes.tools.pins`)."""

    BLOCK = "block"  # held back from the model until the user accepts it
    WARN = "warn"  # kept, with a warning
    OFF = "off"  # nothing pinned


_SERVER_KEYS = {"command", "args", "env", "cwd", "url", "headers", "transport", "auth", "oauth", "enabled",
                "timeout", "connect_timeout", "tools", "roots", "approval", "sampling", "pin", "sandbox",
                "protocol"}
# How hermes speaks to a server: `auto` offers 2026-07-28 (server/discover) and falls back to the
# 2025-11-25 handshake when the server does not take it; `legacy` always handshakes; a version adopts it.
PROTOCOLS = ("auto", "legacy", "2026-07-28")


class Transport(StrEnum):
    """`transport:` of a server entry (a `command` is stdio whatever it says; a `url` is HTTP unless `sse`)."""

    STREAMABLE_HTTP = "streamable-http"
    HTTP = "http"
    SSE = "sse"
    STDIO = "stdio"


class Auth(StrEnum):
    """`auth:` of an HTTP server entry."""

    OAUTH = "oauth"


def _args(value: Any, loc: Loc) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise Invalid(loc, f"cannot be split like a shell command line ({exc})") from None
    return texts(value, loc)


@dataclass(frozen=True, repr=False)
class ServerConfig:
    """One entry of `mcp_servers`: a stdio server (`command`) or an HTTP server (`url`)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: Transport | None = None
    auth: Auth | None = None
    oauth: OAuthSettings | None = None
    enabled: bool = True
    timeout: float = 300.0
    connect_timeout: float = 60.0
    tools: ToolFilter = field(default_factory=ToolFilter)
    roots: tuple[str, ...] | None = None  # folders (or URIs) the server may work in; default: hermes's own
    approval: Approval = field(default_factory=Approval)  # which tools ask before running in chat
    sampling: SamplingSettings = field(default_factory=SamplingSettings)  # what it may ask of the model
    pin: PinPolicy = PinPolicy.BLOCK  # changed tool definitions: held back (block), warned about, or not pinned
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)  # what a stdio server may reach
    protocol: str = "auto"  # which MCP era to speak (see PROTOCOLS)

    @classmethod
    def read(cls, value: Any, loc: Loc) -> ServerConfig:
        data = mapping(value, loc, _SERVER_KEYS)
        config = cls(
            command=optional(data, "command", loc, text, None) or None,
            args=optional(data, "args", loc, _args, ()),
            env=optional(data, "env", loc, text_map, {}),
            cwd=optional(data, "cwd", loc, text, None),
            url=optional(data, "url", loc, http_url, None) or None,
            headers=optional(data, "headers", loc, text_map, {}),
            transport=optional(data, "transport", loc, enum_choice(Transport), None),
            auth=optional(data, "auth", loc, enum_choice(Auth), None),
            oauth=optional(data, "oauth", loc, OAuthSettings.read, None),
            enabled=optional(data, "enabled", loc, flag, True),
            timeout=optional(data, "timeout", loc, seconds, 300.0),
            connect_timeout=optional(data, "connect_timeout", loc, seconds, 60.0),
            tools=optional(data, "tools", loc, ToolFilter.read, ToolFilter()),
            roots=optional(data, "roots", loc, texts, None),
            approval=optional(data, "approval", loc, Approval.read, Approval()),
            sampling=optional(data, "sampling", loc, SamplingSettings.read, SamplingSettings()),
            pin=PinPolicy(optional(data, "pin", loc, choice(*(p.value for p in PinPolicy)), PinPolicy.BLOCK.value)),
            sandbox=optional(data, "sandbox", loc, SandboxSettings.read_setting, SandboxSettings()),
            protocol=optional(data, "protocol", loc, choice(*PROTOCOLS), "auto"),
        )
        if config.command and config.url:
            raise Invalid(loc, "has both 'command' and 'url'; a server is either stdio or HTTP, not both")
        if not config.command and not config.url:
            raise Invalid(loc, "needs either 'command' (stdio) or 'url' (HTTP)")
        if config.url and config.transport is Transport.STDIO:
            raise Invalid((*loc, "transport"), "is 'stdio' but the server has a 'url'")
        if config.command and config.transport not in (None, Transport.STDIO):
            raise Invalid((*loc, "transport"), f"is '{config.transport.value}' but the server has a 'command'")
        if config.command and (config.headers or config.auth):
            raise Invalid(loc, "has 'headers' or 'auth', which only HTTP servers ('url') use")
        if config.url and "sandbox" in data:
            raise Invalid((*loc, "sandbox"), "applies to stdio servers ('command') only; an HTTP server runs "
                                             "elsewhere")
        return config

    @classmethod
    def from_data(cls, data: Mapping[str, Any], name: str = "server") -> ServerConfig:
        return cls.read(dict(data), ("mcp_servers", name))

    @property
    def is_stdio(self) -> bool:
        return self.command is not None

    @property
    def transport_name(self) -> str:
        if self.is_stdio:
            return Transport.STDIO.value
        return Transport.SSE.value if self.transport is Transport.SSE else Transport.HTTP.value

    def __repr__(self) -> str:
        # env and header values are secrets more often than not.
        target = self.command if self.command else self.url
        return f"ServerConfig({self.transport_name}, {target!r}, enabled={self.enabled})"


def config_strings(config: ServerConfig) -> list[tuple[Loc, str]]:
    """Every text of a server entry with its place: (("args", 0), "-y"), (("env", "K"), "v"), ..."""
    found: list[tuple[Loc, str]] = [((key,), value) for key, value in
                                    (("command", config.command), ("url", config.url), ("cwd", config.cwd)) if value]
    found += [(("args", index), arg) for index, arg in enumerate(config.args)]
    found += [(("env", key), value) for key, value in config.env.items()]
    found += [(("headers", key), value) for key, value in config.headers.items()]
    return found


@dataclass(frozen=True)
class McpSettings:
    """`mcp:`: the switches for MCP as a whole."""

    client: bool = True
    stdio_servers: bool = True
    sandbox: SandboxMode = SandboxMode.AUTO  # whether stdio servers run in a sandbox (Linux)

    @classmethod
    def read(cls, value: Any, loc: Loc) -> McpSettings:
        data = mapping(value, loc, {"client", "stdio_servers", "sandbox"})
        return cls(client=optional(data, "client", loc, flag, True),
                   stdio_servers=optional(data, "stdio_servers", loc, flag, True),
                   sandbox=optional(data, "sandbox", loc, read_mode, SandboxMode.AUTO))


@dataclass(frozen=True)
class PluginSettings:
    """`plugins:`: which installed plugins run."""

    enabled: tuple[str, ...] = ()

    @classmethod
    def read(cls, value: Any, loc: Loc) -> PluginSettings:
        data = mapping(value, loc, {"enabled"})
        nothing: tuple[str, ...] = ()
        names = optional(data, "enabled", loc, texts, nothing)
        for index, name in enumerate(names):
            if not PLUGIN_NAME.fullmatch(name):
                raise Invalid((*loc, "enabled", index), f"{shown(name)} is not a plugin name ({PLUGIN_NAME_RULE})")
        return cls(enabled=names)


@dataclass(frozen=True)
class HermesConfig:
    """The parts of `config.yaml` hermes reads; other top-level sections belong to other tools."""

    mcp_servers: Mapping[str, ServerConfig] = field(default_factory=dict)
    platform_toolsets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    mcp: McpSettings = field(default_factory=McpSettings)
    plugins: PluginSettings = field(default_factory=PluginSettings)
    model: ModelSettings | None = None  # the agent's model (`hermes chat`)
    permissions: Permissions = field(default_factory=Permissions)  # allow / ask / deny across servers
    # `hermes gateway` (platforms, users) and `serve --http --team` (database, sign-in), as written; None
    # where config.yaml has no such section, so that their schemas (modules of their own, 2-3 ms of
    # classes) load only for a file that has one. Read them through gateway_settings() / team_settings().
    gateway: GatewaySettings | None = None
    team: TeamSettings | None = None
    # A `model:` that is not a mapping (another tool's setting, an older shorthand): only `hermes chat`
    # needs the block, so only it refuses, with this rule; every other command works on.
    model_problem: str | None = None
    # Top-level keys that look like a misspelt hermes key (`mcp_server:`); other tools' keys are fine.
    near_misses: tuple[str, ...] = ()

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> HermesConfig:
        empty: dict[str, Any] = {}
        servers = optional(data, "mcp_servers", (), mapping, empty)
        toolsets = optional(data, "platform_toolsets", (), mapping, empty)
        for name in servers:
            check_server_name(name, ("mcp_servers", name))
        configs = {name: ServerConfig.read(entry, ("mcp_servers", name)) for name, entry in servers.items()}
        for name, config in configs.items():
            for loc, value in config_strings(config):
                if "${runtime." in value:
                    raise Invalid(("mcp_servers", name, *loc), "uses ${runtime.*}, which only a plugin's server with "
                                                               "a server_json liveness declaration can use")
        return cls(
            mcp_servers=configs,
            platform_toolsets={name: texts(value, ("platform_toolsets", name)) for name, value in toolsets.items()},
            mcp=optional(data, "mcp", (), McpSettings.read, McpSettings()),
            plugins=optional(data, "plugins", (), PluginSettings.read, PluginSettings()),
            permissions=optional(data, "permissions", (), Permissions.read, Permissions()),
            gateway=optional(data, "gateway", (), _gateway_section, None),
            team=optional(data, "team", (), _team_section, None),
            model=optional(data, "model", (), _model_section, None) if _is_mapping(data.get("model")) else None,
            model_problem=None if data.get("model") is None or _is_mapping(data.get("model")) else
            f"must be a mapping with base_url and name (got {shown(data.get('model'))})",
            near_misses=tuple(f"{key}{hint}" for key in data if isinstance(key, str) and key not in TOP_LEVEL_KEYS
                              for hint in [suggestion(key, TOP_LEVEL_KEYS)] if hint),
        )

    def gateway_settings(self) -> GatewaySettings:
        """`gateway:`, or the defaults where config.yaml has none."""
        from hermes.config.gateway_settings import GatewaySettings

        return self.gateway or GatewaySettings()

    def team_settings(self) -> TeamSettings:
        """`team:`, or the defaults where config.yaml has none."""
        from hermes.config.team_settings import TeamSettings

        return self.team or TeamSettings()


def _model_section(value: Any, loc: Loc) -> ModelSettings | None:  # None: optional's default
    from hermes.config.model_settings import ModelSettings

    return ModelSettings.read(value, loc)


def _gateway_section(value: Any, loc: Loc) -> GatewaySettings | None:  # None: optional's default
    from hermes.config.gateway_settings import GatewaySettings

    return GatewaySettings.read(value, loc)


def _team_section(value: Any, loc: Loc) -> TeamSettings | None:  # None: optional's default
    from hermes.config.team_settings import TeamSettings

    return TeamSettings.read(value, loc)


TOP_LEVEL_KEYS = ("mcp_servers", "platform_toolsets", "mcp", "plugins", "model", "permissions", "gateway", "team")


def _is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


def parse_config(doc: Mapping[str, Any], path: Path) -> HermesConfig:
    """Validate a loaded document; the first problem becomes one `ConfigError` sentence (with the
    line, from a round-trip document)."""
    try:
        return HermesConfig.read(doc)
    except Invalid as exc:
        from hermes.config.yamlfile import line_of  # loads the YAML parser: only for a mistake

        raise ConfigError.from_invalid(exc, path, line=line_of(doc, exc.loc)) from None
