"""The plugin catalog: entries pinned to a commit, shipped with hermes, extended by the user.

The shipped `catalog.json` can be extended or overridden entry by entry with
`HERMES_HOME/plugin-catalog.json` (same format). An install from the catalog checks `platforms`
before anything is cloned or written, then installs exactly the pinned commit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.home import Home
from hermes.plugins.manifest import PLUGIN_NAME, PluginError

SHIPPED = Path(__file__).with_name("catalog.json")
_SHA = re.compile(r"^[0-9a-f]{40}$")
PLATFORM_ALIASES = {"windows": "win32", "macos": "darwin", "win32": "win32", "darwin": "darwin", "linux": "linux"}
PLATFORM_NAMES = {"win32": "windows", "darwin": "macos", "linux": "linux"}


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    repo: str
    sha: str
    version: str
    title: str
    description: str
    platforms: tuple[str, ...]  # normalized to win32/darwin/linux; empty means every platform
    source: str  # the catalog file it came from

    def supports(self, os_name: str) -> bool:
        return not self.platforms or os_name in self.platforms

    def refusal(self, os_name: str) -> str | None:
        if self.supports(os_name):
            return None
        names = ", ".join(PLATFORM_NAMES[p] for p in self.platforms)
        return f"Plugin '{self.name}' is unavailable on {os_name}; supported platforms: {names}."

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "repo": self.repo, "sha": self.sha, "version": self.version, "title": self.title,
                "description": self.description, "platforms": [PLATFORM_NAMES[p] for p in self.platforms]}


def _entry(raw: Any, file: Path, index: int) -> CatalogEntry:
    where = f"plugins[{index}]"
    if not isinstance(raw, dict):
        raise PluginError(file, f"{where} must be an object")
    values: dict[str, str] = {}
    for key in ("name", "repo", "sha", "version", "title", "description"):
        value = raw.get(key)
        if not isinstance(value, str) or not value:
            raise PluginError(file, f"{where}.{key} must be a non-empty string")
        values[key] = value
    if not PLUGIN_NAME.match(values["name"]):
        raise PluginError(file, f"{where}.name must be 1-64 lowercase letters, digits, '.' or '-'")
    if not _SHA.match(values["sha"]):
        raise PluginError(file, f"{where}.sha must be a full 40-character commit id (a pin, not a branch)")
    platforms = raw.get("platforms", [])
    if not isinstance(platforms, list) or any(p not in PLATFORM_ALIASES for p in platforms):
        raise PluginError(file, f"{where}.platforms must list windows, macos, linux (or win32, darwin)")
    normalized = tuple(dict.fromkeys(PLATFORM_ALIASES[p] for p in platforms))
    return CatalogEntry(values["name"], values["repo"], values["sha"], values["version"], values["title"],
                        values["description"], normalized, str(file))


def _read(file: Path) -> list[CatalogEntry]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise PluginError(file, f"is not a readable JSON catalog ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != 1 or not isinstance(data.get("plugins"), list):
        raise PluginError(file, "must be an object with \"schema\": 1 and a \"plugins\" list")
    return [_entry(raw, file, i) for i, raw in enumerate(data["plugins"])]


def user_catalog_path(home: Home) -> Path:
    return home.root / "plugin-catalog.json"


def load_catalog(home: Home) -> dict[str, CatalogEntry]:
    entries = {e.name: e for e in _read(SHIPPED)}
    entries.update({e.name: e for e in _read(user_catalog_path(home))})
    return dict(sorted(entries.items()))
