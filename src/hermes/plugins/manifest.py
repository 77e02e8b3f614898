"""Portable plugins: `plugin.json` + `mcp.json` + files, read strictly.

A plugin written for another host still loads: an unknown top-level field of plugin.json is a
warning, not an error, and both files may carry a `$schema` key. What would be unsafe or
ambiguous is an error naming the file, the key and the rule: stdio commands must be bare names or
`./`-relative, remote URLs must be https unless they are on loopback, names follow one pattern.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes.apps.declaration import ServerDeclaration, parse_declarations
from hermes.config.model import SERVER_NAME, Invalid, ServerConfig
from hermes.errors import HermesError
from hermes.runtimefile import LOOPBACK_HOSTS

PLUGIN_NAME = re.compile(r"^[a-z0-9.-]{1,64}$")
_KNOWN_FIELDS = {"$schema", "name", "version", "description", "title", "extensions", "author", "homepage",
                 "repository", "license", "keywords"}
_SERVER_FIELDS = {"type", "command", "args", "env", "url", "headers", "cwd", "timeout", "connect_timeout"}
_MAX_MANIFEST = 1 << 20


class PluginError(HermesError):
    exit_code = 2

    def __init__(self, file: Path | str, message: str) -> None:
        self.file = str(file)
        super().__init__(f"{file}: {message}")


@dataclass(frozen=True)
class PluginManifest:
    name: str
    version: str | None
    title: str | None
    description: str | None
    raw: dict[str, Any]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plugin:
    """A plugin folder, fully read: its manifest, its MCP servers and their declarations."""

    root: Path
    manifest: PluginManifest
    servers: dict[str, ServerConfig]
    declarations: dict[str, ServerDeclaration]
    data_dir: Path
    warnings: tuple[str, ...] = ()
    skills: tuple[Path, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def app_name(self) -> str:
        return self.manifest.title or self.manifest.name


def _load_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()[: _MAX_MANIFEST + 1]
    except FileNotFoundError:
        raise PluginError(path, "is missing") from None
    except OSError as exc:
        raise PluginError(path, f"cannot be read ({exc.strerror})") from None
    if len(raw) > _MAX_MANIFEST:
        raise PluginError(path, f"is larger than {_MAX_MANIFEST} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise PluginError(path, f"is not valid JSON{where}") from None
    if not isinstance(data, dict):
        raise PluginError(path, "must hold a JSON object")
    return data


def _optional_text(data: dict[str, Any], key: str, file: Path) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise PluginError(file, f"'{key}' must be a string")
    return value


def read_manifest(root: Path) -> PluginManifest:
    path = root / "plugin.json"
    data = _load_json(path)
    name = data.get("name")
    if not isinstance(name, str) or not PLUGIN_NAME.match(name):
        raise PluginError(path, f"'name' must be 1-64 lowercase letters, digits, '.' or '-' (got {name!r})")
    warnings = tuple(f"{path}: unknown field '{key}' ignored" for key in data if key not in _KNOWN_FIELDS)
    return PluginManifest(name, _optional_text(data, "version", path), _optional_text(data, "title", path),
                          _optional_text(data, "description", path), data, warnings)


def _expand(text: str, root: Path, data_dir: Path) -> str:
    return text.replace("${PLUGIN_ROOT}", str(root)).replace("${PLUGIN_DATA}", str(data_dir))


def _server_config(name: str, entry: Any, root: Path, data_dir: Path, file: Path) -> ServerConfig:
    if not SERVER_NAME.match(name):
        raise PluginError(file, f"mcpServers.{name!r} is not a valid server name (letters, digits, '_', '.', '-')")
    if not isinstance(entry, dict):
        raise PluginError(file, f"mcpServers.{name} must be an object")
    unknown = sorted(set(entry) - _SERVER_FIELDS)
    if unknown:
        raise PluginError(file, f"mcpServers.{name}.{unknown[0]} is not a known key")
    kind = entry.get("type", "stdio" if "command" in entry else "streamable-http")
    if kind not in ("stdio", "streamable-http", "http", "sse"):
        raise PluginError(file, f"mcpServers.{name}.type must be stdio or streamable-http (got {kind!r})")
    values: dict[str, Any] = {k: v for k, v in entry.items() if k != "type"}
    if kind == "stdio":
        command = values.get("command")
        if not isinstance(command, str) or not command:
            raise PluginError(file, f"mcpServers.{name}.command is required for a stdio server")
        if command.startswith("./"):
            if ".." in command.split("/"):
                raise PluginError(file, f"mcpServers.{name}.command must stay inside the plugin")
            values["command"] = str(root / command[2:])
        elif "/" in command or "\\" in command:
            raise PluginError(file, f"mcpServers.{name}.command must be a bare name or ./relative (got {command!r})")
        values["command"] = _expand(values["command"], root, data_dir)
        if isinstance(values.get("args"), list):
            values["args"] = [_expand(a, root, data_dir) if isinstance(a, str) else a for a in values["args"]]
        if isinstance(values.get("env"), dict):
            values["env"] = {k: _expand(v, root, data_dir) if isinstance(v, str) else v
                             for k, v in values["env"].items()}
        values["cwd"] = _expand(values["cwd"], root, data_dir) if isinstance(values.get("cwd"), str) else str(root)
    else:
        url = values.get("url")
        if not isinstance(url, str) or not url:
            raise PluginError(file, f"mcpServers.{name}.url is required for a {kind} server")
        parts = urlsplit(url)
        loopback = (parts.hostname or "").lower() in LOOPBACK_HOSTS
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
            raise PluginError(file, f"mcpServers.{name}.url must be https (plain http only on loopback)")
        if kind == "sse":
            values["transport"] = "sse"
    try:
        return ServerConfig.read(values, ("mcpServers", name))
    except Invalid as exc:
        key = ".".join(str(p) for p in exc.loc)
        raise PluginError(file, f"{key}: {exc.message}") from None


def load_plugin(root: Path, data_root: Path) -> Plugin:
    """Read a plugin folder; any problem raises `PluginError` (or `DeclarationError`) for the whole plugin."""
    manifest = read_manifest(root)
    mcp_path = root / "mcp.json"
    servers: dict[str, ServerConfig] = {}
    warnings = list(manifest.warnings)
    data_dir = data_root / manifest.name
    if mcp_path.exists():
        mcp = _load_json(mcp_path)
        unknown = sorted(set(mcp) - {"$schema", "mcpServers"})
        warnings += [f"{mcp_path}: unknown field '{key}' ignored" for key in unknown]
        entries = mcp.get("mcpServers", {})
        if not isinstance(entries, dict):
            raise PluginError(mcp_path, "'mcpServers' must be an object")
        servers = {name: _server_config(name, entry, root, data_dir, mcp_path) for name, entry in entries.items()}
    declarations = parse_declarations(manifest.raw, set(servers), file=str(root / "plugin.json"))
    skills = tuple(sorted(root.glob("skills/*/SKILL.md")))
    return Plugin(root, manifest, servers, declarations, data_dir, tuple(warnings), skills)
