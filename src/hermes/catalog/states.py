"""Where a catalog entry stands on this machine (the MCP catalog's and the plugin catalog's rows)."""

from __future__ import annotations

from enum import StrEnum


class CatalogState(StrEnum):
    AVAILABLE = "available"
    INSTALLED_ENABLED = "installed (enabled)"
    INSTALLED_DISABLED = "installed (disabled)"
    ENABLED = "enabled"  # a remote OAuth server that is installed and authorized
    CUSTOM_ENABLED = "custom (enabled)"
    CUSTOM_DISABLED = "custom (disabled)"


DISABLED = frozenset({CatalogState.INSTALLED_DISABLED, CatalogState.CUSTOM_DISABLED})
UPDATE_AVAILABLE = ", update available"
