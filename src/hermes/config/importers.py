"""Finding the MCP servers other clients already know: Claude Desktop, Claude Code, Cursor, VS Code, Goose.

Each client keeps its servers in a file at a known place (per OS), under its own key. Reading is
read-only and bounded; a file that is missing is skipped, and one that is broken is reported with
its path and the reason, never a traceback and never a stop for the others.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hermes.files import read_text_bounded

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
    text = read_text_bounded(path, MAX_CLIENT_FILE)
    if path.suffix in (".yaml", ".yml"):
        try:
            return YAML(typ="safe").load(text)
        except YAMLError as exc:
            raise ValueError(f"is not valid YAML ({str(exc).splitlines()[0]})") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None


def _goose(extensions: Mapping[str, Any]) -> dict[str, Any]:
    """Goose's `extensions` as the common shape; its built-in extensions are not MCP servers to import."""
    servers: dict[str, Any] = {}
    for key, ext in extensions.items():
        if not isinstance(ext, Mapping) or ext.get("type") in ("builtin", "platform", "frontend", "inline_python"):
            continue
        kind = str(ext.get("type") or "stdio")
        shaped: dict[str, Any] = {"type": kind}
        if kind == "stdio":
            shaped |= {"command": ext.get("cmd"), "args": ext.get("args") or [], "env": ext.get("envs") or {}}
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
    return dict(found) if isinstance(found, Mapping) else {}


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
