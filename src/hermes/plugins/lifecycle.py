"""enable / disable / list / update / catalog: everything after (or instead of) an install."""

from __future__ import annotations

from typing import Any

from hermes.apps.availability import check_availability
from hermes.apps.host import Host
from hermes.config.edit import set_plugin_enabled
from hermes.config.store import ConfigStore
from hermes.errors import HermesError
from hermes.home import Home
from hermes.plugins.catalog import load_catalog
from hermes.plugins.install import InstallResult, PluginInstallError, install, read_provenance, recover_if_idle
from hermes.plugins.manifest import load_plugin


class NoSuchPlugin(HermesError):
    exit_code = 3

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"No plugin named '{name}' is installed (see `hermes plugins list`).")


def installed_names(home: Home) -> list[str]:
    if not home.plugins.is_dir():
        return []
    return sorted(p.name for p in home.plugins.iterdir() if p.is_dir() and not p.name.startswith("."))


def set_enabled(home: Home, name: str, enabled: bool) -> bool:
    if enabled:
        if not (home.plugins / name).is_dir():
            raise NoSuchPlugin(name)
        load_plugin(home.plugins / name, home.plugin_data)  # refuse to enable what would not load
    store = ConfigStore(home)
    if not enabled and name not in store.load().plugins.enabled and not (home.plugins / name).is_dir():
        raise NoSuchPlugin(name)
    with store.edit() as doc:
        return set_plugin_enabled(doc, name, enabled)


def list_plugins(home: Home, host: Host) -> list[dict[str, Any]]:
    """The stable rows of `hermes plugins list --json` (documented in the README)."""
    recover_if_idle(home)
    enabled = set(ConfigStore(home).load().plugins.enabled)
    rows: list[dict[str, Any]] = []
    for name in installed_names(home):
        provenance = read_provenance(home.plugins / name) or {}
        row: dict[str, Any] = {
            "name": name,
            "version": None,
            "title": None,
            "enabled": name in enabled,
            "source": provenance.get("location"),
            "source_kind": provenance.get("source"),
            "commit": provenance.get("commit"),
            "catalog_pin": (provenance.get("catalog") or {}).get("sha"),
            "installed_at": provenance.get("installed_at"),
            "servers": [],
            "error": None,
        }
        try:
            plugin = load_plugin(home.plugins / name, home.plugin_data)
        except HermesError as exc:
            row["error"] = str(exc)
            rows.append(row)
            continue
        row["version"], row["title"] = plugin.manifest.version, plugin.manifest.title
        for server in sorted(plugin.servers):
            declaration = plugin.declarations.get(server)
            if declaration is None:
                row["servers"].append({"name": server, "availability": "no_requirements", "version": None,
                                       "path": None})
                continue
            availability = check_availability(declaration, host)
            row["servers"].append({"name": server, "availability": availability.state,
                                   "version": availability.version, "path": availability.path})
        rows.append(row)
    return rows


def update(home: Home, name: str, host: Host) -> InstallResult | None:
    """Re-pin a catalog install to the catalog's current commit (never `git pull`); None if current."""
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


def catalog_rows(home: Home) -> list[dict[str, Any]]:
    enabled = set(ConfigStore(home).load().plugins.enabled)
    rows = []
    for entry in load_catalog(home).values():
        provenance = read_provenance(home.plugins / entry.name) if (home.plugins / entry.name).is_dir() else None
        if provenance is None:
            state = "available"
        else:
            state = "installed (enabled)" if entry.name in enabled else "installed (disabled)"
            if provenance.get("commit") != entry.sha:
                state += ", update available"
        rows.append({**entry.to_json(), "state": state})
    return rows
