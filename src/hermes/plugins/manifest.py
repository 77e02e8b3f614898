"""Portable plugins: `plugin.json` + `mcp.json` + files, read strictly.

A plugin written for another host still loads: an unknown top-level field of plugin.json is a
warning, not an error, and both files may carry a `$schema` key. What would be unsafe or
ambiguous is an error naming the file, the key and the rule: stdio commands must be bare names or
`./`-relative, remote URLs must be https unless they are on loopback, names follow one pattern.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes.apps.declaration import ServerDeclaration, parse_declarations
from hermes.apps.liveness import RUNTIME_FIELDS, runtime_references
from hermes.apps.runtimefile import LOOPBACK_HOSTS
from hermes.config.model import SERVER_NAME, ServerConfig, config_strings
from hermes.config.sandbox import Confinement
from hermes.errors import InvalidFile
from hermes.files import TooLarge, UnreadableFile, read_bounded
from hermes.validation import (
    PLUGIN_NAME,
    Invalid,
    Loc,
    choice,
    dotted,
    mapping,
    nonempty_text,
    optional,
    required,
    shown,
    text,
)

# Plugin names become folder names beside hermes's own bookkeeping (`.staging-*`, `.old-*`, the
# lock): never a leading dot or dash, never a control character.
_KNOWN_FIELDS = {"$schema", "name", "version", "description", "title", "extensions", "author", "homepage",
                 "repository", "license", "keywords"}
_SERVER_FIELDS = {"type", "command", "args", "env", "url", "headers", "cwd", "timeout", "connect_timeout"}
_MAX_MANIFEST = 1 << 20


class PluginError(InvalidFile):
    """A plugin file (plugin.json, mcp.json, a plugin catalog) broke a rule."""


def title_from_name(name: str) -> str:
    """`blender` -> `Blender`, `hermes-demo` -> `Hermes Demo`."""
    return " ".join(part.capitalize() for part in re.split(r"[-_.]+", name) if part) or name


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
        """What the user calls the app: the plugin's title, else its name title-cased ("Blender")."""
        return self.manifest.title or title_from_name(self.manifest.name)


def _load_json(path: Path) -> dict[str, Any]:
    try:
        raw = read_bounded(path, _MAX_MANIFEST, follow_symlinks=False)
    except FileNotFoundError:
        raise PluginError("is missing", path=path) from None
    except TooLarge:
        raise PluginError(f"is larger than {_MAX_MANIFEST} bytes", path=path) from None
    except UnreadableFile as exc:
        raise PluginError(f"cannot be read: {exc.reason}", path=path) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise PluginError(f"is not valid JSON{where}", path=path) from None
    if not isinstance(data, dict):
        raise PluginError("must hold a JSON object", path=path)
    return data


def _manifest(data: dict[str, Any], path: Path) -> PluginManifest:
    name = data.get("name")
    if not isinstance(name, str) or not PLUGIN_NAME.fullmatch(name):
        raise Invalid(("name",), f"must be 1-64 lowercase letters, digits, '.' or '-', starting with a letter or "
                                 f"digit (got {shown(name)})")
    warnings = tuple(f"{path}: unknown field '{key}' ignored" for key in data if key not in _KNOWN_FIELDS)
    return PluginManifest(name, optional(data, "version", (), text, None), optional(data, "title", (), text, None),
                          optional(data, "description", (), text, None), data, warnings)


def read_manifest(root: Path) -> PluginManifest:
    path = root / "plugin.json"
    data = _load_json(path)
    try:
        return _manifest(data, path)
    except Invalid as exc:
        raise PluginError.from_invalid(exc, path) from None


def _expand(text: str, root: Path, data_dir: Path) -> str:
    return text.replace("${PLUGIN_ROOT}", str(root)).replace("${PLUGIN_DATA}", str(data_dir))


def _command(value: Any, loc: Loc, root: Path) -> str:
    command = nonempty_text(value, loc)
    if command.startswith("./"):
        if ".." in command.split("/"):
            raise Invalid(loc, "must stay inside the plugin")
        return str(root / command[2:])
    if "/" in command or "\\" in command:
        raise Invalid(loc, f"must be a bare name or ./relative (got {command!r})")
    return command


def _remote_url(value: Any, loc: Loc) -> str:
    url = nonempty_text(value, loc)
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        raise Invalid(loc, f"is not a valid URL (got {shown(url)})") from None
    if parts.scheme != "https" and not (parts.scheme == "http" and host in LOOPBACK_HOSTS):
        raise Invalid(loc, "must be https (plain http only on loopback)")
    return url


def _server_config(name: str, entry: Any, root: Path, data_dir: Path) -> ServerConfig:
    """One `mcpServers` entry in the shape other hosts use, as a `ServerConfig`."""
    loc: Loc = ("mcpServers", name)
    if not SERVER_NAME.match(name) or set(name) <= {"."}:
        raise Invalid(loc, "is not a valid server name (letters, digits, '_', '.', '-')")
    data = mapping(entry, loc, _SERVER_FIELDS, what="an object")
    kind = optional(data, "type", loc, choice("stdio", "streamable-http", "http", "sse"),
                    "stdio" if "command" in data else "streamable-http")
    values: dict[str, Any] = {k: v for k, v in data.items() if k != "type"}
    if kind == "stdio":
        command = required(data, "command", loc, lambda v, at: _command(v, at, root),
                           why="is required for a stdio server")
        values["command"] = _expand(command, root, data_dir)
        if isinstance(values.get("args"), list):
            values["args"] = [_expand(a, root, data_dir) if isinstance(a, str) else a for a in values["args"]]
        if isinstance(values.get("env"), dict):
            values["env"] = {k: _expand(v, root, data_dir) if isinstance(v, str) else v
                             for k, v in values["env"].items()}
        values["cwd"] = _expand(values["cwd"], root, data_dir) if isinstance(values.get("cwd"), str) else str(root)
        _own_folder(values["cwd"], (*loc, "cwd"), root, data_dir)
    else:
        required(data, "url", loc, _remote_url, why=f"is required for a {kind} server")
        if kind == "sse":
            values["transport"] = "sse"
    return ServerConfig.read(values, loc)


def _own_folder(cwd: str, loc: Loc, root: Path, data_dir: Path) -> None:
    """A plugin's server works in the plugin's folder or its data folder, never elsewhere (its sandbox
    shares the working folder with it)."""
    real = Path(os.path.realpath(cwd))
    if not any(real == place or place in real.parents for place in (Path(os.path.realpath(root)),
                                                                     Path(os.path.realpath(data_dir)))):
        raise Invalid(loc, "must be inside the plugin (${PLUGIN_ROOT}) or its data folder (${PLUGIN_DATA})")


_RUNTIME_PLACES = ("args", "env", "headers")


def _runtime_problem(config: ServerConfig, declaration: ServerDeclaration | None) -> tuple[Loc, str] | None:
    """Where a `${runtime.*}` reference breaks a rule (SPEC 5.4.4), and which; None if none does."""
    for loc, value in config_strings(config):
        fields = runtime_references(value)
        if not fields:
            continue
        unknown = [f for f in fields if f not in RUNTIME_FIELDS]
        if unknown:
            return loc, f"uses ${{runtime.{unknown[0]}}}; the runtime fields are {', '.join(RUNTIME_FIELDS)}"
        if loc[0] not in _RUNTIME_PLACES:
            return loc, "may use ${runtime.*} only in args, env and headers"
        if declaration is None or not declaration.has_server_json():
            return loc, ("uses ${runtime.*}, which needs a server_json liveness declaration for this server in "
                         "plugin.json (the runtime file is where the values come from)")
    return None


def _installed_approval(root: Path) -> dict[str, tuple[str, ...]]:
    """What the catalog entry a plugin was installed from says must ask (kept in its install record)."""
    from hermes.files import read_json_object

    record = read_json_object(root / ".hermes-install.json", 64 * 1024) or {}
    found: dict[str, tuple[str, ...]] = {}
    approval = record.get("approval")
    for server, rule in (approval.items() if isinstance(approval, dict) else []):
        names = rule.get("ask") if isinstance(rule, dict) else None
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            found[str(server)] = tuple(names)
    return found


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
            raise PluginError("must be an object", path=mcp_path, key="mcpServers")
        try:
            servers = {name: _server_config(name, entry, root, data_dir) for name, entry in entries.items()}
        except Invalid as exc:
            raise PluginError.from_invalid(exc, mcp_path) from None
    declarations = parse_declarations(manifest.raw, set(servers), file=str(root / "plugin.json"))
    asked = _installed_approval(root)
    for name, declaration in declarations.items():
        asked[name] = (*declaration.asks_approval, *asked.get(name, ()))
    for name, names in asked.items():
        if name in servers and names:
            config = servers[name]
            servers[name] = replace(config, approval=config.approval.with_asked(tuple(names)))
    for name, config in servers.items():
        # Its own data folder is the one place a plugin's server may always write.
        declared = declarations[name].sandbox if name in declarations else None
        settings = declared or config.sandbox
        servers[name] = replace(config, sandbox=replace(settings, write=(*settings.write, str(data_dir)),
                                                        confinement=Confinement.PLUGIN))
    for name, config in servers.items():
        problem = _runtime_problem(config, declarations.get(name))
        if problem is not None:
            loc, rule = problem
            raise PluginError(rule, path=mcp_path, key=dotted(("mcpServers", name, *loc)))
    skills = tuple(sorted(root.glob("skills/*/SKILL.md")))
    return Plugin(root, manifest, servers, declarations, data_dir, tuple(warnings), skills)
