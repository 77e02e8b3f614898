"""A streamed reply's call written as text is held back from the screen; everything else is shown,
in order, whatever the pieces the text arrives in."""

from __future__ import annotations

import pytest

from hermes.agent.held_call_text import HeldCallText
from hermes.agent.provider import ModelReply
from hermes.agent.text_calls import FENCED, TAGGED, text_calls

OFFERED = ["file_read", "terminal_run"]
CALL = '{"name": "file_read", "arguments": {"path": "notes.txt"}}'


async def _shown(text: str, pieces: int) -> tuple[str, str]:
    """What the screen showed while the reply streamed, and after it ended, for a reply cut into
    pieces of `pieces` characters; the loop's own recognition decides the end."""
    screen: list[str] = []

    async def sink(delta: str) -> None:
        screen.append(delta)

    held = HeldCallText(sink, OFFERED)
    for start in range(0, len(text), pieces):
        await held.feed(text[start:start + pieces])
    during = "".join(screen)
    reply = ModelReply(text)
    await held.end(recognised=text_calls(reply, OFFERED) is not reply)
    return during, "".join(screen)


SPLITS = pytest.mark.parametrize("pieces", [1, 2, 3, 7, 10_000])


@SPLITS
@pytest.mark.parametrize("reply", [
    f"```json\n{CALL}\n```",
    f"```\n{CALL}\n```",
    f"```tool_call\n{CALL}\n```",
    f"<tool_call>\n{CALL}\n</tool_call>",
    f"  {CALL}",
    f"```json\n{CALL}\n```\n```json\n{CALL.replace('file_read', 'terminal_run')}\n```",
])
@pytest.mark.anyio
async def test_a_call_written_as_text_never_reaches_the_screen(reply: str, pieces: int) -> None:
    assert await _shown(reply, pieces) == ("", "")


@SPLITS
@pytest.mark.anyio
async def test_the_words_before_a_call_are_shown_as_they_arrive(pieces: int) -> None:
    during, after = await _shown(f"I will read it.\n```json\n{CALL}\n```", pieces)
    assert during == after == "I will read it.\n"


@SPLITS
@pytest.mark.parametrize("reply", [
    "Here is the fix:\n```python\nprint('{x}')\n```\nThat is all.",
    "```json\n{\"status\": \"ok\", \"count\": 3}\n```\nThe file holds a count.",
    "```js\nconst a = {b: 1};\n```",
    "```\nplain block\n```",
    '{"status": "ok"}',
    '{"name": "rm_everything", "arguments": {}}',
    "<tool_call>not json</tool_call> and text",
    "a `tick`, two ``ticks`` and <tool no call> in prose {braces}",
    "",
])
@pytest.mark.anyio
async def test_every_other_reply_is_shown_whole_and_in_order(reply: str, pieces: int) -> None:
    assert (await _shown(reply, pieces))[1] == reply


@pytest.mark.anyio
async def test_code_that_is_not_a_call_streams_before_its_block_ends() -> None:
    during, _ = await _shown("Run:\n```bash\nls -la\nmore lines of the script\n" + "x" * 50, 4)
    assert during.startswith("Run:\n```bash\nls -la\nmore lines")


@SPLITS
@pytest.mark.anyio
async def test_a_call_beside_code_that_is_not_one_is_shown_whole_after_the_reply(pieces: int) -> None:
    # text_calls takes a reply's blocks only when every one is a call: this one stays an answer.
    reply = f"Start.\n```json\n{CALL}\n```\nthen\n```python\nx = 1\n```"
    during, after = await _shown(reply, pieces)
    assert during == "Start.\n" and after == reply


@pytest.mark.anyio
async def test_fences_pair_up_as_the_recogniser_pairs_them() -> None:
    # A code block's closing fence opens nothing: the JSON after it is prose, shown as it comes.
    reply = f"```text\nsee below\n```\n{CALL}\nmore"
    during, after = await _shown(reply, 5)
    assert during == after == reply


def _call_spans(reply: str) -> list[tuple[int, int]]:
    """Where the calls text_calls recognises lie in the reply (the whole reply when it is one)."""
    for pattern in (TAGGED, FENCED):
        found = [match.span() for match in pattern.finditer(reply)]
        if found:
            return found
    return [(len(reply) - len(reply.lstrip()), len(reply.rstrip()))]


@pytest.mark.parametrize("reply", [
    '{"a": 1} ```json\n' + CALL + "\n```",  # an object that is not a call, then a call
    '{"a": 1}\n<tool_call>' + CALL + '</tool_call>\n{"b": 2}',
    "```xml\n<tool_call>\n" + CALL + "\n</tool_call>\n```",  # text_calls looks inside code blocks
    "```\n<tool_call>" + CALL + "</tool_call>",
    '```json\n{"example": 1}\n<tool_call>' + CALL + "</tool_call>\n```",
    "{<tool_call>" + CALL + "</tool_call>",
    "{```" + CALL + "```",
    "{x} is a set.\n```json\n" + CALL + "\n```",
    "Use <tool_call> tags.\n```json\n" + CALL + "\n```",
    "<tool_call>not a call</tool_call> then ```json\n" + CALL + "\n```",  # recognised by nothing now
    '{"a": ' + "[" * 1000 + "]" * 1000 + "}",  # deeper than json.loads goes
    "```" + "\n" * 3000,
])
@pytest.mark.anyio
async def test_a_call_is_never_shown_and_anything_else_is_shown_whole_however_it_is_cut(reply: str) -> None:
    ends = set()
    for pieces in (1, 2, 3, 5, 7, len(reply)):
        _, after = await _shown(reply, pieces)
        ends.add(after)
        message = ModelReply(reply)
        if text_calls(message, OFFERED) is message:
            assert after == reply, pieces
        else:
            assert all(start >= len(after) for start, _ in _call_spans(reply)), (pieces, after)
    assert len(ends) == 1, ends  # what is shown in the end does not depend on the pieces


@pytest.mark.anyio
async def test_prose_that_is_not_an_object_streams_at_once() -> None:
    during, _ = await _shown("{x} is a set of one element, and more text follows " + "y" * 100, 3)
    assert during.startswith("{x} is a set of one element")
