"""What a model gets from a tool result: redacted, and cut to a bounded number of content blocks."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types

from hermes.security.redact import Redactor
from hermes.tools.results import MAX_BLOCKS, clean_result, render_result


def test_a_result_of_too_many_blocks_is_cut_once_and_says_how_many_were_left_out(tmp_path: Path) -> None:
    blocks: list[types.ContentBlock] = [types.TextContent(type="text", text="a")] * (MAX_BLOCKS + 50)
    raw = clean_result(types.CallToolResult(content=blocks), Redactor())
    text = render_result(raw, cache=tmp_path, server="box").text
    assert text.endswith("\n[50 more content blocks omitted by hermes]")
    assert text.count("omitted by hermes") == 1 and text.count("a\n") == MAX_BLOCKS
