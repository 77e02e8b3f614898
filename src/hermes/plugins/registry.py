"""The plugins a session uses: the enabled names in config.yaml, read from HERMES_HOME/plugins/."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes.config.model import HermesConfig
from hermes.errors import HermesError
from hermes.home import Home

if TYPE_CHECKING:
    from hermes.plugins.manifest import Plugin


@dataclass
class LoadedPlugins:
    """The enabled plugins that loaded, and why the others did not."""

    plugins: list[Plugin] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_enabled(home: Home, config: HermesConfig) -> LoadedPlugins:
    """Each enabled plugin loads whole or not at all; one broken plugin never stops the others."""
    loaded = LoadedPlugins()
    if not config.plugins.enabled:
        return loaded  # `hermes mcp list` stays fast: nothing below is imported
    from hermes.plugins.install import recover_if_idle
    from hermes.plugins.manifest import load_plugin

    recover_if_idle(home)
    for name in config.plugins.enabled:
        root = home.plugins / name
        if not root.is_dir():
            loaded.errors.append(f"Plugin '{name}' is enabled but not installed ({root} is missing).")
            continue
        try:
            plugin = load_plugin(root, home.plugin_data)
        except HermesError as exc:
            loaded.errors.append(f"Plugin '{name}' was not loaded: {exc}")
            continue
        if plugin.name != name:
            loaded.errors.append(f"Plugin '{name}' was not loaded: its plugin.json names it '{plugin.name}'.")
            continue
        loaded.plugins.append(plugin)
        loaded.warnings.extend(plugin.warnings)
    return loaded
