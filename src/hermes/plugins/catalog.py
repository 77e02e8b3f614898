"""The plugin catalog: entries pinned to a commit, shipped with hermes, extended by the user.

The shipped `catalog.json` can be extended or overridden entry by entry with
`HERMES_HOME/plugin-catalog.json` (same format). An install from the catalog checks `platforms`
before anything is cloned or written, then installs exactly the pinned commit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.files import UnreadableFile, read_text_bounded
from hermes.home import Home
from hermes.plugins.manifest import PluginError, title_from_name
from hermes.validation import (
    PLUGIN_NAME,
    Invalid,
    Loc,
    choice,
    items,
    mapping,
    matching,
    nonempty_text,
    optional,
    required,
    texts,
)

SHIPPED = Path(__file__).with_name("catalog.json")
MAX_CATALOG_BYTES = 1024 * 1024
_SHA = re.compile(r"[0-9a-f]{40}")
PLATFORM_ALIASES = {"windows": "win32", "macos": "darwin", "win32": "win32", "darwin": "darwin", "linux": "linux"}
PLATFORM_NAMES = {"win32": "windows", "darwin": "macos", "linux": "linux"}


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    repo: str
    sha: str
    version: str  # the `version` of the plugin.json at the pinned commit
    title: str | None  # its `title`; None when it has none
    description: str
    platforms: tuple[str, ...]  # normalized to win32/darwin/linux; empty means every platform
    source: str  # the catalog file it came from
    # Per server, tools that always ask before they run (what the catalog knows of the plugin:
    # code execution), kept with the install and applied on top of the plugin's own declarations.
    approval: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def shown_title(self) -> str:
        return self.title or title_from_name(self.name)

    def supports(self, os_name: str) -> bool:
        return not self.platforms or os_name in self.platforms

    def refusal(self, os_name: str) -> str | None:
        if self.supports(os_name):
            return None
        names = ", ".join(PLATFORM_NAMES[p] for p in self.platforms)
        return f"Plugin '{self.name}' is unavailable on {os_name}; supported platforms: {names}."

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "repo": self.repo, "sha": self.sha, "version": self.version,
                "title": self.shown_title,
                "description": self.description, "platforms": [PLATFORM_NAMES[p] for p in self.platforms]}


def _platforms(value: Any, loc: Loc) -> tuple[str, ...]:
    names = items(value, loc, choice(*PLATFORM_ALIASES))
    return tuple(dict.fromkeys(PLATFORM_ALIASES[p] for p in names))


def _entry(raw: Any, loc: Loc, file: Path) -> CatalogEntry:
    data = mapping(raw, loc, ("name", "repo", "sha", "version", "title", "description", "platforms", "approval"),
                   what="an object")
    name = required(data, "name", loc, matching(PLUGIN_NAME, "must be 1-64 lowercase letters, digits, '.' or '-', "
                                                            "starting with a letter or digit"))
    values = {key: required(data, key, loc, nonempty_text) for key in ("repo", "version", "description")}
    sha = required(data, "sha", loc, matching(_SHA, "must be a full 40-character commit id (a pin, not a branch)"))
    return CatalogEntry(name, values["repo"], sha, values["version"], optional(data, "title", loc, nonempty_text, None),
                        values["description"],
                        optional(data, "platforms", loc, _platforms, ()), str(file),
                        optional(data, "approval", loc, _approval, {}))


def _approval(value: Any, loc: Loc) -> dict[str, tuple[str, ...]]:
    """`{server: {ask: [tool, glob*]}}`."""
    servers = mapping(value, loc, what="an object")
    return {server: required(mapping(rule, (*loc, server), ("ask",), what="an object"), "ask", (*loc, server), texts)
            for server, rule in servers.items()}


def _read(file: Path) -> list[CatalogEntry]:
    try:
        data = json.loads(read_text_bounded(file, MAX_CATALOG_BYTES))
    except FileNotFoundError:
        return []
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.reason if isinstance(exc, UnreadableFile) else f"not valid JSON ({exc})"
        raise PluginError(f"is not a readable JSON catalog: {reason}", path=file) from None
    try:
        top = mapping(data, (), ("schema", "plugins", "$schema"), what="an object")
        if top.get("schema") != 1:
            raise Invalid(("schema",), "must be 1")
        return list(required(top, "plugins", (), lambda v, loc: items(v, loc, lambda e, at: _entry(e, at, file))))
    except Invalid as exc:
        raise PluginError.from_invalid(exc, file) from None


def user_catalog_path(home: Home) -> Path:
    return home.root / "plugin-catalog.json"


def load_catalog(home: Home) -> dict[str, CatalogEntry]:
    entries = {e.name: e for e in _read(SHIPPED)}
    entries.update({e.name: e for e in _read(user_catalog_path(home))})
    return dict(sorted(entries.items()))
