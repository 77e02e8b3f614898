"""Catalog manifests: one JSON file per entry under `entries/`, with a versioned schema.

A manifest with a schema version this hermes does not know is skipped with a warning (a newer
hermes may have written it); one that is malformed is skipped with the file and the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENTRIES = Path(__file__).with_name("entries")
SCHEMA = 1


@dataclass(frozen=True)
class Setting:
    name: str
    prompt: str
    secret: bool
    default: str | None = None
    required: bool = True


@dataclass(frozen=True)
class CatalogServer:
    name: str
    title: str
    description: str
    transport: dict[str, Any]
    auth: str  # "none" | "api_key" | "oauth"
    settings: tuple[Setting, ...]
    default_enabled: tuple[str, ...] | None
    default_excluded: tuple[str, ...]
    install: tuple[str, ...] | None
    post_install: str
    scope: str | None = None
    file: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_remote(self) -> bool:
        return self.transport.get("type") == "http"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description, "auth": self.auth,
                "transport": "http" if self.is_remote else "stdio",
                "settings": [{"name": s.name, "prompt": s.prompt, "secret": s.secret, "default": s.default}
                             for s in self.settings]}


class ManifestError(ValueError):
    pass


def _texts(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{what} must be a list of strings")
    return tuple(value)


def parse_manifest(data: Any, file: str) -> CatalogServer:
    if not isinstance(data, dict):
        raise ManifestError("must be a JSON object")
    for key in ("name", "title", "description"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ManifestError(f"'{key}' must be a non-empty string")
    transport = data.get("transport")
    if not isinstance(transport, dict) or transport.get("type") not in ("stdio", "http"):
        raise ManifestError("'transport.type' must be 'stdio' or 'http'")
    if transport["type"] == "stdio" and not isinstance(transport.get("command"), str):
        raise ManifestError("a stdio transport needs 'command'")
    if transport["type"] == "http" and not isinstance(transport.get("url"), str):
        raise ManifestError("an http transport needs 'url'")
    auth = data.get("auth") or {"type": "none"}
    kind = auth.get("type") if isinstance(auth, dict) else None
    if kind not in ("none", "api_key", "oauth"):
        raise ManifestError("'auth.type' must be none, api_key or oauth")
    settings = []
    for raw in auth.get("settings", []) if kind == "api_key" else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not isinstance(raw.get("prompt"), str):
            raise ManifestError("each setting needs 'name' and 'prompt'")
        default = raw.get("default")
        settings.append(Setting(raw["name"], raw["prompt"], bool(raw.get("secret", False)),
                                default if isinstance(default, str) else None, bool(raw.get("required", True))))
    tools = data.get("tools") or {}
    enabled = _texts(tools["default_enabled"], "tools.default_enabled") if "default_enabled" in tools else None
    excluded = _texts(tools.get("default_excluded", []), "tools.default_excluded")
    install = data.get("install")
    command = _texts(install["command"], "install.command") if isinstance(install, dict) else None
    return CatalogServer(data["name"], data["title"], data["description"], transport, str(kind), tuple(settings),
                         enabled, excluded, command, str(data.get("post_install") or ""),
                         auth.get("scope") if isinstance(auth.get("scope"), str) else None, file)


def load_entries(user_folder: Path | None = None) -> tuple[dict[str, CatalogServer], list[str]]:
    """The shipped entries, then the user's own (`HERMES_HOME/mcp-catalog/*.json`) adding or overriding."""
    entries: dict[str, CatalogServer] = {}
    warnings: list[str] = []
    files = sorted(ENTRIES.glob("*.json")) + (sorted(user_folder.glob("*.json")) if user_folder else [])
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            warnings.append(f"{path.name}: skipped, not readable JSON ({exc})")
            continue
        version = data.get("schema") if isinstance(data, dict) else None
        if version != SCHEMA:
            warnings.append(f"{path.name}: skipped, catalog schema version {version!r} is not supported "
                            f"(this hermes reads version {SCHEMA})")
            continue
        try:
            entry = parse_manifest(data, path.name)
        except ManifestError as exc:
            warnings.append(f"{path.name}: skipped, {exc}")
            continue
        entries[entry.name] = entry
    return entries, warnings
