"""What a room is asked and told (`RoomUI`), over the in-memory platform: the rules need no process."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest

from hermes.agent.approval import Decision
from hermes.gateway.fake import FakePlatform
from hermes.gateway.platform import Button, parts
from hermes.gateway.room_ui import RoomUI
from hermes.security.redact import Redactor
from hermes.tools.permissions import Permission, Verdict
from hermes.tools.surface import SurfaceTool
from tests.support import PATIENCE

pytestmark = pytest.mark.anyio
ROOM, ALICE, BOB = "!room", "@alice", "@bob"
SECRET = "sk-canary-4f1d2c3b5a6e7f8091a2b3c4"


def room(*, answer_seconds: float = PATIENCE, max_text: int = 4000) -> tuple[FakePlatform, RoomUI]:
    platform = FakePlatform(max_text=max_text)
    ui = RoomUI(platform, ROOM, Redactor([SECRET]), answer_seconds=answer_seconds)
    ui.asker = ALICE
    return platform, ui


async def answering(platform: FakePlatform, ui: RoomUI, replies: list[tuple[str, str]], ask: Any) -> Any:
    """Run `ask()`; each time a question waits, the next reply is given (and the asking goes on)."""
    result: list[Any] = []

    async def run() -> None:
        result.append(await ask())

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        for sender, text in replies:
            with anyio.fail_after(PATIENCE):
                while not ui.asking:
                    await anyio.sleep(0.01)
            await ui.reply(sender, text)
    return result[0]


def tool() -> SurfaceTool:
    return SurfaceTool("mcp__fs__delete", "fs", "tool", "delete", "Deletes.", {"type": "object"}, None)


async def test_an_approval_takes_the_word_its_number_or_an_unambiguous_start_from_the_asker_only() -> None:
    for reply, expected in (("always", Decision.ALWAYS), ("3", Decision.DENY), ("o", Decision.ONCE),
                            ("ALWAYS", Decision.ALWAYS)):
        platform, ui = room()
        verdict = Verdict(Permission.ASK, "it may change or delete things", ruled=False)
        decided = await answering(platform, ui, [(BOB, "once"), (ALICE, reply)],
                                  lambda ui=ui, verdict=verdict: ui.approve_tool(tool(), {"key": SECRET}, verdict))
        assert decided is expected
        assert platform.sent[0].choices == ("once", "always", "deny")
        assert SECRET not in platform.sent[0].text and "[REDACTED]" in platform.sent[0].text


async def test_a_reply_that_is_no_choice_is_asked_again() -> None:
    platform, ui = room()
    verdict = Verdict(Permission.ASK, "it asks", ruled=True)
    decided = await answering(platform, ui, [(ALICE, "perhaps"), (ALICE, "deny")],
                              lambda: ui.approve_tool(tool(), {}, verdict))
    assert decided is Decision.DENY
    assert any(sent.text.startswith("Please reply once, always, deny") for sent in platform.sent)


async def test_nobody_answering_in_time_means_no() -> None:
    platform, ui = room(answer_seconds=0.05)
    decided = await ui.approve_sampling("fs", types.CreateMessageRequestParams(messages=[], max_tokens=10))
    assert decided is Decision.DENY and platform.sent[-1].text == "No answer in time: not allowed."


async def test_a_form_is_asked_field_by_field_and_each_answer_checked() -> None:
    platform, ui = room()
    schema = {"type": "object", "required": ["name", "age"], "properties": {
        "name": {"type": "string", "title": "Your name"},
        "age": {"type": "integer"},
        "colour": {"type": "string", "enum": ["red", "green"], "default": "green"},
        "subscribe": {"type": "boolean"},
    }}
    params = types.ElicitRequestFormParams(message="Who are you?", requested_schema=schema)
    result = await answering(platform, ui, [(ALICE, "Ada"), (ALICE, "forty"), (ALICE, "40"), (ALICE, "-"),
                                            (ALICE, "yes")], lambda: ui.elicit("people", params))
    assert result.action == "accept"
    assert result.content == {"name": "Ada", "age": 40, "colour": "green", "subscribe": True}
    texts = [sent.text for sent in platform.sent]
    assert texts[0] == "MCP server 'people' asks: Who are you?"
    assert "'age' must be a number." in texts
    colour = next(sent for sent in platform.sent if sent.text.startswith("colour"))
    assert colour.choices == ("red", "green", "decline", "cancel") and "Reply - to keep green." in colour.text


async def test_a_form_can_be_declined_at_any_field() -> None:
    platform, ui = room()
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    params = types.ElicitRequestFormParams(message="Name?", requested_schema=schema)
    result = await answering(platform, ui, [(ALICE, "decline")], lambda: ui.elicit("people", params))
    assert result.action == "decline" and result.content is None


async def test_a_page_a_server_wants_opened_is_shown_as_a_link() -> None:
    platform, ui = room()
    params = types.ElicitRequestURLParams(message="Sign in", url="https://example.org/login?x=1",
                                         elicitation_id="e1")
    result = await answering(platform, ui, [(ALICE, "done")], lambda: ui.elicit("github", params))
    assert result.action == "accept"
    assert "https://example.org/login?x=1" in platform.sent[0].text and platform.sent[0].choices == ("done", "decline")


async def test_a_long_answer_is_sent_in_parts_with_the_buttons_on_the_last() -> None:
    platform, ui = room(max_text=100)
    text = "\n\n".join(f"Paragraph {n} " + "word " * 12 for n in range(6))
    await ui.say(text, (Button("ok", "q:1"),))
    assert len(platform.sent) > 1 and all(len(sent.text) <= 100 for sent in platform.sent)
    assert [sent.choices for sent in platform.sent] == [()] * (len(platform.sent) - 1) + [("ok",)]
    assert " ".join(" ".join(sent.text.split()) for sent in platform.sent) == " ".join(text.split())


def test_parts_cut_where_it_can_and_always_make_progress() -> None:
    assert parts("a" * 250, 100) == ["a" * 100, "a" * 100, "a" * 50]
    assert parts("short", 100) == ["short"]
    assert parts("   ", 100) == []
