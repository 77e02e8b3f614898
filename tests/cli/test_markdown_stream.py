"""The streamed answer on a colour terminal: text shows as it comes, the rendered block takes its
place when the block is complete, and an answer cut short leaves nothing behind for the next one."""

from __future__ import annotations

import io

import pytest

from hermes.cli.markdown_stream import MarkdownStream


@pytest.fixture(autouse=True)
def _terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("LINES", "24")


def test_text_shows_as_it_comes_and_the_rendered_block_replaces_it() -> None:
    out = io.StringIO()
    stream = MarkdownStream(out)
    stream.feed("Hello **wor")
    assert out.getvalue() == "Hello **wor"  # shown at once, plain
    stream.feed("ld**\n\nNext")
    after = out.getvalue()
    replaced = after[len("Hello **wor"):]
    assert replaced.startswith("\r\x1b[J")  # the plain line erased, the rendered block in its place
    assert "Hello world" in replaced and "**" not in replaced.split("\x1b[J", 1)[1].split("Next")[0]
    assert after.endswith("\nNext")  # the next block's start shows at once, after the blank line
    stream.finish()
    assert "Next" in out.getvalue().rsplit("\x1b[J", 1)[1]


def test_a_block_taller_than_the_screen_stays_plain() -> None:
    out = io.StringIO()
    stream = MarkdownStream(out)
    tall = "\n".join(f"line {n}" for n in range(30))
    stream.feed(tall)
    stream.feed("\n\n")
    assert "\x1b[" not in out.getvalue().replace("\x1b[0m", "")  # nothing erased: it scrolled off


def test_an_answer_cut_short_is_not_printed_before_the_next_one() -> None:
    out = io.StringIO()
    stream = MarkdownStream(out)
    stream.feed("A first paragraph that was cut")
    stream.abandon()
    assert out.getvalue() == "A first paragraph that was cut\n"
    stream.feed("The next answer.")
    stream.finish()
    assert out.getvalue().count("A first paragraph") == 1
    assert "The next answer." in out.getvalue()
