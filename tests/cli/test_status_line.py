"""The chat's live status line: drawn in place, out of the way of questions and finished lines."""

from __future__ import annotations

import asyncio
import io

import pytest

from hermes.cli.status_line import StatusLine


def test_finished_lines_scroll_above_and_questions_get_a_clean_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "64")

    async def scenario() -> str:
        out = io.StringIO()
        line = StatusLine(out)
        line.started("a", "mcp__box__slow", '{"seconds": 600, "marker": "/a/very/long/path/indeed"}')
        line.started("b", "mcp__box__echo")
        line.advanced("b", "3/10 copying")
        with line.paused():
            out.write("<question>\n")  # an answered prompt ends its line
        line.write_above("  ✓ mcp__box__echo (0.1 s)")
        line.finished("b")
        line.finished("a")
        return out.getvalue()

    text = asyncio.run(scenario())
    frames = text.split("\r\x1b[K")
    assert all(len(frame.split("\n")[-1]) <= 63 for frame in frames), "a frame is wider than the terminal"
    assert frames[1].startswith("⋯ mcp__box__slow 0.0 s")
    assert any("mcp__box__echo 0.0 s · 3/10 copying" in frame for frame in frames)
    # The question is written on an erased line, the finished line above the redrawn status,
    # and nothing is left on the screen once every tool has finished.
    assert "\r\x1b[K<question>\n\r\x1b[K⋯" in text
    assert "\r\x1b[K  ✓ mcp__box__echo (0.1 s)\n\r\x1b[K⋯" in text
    assert text.endswith("\r\x1b[K")
