"""enable / disable / list / update / catalog: everything after (or instead of) an install."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from hermes.apps.availability import check_availability
from hermes.apps.host import Host
from hermes.apps.states import AppState
from hermes.catalog.states import UPDATE_AVAILABLE, CatalogState
from hermes.config.edit import set_plugin_enabled
from hermes.config.store import ConfigStore
from hermes.errors import HermesError
from hermes.home import Home
from hermes.plugins.catalog import CatalogEntry, load_catalog
from hermes.plugins.install import InstallResult, PluginInstallError, install, read_provenance, recover_if_idle
from hermes.plugins.manifest import load_plugin
from hermes.validation import PLUGIN_NAME


class NoSuchPlugin(HermesError):
    exit_code = 3

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"No plugin named '{name}' is installed (see `hermes plugins list`).")


def installed_names(home: Home) -> list[str]:
    """Folders under plugins/ that can be plugins (hermes's own bookkeeping starts with a dot)."""
    if not home.plugins.is_dir():
        return []
    return sorted(p.name for p in home.plugins.iterdir() if p.is_dir() and PLUGIN_NAME.fullmatch(p.name))


def check_name(name: str) -> str:
    """A plugin name given on the command line; anything that could not be one is no plugin."""
    if not PLUGIN_NAME.fullmatch(name):
        raise NoSuchPlugin(name)
    return name


def set_enabled(home: Home, name: str, enabled: bool) -> bool:
    check_name(name)
    if enabled:
        if not (home.plugins / name).is_dir():
            raise NoSuchPlugin(name)
        load_plugin(home.plugins / name, home.plugin_data)  # refuse to enable what would not load
    store = ConfigStore(home)
    if not enabled and name not in store.load().plugins.enabled and not (home.plugins / name).is_dir():
        raise NoSuchPlugin(name)
    with store.edit() as doc:
        return set_plugin_enabled(doc, name, enabled)


@dataclass(frozen=True)
class PluginServerRow:
    name: str
    availability: AppState
    version: str | None = None
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "availability": self.availability.value, "version": self.version,
                "path": self.path}


@dataclass(frozen=True)
class PluginRow:
    """One row of `hermes plugins list --json`; the keys are documented in the README and stable."""

    name: str
    enabled: bool
    version: str | None = None
    title: str | None = None
    source: str | None = None
    source_kind: str | None = None
    commit: str | None = None
    catalog_pin: str | None = None
    installed_at: str | None = None
    servers: tuple[PluginServerRow, ...] = ()
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "title": self.title, "enabled": self.enabled,
                "source": self.source, "source_kind": self.source_kind, "commit": self.commit,
                "catalog_pin": self.catalog_pin, "installed_at": self.installed_at,
                "servers": [s.to_json() for s in self.servers], "error": self.error}


def _text(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def list_plugins(home: Home, host: Host) -> list[PluginRow]:
    recover_if_idle(home)
    enabled = set(ConfigStore(home).load().plugins.enabled)
    rows: list[PluginRow] = []
    for name in installed_names(home):
        record = read_provenance(home.plugins / name) or {}
        catalog = record.get("catalog")
        base = PluginRow(name, name in enabled, source=_text(record, "location"), source_kind=_text(record, "source"),
                         commit=_text(record, "commit"),
                         catalog_pin=_text(catalog, "sha") if isinstance(catalog, dict) else None,
                         installed_at=_text(record, "installed_at"))
        try:
            plugin = load_plugin(home.plugins / name, home.plugin_data)
        except HermesError as exc:
            rows.append(replace(base, error=str(exc)))
            continue
        servers = []
        for server in sorted(plugin.servers):
            declaration = plugin.declarations.get(server)
            if declaration is None:
                servers.append(PluginServerRow(server, AppState.NO_REQUIREMENTS))
                continue
            availability = check_availability(declaration, host)
            servers.append(PluginServerRow(server, availability.state, availability.version, availability.path))
        rows.append(replace(base, version=plugin.manifest.version, title=plugin.manifest.title,
                            servers=tuple(servers)))
    return rows


def update(home: Home, name: str, host: Host) -> InstallResult | None:
    """Re-pin a catalog install to the catalog's current commit (never `git pull`); None if current."""
    check_name(name)
    if not (home.plugins / name).is_dir():
        raise NoSuchPlugin(name)
    provenance = read_provenance(home.plugins / name) or {}
    pinned = provenance.get("catalog")
    if not isinstance(pinned, dict):
        raise PluginInstallError(f"Plugin '{name}' was not installed from the catalog; install it again from its "
                                 f"source with --ref to move it to another commit.")
    entry = load_catalog(home).get(str(pinned.get("name")))
    if entry is None:
        raise PluginInstallError(f"The catalog no longer has an entry '{pinned.get('name')}'.")
    if entry.sha == provenance.get("commit"):
        return None
    return install(home, entry.name, host=host)


@dataclass(frozen=True)
class PluginCatalogRow:
    entry: CatalogEntry
    state: CatalogState
    update_available: bool = False

    @property
    def shown_state(self) -> str:
        return self.state.value + (UPDATE_AVAILABLE if self.update_available else "")

    def to_json(self) -> dict[str, Any]:
        return {**self.entry.to_json(), "state": self.shown_state}


def catalog_rows(home: Home) -> list[PluginCatalogRow]:
    enabled = set(ConfigStore(home).load().plugins.enabled)
    rows = []
    for entry in load_catalog(home).values():
        provenance = read_provenance(home.plugins / entry.name) if (home.plugins / entry.name).is_dir() else None
        if provenance is None:
            rows.append(PluginCatalogRow(entry, CatalogState.AVAILABLE))
            continue
        state = CatalogState.INSTALLED_ENABLED if entry.name in enabled else CatalogState.INSTALLED_DISABLED
        rows.append(PluginCatalogRow(entry, state, provenance.get("commit") != entry.sha))
    return rows
