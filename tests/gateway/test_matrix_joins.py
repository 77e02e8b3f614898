"""Reading back to the bot's join on Matrix, against what a broken or hostile homeserver answers.

The pages are real matrix-nio responses, parsed by nio from the JSON a homeserver sends; only the
client's `room_messages` is played here (the real homeserver's behaviour is platforms/test_matrix.py).
"""

from __future__ import annotations

import math
from itertools import count
from types import SimpleNamespace
from typing import Any

import anyio
import nio
import pytest

from hermes.gateway import matrix_joins
from hermes.gateway.matrix_joins import (
    CATCH_UP,
    GAP_PAGE,
    GAP_PAGES,
    after_own_membership,
    newest_messages,
    read_back,
)

pytestmark = pytest.mark.anyio
BOT, ALICE, ROOM = "@hermes:example.org", "@alice:example.org", "!room:example.org"
_ids = count()


def text(body: str, sender: str = ALICE) -> dict[str, Any]:
    return {"type": "m.room.message", "sender": sender, "event_id": f"$m{next(_ids)}", "origin_server_ts": 1,
            "content": {"msgtype": "m.text", "body": body}}


def membership(state: str, *, content: Any = None) -> dict[str, Any]:
    return {"type": "m.room.member", "sender": BOT, "state_key": BOT, "event_id": f"$j{next(_ids)}",
            "origin_server_ts": 1, "content": {"membership": state} if content is None else content}


def page(events: list[dict[str, Any]], end: str | None) -> Any:
    """A /messages answer, newest first, as nio parses it."""
    answer = {"chunk": events, "start": "s", **({"end": end} if end else {})}
    return nio.RoomMessagesResponse.from_dict(answer, ROOM)


class Homeserver:
    """Answers the bot's reading back with the pages given, in turn (the last one again after them)."""

    def __init__(self, *pages: Any) -> None:
        self.pages, self.asked = list(pages), 0
        self.ends: list[str | None] = []
        self.user_id = BOT

    async def room_messages(self, room_id: str, *, start: str, end: str | None, direction: Any, limit: int) -> Any:
        assert room_id == ROOM and direction is nio.MessageDirection.back and limit == GAP_PAGE
        self.ends.append(end)
        self.asked += 1
        return self.pages[min(self.asked, len(self.pages)) - 1]


BATCH = SimpleNamespace(limited=True, prev_batch="t0")


def bodies(events: list[Any]) -> list[str]:
    return [event.body for event in events if isinstance(event, nio.RoomMessageText)]


async def test_reading_back_stops_at_the_join_on_a_later_page_and_keeps_the_order() -> None:
    homeserver = Homeserver(page([text("three"), text("two")], "t1"), page([text("one"), membership("join"),
                                                                            text("history")], "t2"))
    assert bodies(await read_back(homeserver, ROOM, BATCH, since=None)) == ["one", "two", "three"]


async def test_a_join_nio_cannot_read_still_ends_the_reading_back() -> None:
    unreadable = membership("join", content={"membership": 7})  # nio makes it a BadEvent
    found = page([text("new"), unreadable, text("history")], "t1")
    assert not isinstance(found.chunk[1], nio.RoomMemberEvent)
    assert bodies(await read_back(Homeserver(found), ROOM, BATCH, since=None)) == ["new"]


async def test_a_homeserver_that_never_ends_is_read_within_the_bounds() -> None:
    floods = [page([text(f"m{index}") for index in range(GAP_PAGE * 40)], f"t{turn}")  # far more than asked
              for turn in range(1, 10)]
    homeserver = Homeserver(*floods)
    found = await read_back(homeserver, ROOM, BATCH, since=None)
    assert len(found) == GAP_PAGES * GAP_PAGE and homeserver.asked == GAP_PAGES
    going_round = Homeserver(page([text("x")], "same"))  # the same place to go on from, again and again
    assert bodies(await read_back(going_round, ROOM, BATCH, since=None)) == ["x", "x"]
    assert going_round.asked == 2


@pytest.mark.parametrize("since", [None, "s0"])
async def test_a_filtered_page_is_read_past_and_an_error_keeps_what_was_read(since: str | None) -> None:
    homeserver = Homeserver(page([], "t1"), page([text("kept")], "t2"),
                            nio.RoomMessagesError.from_dict({"errcode": "M_FORBIDDEN", "error": "no"}, ROOM))
    assert bodies(await read_back(homeserver, ROOM, BATCH, since=since)) == ["kept"]
    assert homeserver.asked == 3


async def test_a_homeserver_that_does_not_answer_holds_the_other_rooms_for_a_bounded_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Silent(Homeserver):
        async def room_messages(self, room_id: str, *, start: str, end: str | None, direction: Any,
                                limit: int) -> Any:
            self.asked += 1
            if self.asked > 1:
                await anyio.sleep(math.inf)  # as nio does against a homeserver that stops answering
            return page([text("read before it stopped")], "t1")

    monkeypatch.setattr(matrix_joins, "GAP_SECONDS", 0.01)
    assert bodies(await read_back(Silent(), ROOM, BATCH, since=None)) == ["read before it stopped"]


async def test_a_batch_that_is_not_limited_reads_nothing_back() -> None:
    homeserver = Homeserver(page([text("history")], None))
    for batch in (SimpleNamespace(limited=False, prev_batch="t0"), SimpleNamespace(limited=True, prev_batch=None)):
        assert await read_back(homeserver, ROOM, batch, since="s0") == []
    assert homeserver.asked == 0


async def test_a_sync_that_left_messages_out_is_read_back_to_where_the_last_one_ended() -> None:
    homeserver = Homeserver(page([text("two"), text("one")], "t1"), page([], None))
    assert bodies(await read_back(homeserver, ROOM, BATCH, since="s0")) == ["one", "two"]
    assert homeserver.ends == ["s0", "s0"]


def test_the_last_membership_of_the_bot_s_own_starts_what_is_new() -> None:
    events = page([text("new"), membership("join"), membership("invite"), text("history"),
                   membership("leave"), text("older"), membership("join")], None).chunk[::-1]
    assert bodies(after_own_membership(events, BOT) or []) == ["new"]
    assert after_own_membership(page([text("a")], None).chunk, BOT) is None


def test_after_a_join_the_newest_messages_are_answered_not_the_oldest() -> None:
    events = page([text(f"m{index}") for index in range(CATCH_UP + 5)][::-1], None).chunk[::-1]
    own = page([text("mine", sender=BOT)], None).chunk
    assert bodies(newest_messages(events + own, BOT, ROOM)) == [f"m{index}" for index in range(5, CATCH_UP + 5)] + \
        ["mine"]
    assert newest_messages(events[:CATCH_UP], BOT, ROOM) == events[:CATCH_UP]
