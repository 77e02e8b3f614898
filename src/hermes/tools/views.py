"""MCP Apps views: a tool that declares a `ui://` page to show with its result.

Only a browser can show one (`hermes dashboard`); everywhere else hermes says the view exists and
where to open it, so the user knows the tool has more to show than its text.
"""

from __future__ import annotations

from urllib.parse import quote

import mcp_types as types

MAX_URI = 2_000


def ui_resource(tool: types.Tool | None) -> str | None:
    """The `ui://` view a tool declares in `_meta.ui.resourceUri` (older servers:
    `_meta["ui/resourceUri"]`), or None."""
    meta = tool.meta if tool is not None else None
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else meta.get("ui/resourceUri")
    return uri if isinstance(uri, str) and uri.startswith("ui://") and len(uri) <= MAX_URI else None


def view_hint(server: str, tool: types.Tool | None) -> str | None:
    """The sentence a terminal shows after a call of a tool with a view; None without one."""
    uri = ui_resource(tool)
    if uri is None or tool is None:
        return None
    page = f"/servers/{quote(server, safe='')}/tools/{quote(tool.name, safe='')}"
    return (f"{tool.name} has an interactive view ({uri}) that a terminal cannot show: run `hermes dashboard` "
            f"and open {page} to run it there and see it.")
