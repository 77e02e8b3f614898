"""What a model gets from a tool result: redacted, bounded, and never silently cut.

A long result keeps its head and tail for the model; the whole of it goes to a 0600 file whose
path the model is told, in a folder bounded in size (oldest out first); a server's
`maxResultSizeChars` hint is honoured; media files are bounded the same way.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import mcp_types as types

from hermes.home import Home
from hermes.security.redact import Redactor
from hermes.tools.results import MAX_BLOCKS, MIN_BUDGET, ResultFiles, budget_of, clean_result, render_result
from tests.support import stdio_entry, write_config


def _files(tmp_path: Path, **limits: int) -> ResultFiles:
    return ResultFiles(tmp_path / "cache", tmp_path / "results", **limits)


def test_a_result_of_too_many_blocks_is_cut_once_and_says_how_many_were_left_out(tmp_path: Path) -> None:
    blocks: list[types.ContentBlock] = [types.TextContent(type="text", text="a")] * (MAX_BLOCKS + 50)
    raw = clean_result(types.CallToolResult(content=blocks), Redactor())
    text = render_result(raw, files=_files(tmp_path), server="box").text
    assert text.endswith("\n[50 more content blocks omitted by hermes]")
    assert text.count("omitted by hermes") == 1 and text.count("a\n") == MAX_BLOCKS


def test_a_long_result_keeps_head_and_tail_and_the_whole_goes_to_a_private_file(tmp_path: Path) -> None:
    whole = "HEAD" + "m" * 50_000 + "TAIL"
    rendered = render_result(types.CallToolResult(content=[types.TextContent(type="text", text=whole)]),
                             files=_files(tmp_path), server="box", budget=5_000)
    text = rendered.text
    assert len(text) <= 5_000 and text.startswith("HEAD") and text.endswith("TAIL")
    assert f"characters omitted by hermes; the whole result ({len(whole)} characters) is in" in text
    [saved] = (tmp_path / "results").iterdir()
    assert str(saved) in text and saved.read_text() == whole
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_the_whole_results_folder_is_bounded_oldest_first(tmp_path: Path) -> None:
    files = _files(tmp_path, spill_limit=250_000)
    for index in range(5):
        files.cut(f"{index}" * 100_000, "box", budget=MIN_BUDGET)
        for old, path in enumerate(sorted((tmp_path / "results").iterdir())):
            os.utime(path, (old, old))  # deterministic ages, oldest written first
    kept = sorted(p.read_text()[0] for p in (tmp_path / "results").iterdir())
    assert sum(p.stat().st_size for p in (tmp_path / "results").iterdir()) <= 250_000
    assert "4" in kept and "0" not in kept


def test_media_is_saved_once_and_bounded(tmp_path: Path) -> None:
    import base64

    files = _files(tmp_path, media_limit=3_000)
    for index in range(5):
        data = base64.b64encode(bytes([index]) * 1_000).decode()
        assert "saved to" in files.save_blob(data, "image/png", "box")
    assert sum(p.stat().st_size for p in (tmp_path / "cache").iterdir()) <= 3_000


def test_a_servers_max_result_size_hint_is_honoured_within_limits() -> None:
    def tool(meta: dict[str, object]) -> types.Tool:
        return types.Tool(name="t", input_schema={"type": "object"}, _meta=meta)  # type: ignore[call-arg]

    assert budget_of(tool({"anthropic/maxResultSizeChars": 20_000})) == 20_000
    assert budget_of(tool({"maxResultSizeChars": 5})) == MIN_BUDGET
    assert budget_of(tool({"maxResultSizeChars": "big"})) == budget_of(None)


def test_a_session_tells_the_model_where_the_rest_of_a_big_result_is(home: Home) -> None:
    import anyio

    from hermes.session.core import Session

    write_config(home, {"mcp_servers": {"box": stdio_entry()}})

    async def run() -> str:
        async with Session(home) as session:
            return (await session.call("mcp__box__big", {"size": 2_500_000})).for_model()

    text = anyio.run(run)
    assert len(text) <= 2_000_000 and "\naaaa" in text[:200] and text.endswith("b")
    [saved] = home.results.iterdir()
    assert str(saved) in text and len(saved.read_text()) == 2_500_000


def test_a_server_that_floods_its_log_cannot_fill_the_disk(home: Home) -> None:
    import anyio

    from hermes.files import MAX_LOG_BYTES
    from hermes.session.core import Session
    from tests.support import fast_entry, wait_until

    write_config(home, {"mcp_servers": {"flood": fast_entry("--stderr-flood", "40")}})

    async def run() -> None:
        async with Session(home) as session:
            assert session.snapshots()["flood"].connected
            await wait_until(lambda: "flood done" in home.server_log("flood").read_text(errors="replace"))

    anyio.run(run)
    logs = list(home.logs.glob("mcp-flood.log*"))
    assert sum(p.stat().st_size for p in logs) <= 2 * MAX_LOG_BYTES + 64 * 1024, [p.stat().st_size for p in logs]
