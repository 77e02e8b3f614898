"""Finding the MCP servers other clients already know: Claude Desktop, Claude Code, Cursor, VS Code, Goose.

Each client keeps its servers in a file at a known place (per OS), under its own key. Reading is
read-only and bounded; a file that is missing is skipped, and one that is broken is reported with
its path and the reason, never a traceback and never a stop for the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hermes.files import read_text_bounded
from hermes.validation import dotted, invalid_text_at

MAX_CLIENT_FILE = 8 * 1024 * 1024  # ~/.claude.json grows with history; still, nothing like this


@dataclass(frozen=True)
class ClientFile:
    client: str
    path: Path
    key: str  # "mcpServers", "servers", "extensions", or "projects" (Claude Code's per-folder servers)


@dataclass(frozen=True)
class FoundServer:
    client: str
    path: Path
    name: str
    data: Any  # the server's object as that client wrote it (normalised for Goose)


def client_files(user_home: Path, cwd: Path, platform: str, appdata: Path | None = None) -> list[ClientFile]:
    """Where each client keeps its servers on this OS (user-wide first, then this project's)."""
    if platform == "darwin":
        support = user_home / "Library" / "Application Support"
        desktop, code_user = support / "Claude", support / "Code" / "User"
    elif platform == "win32":
        roaming = appdata or user_home / "AppData" / "Roaming"
        desktop, code_user = roaming / "Claude", roaming / "Code" / "User"
    else:
        config = user_home / ".config"
        desktop, code_user = config / "Claude", config / "Code" / "User"
    return [
        ClientFile("Claude Desktop", desktop / "claude_desktop_config.json", "mcpServers"),
        ClientFile("Claude Code", user_home / ".claude.json", "mcpServers"),
        ClientFile("Claude Code (this project)", user_home / ".claude.json", "projects"),
        ClientFile("Claude Code (.mcp.json)", cwd / ".mcp.json", "mcpServers"),
        ClientFile("Cursor", user_home / ".cursor" / "mcp.json", "mcpServers"),
        ClientFile("Cursor (this project)", cwd / ".cursor" / "mcp.json", "mcpServers"),
        ClientFile("VS Code", code_user / "mcp.json", "servers"),
        ClientFile("VS Code (.vscode/mcp.json)", cwd / ".vscode" / "mcp.json", "servers"),
        ClientFile("Goose", user_home / ".config" / "goose" / "config.yaml", "extensions"),
    ]


def _load(path: Path) -> Any:
    data = _parse(path)
    where = invalid_text_at(data)
    if where is not None:
        raise ValueError(f"holds text that is not valid Unicode (a lone surrogate) at {dotted(where) or 'the top'}")
    return data


def _parse(path: Path) -> Any:
    text = read_text_bounded(path, MAX_CLIENT_FILE)
    if path.suffix in (".yaml", ".yml"):
        try:
            return YAML(typ="safe").load(text)
        except YAMLError as exc:
            raise ValueError(f"is not valid YAML ({str(exc).splitlines()[0]})") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        try:  # VS Code's and Cursor's files are JSON with comments (and trailing commas)
            return json.loads(plain_json(text))
        except ValueError:
            raise ValueError(f"is not valid JSON ({exc})") from None


_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def plain_json(text: str) -> str:
    """JSON-with-comments as JSON: `//` and `/* */` comments and trailing commas removed, strings
    left exactly as they are. (Written here: no maintained JSONC reader is a dependency already.)"""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        else:
            out.append(char)
            i += 1
    # A comma before a closing bracket, outside strings (strings were copied whole, so one holding
    # ",}" would be changed too: rare enough in a client's server list to accept).
    return _TRAILING_COMMA.sub(r"\1", "".join(out))


def _folders_filled(value: Any, folder: Path, depth: int = 0) -> Any:
    """VS Code's `${workspaceFolder}` (and `${workspaceRoot}`) as the folder the file belongs to."""
    if depth > 32:
        return value
    if isinstance(value, str):
        return value.replace("${workspaceFolder}", str(folder)).replace("${workspaceRoot}", str(folder))
    if isinstance(value, list):
        return [_folders_filled(v, folder, depth + 1) for v in value]
    if isinstance(value, Mapping):
        return {k: _folders_filled(v, folder, depth + 1) for k, v in value.items()}
    return value


def _goose(extensions: Mapping[str, Any]) -> dict[str, Any]:
    """Goose's `extensions` as the common shape; its built-in extensions are not MCP servers to import."""
    servers: dict[str, Any] = {}
    for key, ext in extensions.items():
        if not isinstance(ext, Mapping) or ext.get("type") in ("builtin", "platform", "frontend", "inline_python"):
            continue
        kind = str(ext.get("type") or "stdio")
        shaped: dict[str, Any] = {"type": kind}
        if kind == "stdio":
            env = dict(ext.get("envs") or {}) if isinstance(ext.get("envs"), Mapping) else {}
            # `env_keys` name variables Goose passes from its own environment or keyring: the same
            # names, from hermes's .env or environment.
            named = ext.get("env_keys")
            keys: list[Any] = named if isinstance(named, list) else []
            env |= {k: f"${{{k}}}" for k in keys if isinstance(k, str) and k and k not in env}
            shaped |= {"command": ext.get("cmd"), "args": ext.get("args") or [], "env": env}
        else:
            shaped |= {"url": ext.get("uri"), "headers": ext.get("headers") or {}}
        if ext.get("enabled") is False:
            shaped["disabled"] = True
        servers[str(ext.get("name") or key)] = shaped
    return servers


def servers_in(data: Any, key: str, cwd: Path) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        return {}
    if key == "projects":
        projects = data.get("projects")
        project = projects.get(str(cwd)) if isinstance(projects, Mapping) else None
        found = project.get("mcpServers") if isinstance(project, Mapping) else None
    elif key == "extensions":
        extensions = data.get("extensions")
        found = _goose(extensions) if isinstance(extensions, Mapping) else None
    else:
        found = data.get(key)
        if found is None and key == "servers":
            found = (data.get("mcp") or {}).get("servers") if isinstance(data.get("mcp"), Mapping) else None
    return {name: _folders_filled(value, cwd) for name, value in found.items()} if isinstance(found, Mapping) else {}


def read_client_file(file: ClientFile, cwd: Path) -> tuple[list[FoundServer], str | None]:
    """The servers in one client file, or the problem with it (None when it simply is not there)."""
    try:
        data = _load(file.path)
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError) as exc:
        return [], f"{file.client}: {file.path}: {exc}"
    except RecursionError:  # nested deeper than any parser takes: this file is skipped, the others read
        return [], f"{file.client}: {file.path}: nests too deeply to read"
    try:
        found = servers_in(data, file.key, cwd)
    except RecursionError:
        return [], f"{file.client}: {file.path}: nests too deeply to read"
    return [FoundServer(file.client, file.path, str(name), value) for name, value in found.items()], None


def read_any(path: Path, cwd: Path) -> tuple[list[FoundServer], str | None]:
    """`--from FILE`: whichever of the known shapes the file has."""
    try:
        data = _load(path)
    except FileNotFoundError:
        return [], f"{path}: does not exist"
    except (OSError, ValueError) as exc:
        return [], f"{path}: {exc}"
    except RecursionError:
        return [], f"{path}: nests too deeply to read"
    for key in ("mcpServers", "servers", "extensions", "projects"):
        found = servers_in(data, key, cwd)
        if found:
            return [FoundServer(path.name, path, str(n), v) for n, v in found.items()], None
    return [], f"{path}: holds no MCP servers (looked for mcpServers, servers, mcp.servers and extensions)"
