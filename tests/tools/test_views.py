"""Which tools declare an MCP Apps view, read from their `_meta` however a server wrote it."""

from __future__ import annotations

import mcp_types as types

from hermes.tools.views import ui_resource, view_hint


def tool(meta: object) -> types.Tool:
    return types.Tool.model_validate({"name": "show map", "inputSchema": {"type": "object"}, "_meta": meta})


def test_a_view_is_read_from_the_current_key_and_the_older_one_and_nothing_else() -> None:
    assert ui_resource(tool({"ui": {"resourceUri": "ui://map/view.html"}})) == "ui://map/view.html"
    assert ui_resource(tool({"ui/resourceUri": "ui://map/old.html"})) == "ui://map/old.html"
    for meta in ({"ui": {"resourceUri": "https://example.com/x.html"}}, {"ui": "ui://map"}, {"ui": {}},
                 {"ui": {"resourceUri": "ui://" + "x" * 3000}}, {"ui": {"resourceUri": 7}}, None):
        assert ui_resource(tool(meta)) is None, meta
    assert ui_resource(None) is None


def test_the_terminal_hint_names_the_dashboard_page_with_the_names_escaped() -> None:
    hint = view_hint("my server", tool({"ui": {"resourceUri": "ui://map/view.html"}}))
    assert hint is not None and "/servers/my%20server/tools/show%20map" in hint and "hermes dashboard" in hint
    assert view_hint("s", tool({})) is None
