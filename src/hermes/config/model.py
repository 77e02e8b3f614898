"""The typed shape of `config.yaml`, validated strictly; errors point at the file, line and key.

Values stay uninterpolated here: `${VAR}` is resolved at connect time (see `interpolate`), so a
missing variable only affects the one server that needs it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from ruamel.yaml.comments import CommentedMap

from hermes.config.yamlfile import line_of
from hermes.errors import ConfigError

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


class ToolFilter(BaseModel):
    model_config = _STRICT

    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    resources: bool = True
    prompts: bool = True


class OAuthSettings(BaseModel):
    model_config = _STRICT

    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    redirect_port: int | None = Field(default=None, ge=1, le=65535)


class ServerConfig(BaseModel):
    """One entry of `mcp_servers`: a stdio server (`command`) or an HTTP server (`url`)."""

    model_config = _STRICT

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    transport: Literal["streamable-http", "http", "sse", "stdio"] | None = None
    auth: Literal["oauth"] | None = None
    oauth: OAuthSettings | None = None
    enabled: bool = True
    timeout: float = Field(default=300.0, gt=0)
    connect_timeout: float = Field(default=60.0, gt=0)
    tools: ToolFilter = Field(default_factory=ToolFilter)

    @field_validator("args", mode="before")
    @classmethod
    def _split_args(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(shlex.split(value))
        return value

    @field_validator("timeout", "connect_timeout", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be a number of seconds")
        return float(value) if isinstance(value, int) else value

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if self.command and self.url:
            raise ValueError("has both 'command' and 'url'; a server is either stdio or HTTP, not both")
        if not self.command and not self.url:
            raise ValueError("needs either 'command' (stdio) or 'url' (HTTP)")
        if self.url and self.transport == "stdio":
            raise ValueError("has 'url' with transport 'stdio'")
        if self.command and self.transport not in (None, "stdio"):
            raise ValueError(f"has 'command' with transport '{self.transport}'")
        return self

    @property
    def is_stdio(self) -> bool:
        return self.command is not None

    @property
    def transport_name(self) -> str:
        if self.is_stdio:
            return "stdio"
        return "sse" if self.transport == "sse" else "http"


class McpSettings(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    client: bool = True
    stdio_servers: bool = True


class HermesConfig(BaseModel):
    """The parts of `config.yaml` hermes reads; unknown top-level sections belong to other tools."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    mcp_servers: dict[str, ServerConfig] = Field(default_factory=dict)
    platform_toolsets: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    mcp: McpSettings = Field(default_factory=McpSettings)

    @field_validator("mcp_servers", "platform_toolsets", "mcp", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value


def _plain(node: Any) -> Any:
    """Round-trip containers to plain dicts and tuples, which strict pydantic accepts."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return tuple(_plain(v) for v in node)
    return node


def _describe(error: dict[str, Any]) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return "is not a known key"
    if kind == "missing":
        return "is required"
    shown = "" if isinstance(value, (dict, list)) else f" (got {value!r})"
    message = str(error["msg"]).replace("a valid tuple", "a list")
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
        return message
    return message[0].lower() + message[1:] + shown


def parse_config(doc: CommentedMap, path: Path) -> HermesConfig:
    """Validate a loaded document; the first problem becomes one `ConfigError` sentence."""
    try:
        return HermesConfig.model_validate(_plain(doc))
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(part for part in error["loc"] if not (isinstance(part, str) and part.startswith("function-")))
        # Drop pydantic's union-branch labels such as "tuple[str, ...]" from the key path.
        keys = [str(p) for p in loc if not (isinstance(p, str) and ("[" in p or p in {"str", "int"}))]
        key = ".".join(keys) or "(top level)"
        raise ConfigError(f"{key}: {_describe(dict(error))}.", path=path, line=line_of(doc, loc),
                          key=key) from None
