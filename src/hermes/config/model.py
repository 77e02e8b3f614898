"""The typed shape of `config.yaml`, validated strictly; errors point at the file, line and key.

Written by hand on purpose: `hermes mcp list` and `--help` must start in well under 150 ms, and
importing pydantic alone costs about 100 ms. The schema is small, so a strict reader over frozen
dataclasses is both fast and easy to keep exact.

Values stay uninterpolated here: `${VAR}` is resolved at connect time (see `interpolate`), so a
missing variable only affects the one server that needs it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ruamel.yaml.comments import CommentedMap

from hermes.config.yamlfile import line_of
from hermes.errors import ConfigError

Loc = tuple[str | int, ...]
T = TypeVar("T")


class Invalid(Exception):
    """One rule broken at one location of the document."""

    def __init__(self, loc: Loc, message: str) -> None:
        self.loc = loc
        self.message = message
        super().__init__(message)


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value)


def _mapping(value: Any, loc: Loc, allowed: frozenset[str] | set[str] | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(loc, f"must be a mapping (got {_shown(value)})")
    for key in value:
        if not isinstance(key, str):
            raise Invalid(loc, f"keys must be text (got {key!r})")
        if allowed is not None and key not in allowed:
            raise Invalid((*loc, key), "is not a known key")
    return value


def _text(value: Any, loc: Loc) -> str:
    if not isinstance(value, str):
        raise Invalid(loc, f"must be text (got {_shown(value)})")
    return value


def _flag(value: Any, loc: Loc) -> bool:
    if not isinstance(value, bool):
        raise Invalid(loc, f"must be true or false (got {_shown(value)})")
    return value


def _seconds(value: Any, loc: Loc) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise Invalid(loc, f"must be a positive number of seconds (got {_shown(value)})")
    return float(value)


def _texts(value: Any, loc: Loc) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise Invalid(loc, f"must be a list (got {_shown(value)})")
    return tuple(_text(item, (*loc, i)) for i, item in enumerate(value))


def _text_map(value: Any, loc: Loc) -> dict[str, str]:
    return {key: _text(item, (*loc, key)) for key, item in _mapping(value, loc).items()}


def _optional(data: Mapping[str, Any], key: str, loc: Loc, read: Callable[[Any, Loc], T], default: T) -> T:
    if key not in data or data[key] is None:
        return default
    return read(data[key], (*loc, key))


def _choice(choices: tuple[str, ...]) -> Callable[[Any, Loc], str]:
    def read(value: Any, loc: Loc) -> str:
        if value not in choices:
            raise Invalid(loc, f"must be one of {', '.join(choices)} (got {_shown(value)})")
        return str(value)

    return read


SERVER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


def check_server_name(name: str, loc: Loc) -> None:
    """Names become file names (logs, tokens) and tool-name prefixes: no separators, no dot-only names."""
    if not SERVER_NAME.match(name) or set(name) <= {"."}:
        raise Invalid(loc, "is not a valid server name (1-64 letters, digits, '_', '.', '-'; not starting with "
                           "'.' or '-')")


@dataclass(frozen=True)
class ToolFilter:
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    resources: bool = True
    prompts: bool = True

    @classmethod
    def read(cls, value: Any, loc: Loc) -> ToolFilter:
        data = _mapping(value, loc, {"include", "exclude", "resources", "prompts"})
        return cls(
            include=_texts(data["include"], (*loc, "include")) if data.get("include") is not None else None,
            exclude=_texts(data["exclude"], (*loc, "exclude")) if data.get("exclude") is not None else None,
            resources=_optional(data, "resources", loc, _flag, True),
            prompts=_optional(data, "prompts", loc, _flag, True),
        )


@dataclass(frozen=True, repr=False)
class OAuthSettings:
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    redirect_port: int | None = None

    @classmethod
    def read(cls, value: Any, loc: Loc) -> OAuthSettings:
        data = _mapping(value, loc, {"client_id", "client_secret", "scope", "redirect_port"})
        port = data.get("redirect_port")
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
            raise Invalid((*loc, "redirect_port"), f"must be a port between 1 and 65535 (got {_shown(port)})")
        return cls(
            client_id=_optional(data, "client_id", loc, _text, None),
            client_secret=_optional(data, "client_secret", loc, _text, None),
            scope=_optional(data, "scope", loc, _text, None),
            redirect_port=port,
        )

    def __repr__(self) -> str:
        return f"OAuthSettings(client_id={self.client_id!r}, client_secret=<hidden>, scope={self.scope!r})"


_SERVER_KEYS = {"command", "args", "env", "cwd", "url", "headers", "transport", "auth", "oauth", "enabled",
                "timeout", "connect_timeout", "tools"}
_TRANSPORTS = ("streamable-http", "http", "sse", "stdio")


def _args(value: Any, loc: Loc) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError as exc:
            raise Invalid(loc, f"cannot be split like a shell command line ({exc})") from None
    return _texts(value, loc)


@dataclass(frozen=True, repr=False)
class ServerConfig:
    """One entry of `mcp_servers`: a stdio server (`command`) or an HTTP server (`url`)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: str | None = None
    auth: str | None = None
    oauth: OAuthSettings | None = None
    enabled: bool = True
    timeout: float = 300.0
    connect_timeout: float = 60.0
    tools: ToolFilter = field(default_factory=ToolFilter)

    @classmethod
    def read(cls, value: Any, loc: Loc) -> ServerConfig:
        data = _mapping(value, loc, _SERVER_KEYS)
        config = cls(
            command=_optional(data, "command", loc, _text, None) or None,
            args=_optional(data, "args", loc, _args, ()),
            env=_optional(data, "env", loc, _text_map, {}),
            cwd=_optional(data, "cwd", loc, _text, None),
            url=_optional(data, "url", loc, _text, None) or None,
            headers=_optional(data, "headers", loc, _text_map, {}),
            transport=_optional(data, "transport", loc, _choice(_TRANSPORTS), None),
            auth=_optional(data, "auth", loc, _choice(("oauth",)), None),
            oauth=_optional(data, "oauth", loc, OAuthSettings.read, None),
            enabled=_optional(data, "enabled", loc, _flag, True),
            timeout=_optional(data, "timeout", loc, _seconds, 300.0),
            connect_timeout=_optional(data, "connect_timeout", loc, _seconds, 60.0),
            tools=_optional(data, "tools", loc, ToolFilter.read, ToolFilter()),
        )
        if config.command and config.url:
            raise Invalid(loc, "has both 'command' and 'url'; a server is either stdio or HTTP, not both")
        if not config.command and not config.url:
            raise Invalid(loc, "needs either 'command' (stdio) or 'url' (HTTP)")
        if config.url and config.transport == "stdio":
            raise Invalid((*loc, "transport"), "is 'stdio' but the server has a 'url'")
        if config.command and config.transport not in (None, "stdio"):
            raise Invalid((*loc, "transport"), f"is '{config.transport}' but the server has a 'command'")
        if config.command and (config.headers or config.auth):
            raise Invalid(loc, "has 'headers' or 'auth', which only HTTP servers ('url') use")
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
            return "stdio"
        return "sse" if self.transport == "sse" else "http"

    def __repr__(self) -> str:
        # env and header values are secrets more often than not.
        target = self.command if self.command else self.url
        return f"ServerConfig({self.transport_name}, {target!r}, enabled={self.enabled})"


@dataclass(frozen=True)
class McpSettings:
    client: bool = True
    stdio_servers: bool = True

    @classmethod
    def read(cls, value: Any, loc: Loc) -> McpSettings:
        data = _mapping(value, loc)
        return cls(client=_optional(data, "client", loc, _flag, True),
                   stdio_servers=_optional(data, "stdio_servers", loc, _flag, True))


@dataclass(frozen=True)
class PluginSettings:
    enabled: tuple[str, ...] = ()

    @classmethod
    def read(cls, value: Any, loc: Loc) -> PluginSettings:
        data = _mapping(value, loc)
        return cls(enabled=_optional(data, "enabled", loc, _texts, ()))


@dataclass(frozen=True)
class HermesConfig:
    """The parts of `config.yaml` hermes reads; other top-level sections belong to other tools."""

    mcp_servers: Mapping[str, ServerConfig] = field(default_factory=dict)
    platform_toolsets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    mcp: McpSettings = field(default_factory=McpSettings)
    plugins: PluginSettings = field(default_factory=PluginSettings)

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> HermesConfig:
        empty: dict[str, Any] = {}
        servers = _optional(data, "mcp_servers", (), _mapping, empty)
        toolsets = _optional(data, "platform_toolsets", (), _mapping, empty)
        for name in servers:
            check_server_name(name, ("mcp_servers", name))
        return cls(
            mcp_servers={name: ServerConfig.read(entry, ("mcp_servers", name)) for name, entry in servers.items()},
            platform_toolsets={name: _texts(value, ("platform_toolsets", name)) for name, value in toolsets.items()},
            mcp=_optional(data, "mcp", (), McpSettings.read, McpSettings()),
            plugins=_optional(data, "plugins", (), PluginSettings.read, PluginSettings()),
        )


def parse_config(doc: CommentedMap, path: Path) -> HermesConfig:
    """Validate a loaded document; the first problem becomes one `ConfigError` sentence."""
    try:
        return HermesConfig.read(doc)
    except Invalid as exc:
        key = ".".join(str(part) for part in exc.loc) or "(top level)"
        raise ConfigError(f"{key}: {exc.message}.", path=path, line=line_of(doc, exc.loc), key=key) from None
