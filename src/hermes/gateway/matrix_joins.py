"""Where a room's new messages start on Matrix: in a room the bot has just joined, and after a
sync that left some out.

A homeserver's first batch for a room the bot joined is the room's latest events (Synapse marks
it `limited`). What precedes the bot's own membership in it is the room's history, not a message
for the bot; the last membership counts (a bot let back in after a kick has its older join in the
same batch). A batch without it holds only events that came after the join, and the events between
are read back from the batch page by page until the bot's membership: a bounded number of pages,
within a bounded time, because a homeserver may stop to fetch older events from other servers and
every other room's messages wait meanwhile. A sync whose batch for a room the bot is in is
`limited` (more came since the last one than a batch holds) is read back the same way, to where
the last sync ended.

A membership is found from the event's own JSON, whether nio could parse the event or not: a join
nio cannot read must still end the reading back, or the room's history would be answered.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

LOG = logging.getLogger("hermes.gateway.matrix")
GAP_PAGES, GAP_PAGE = 4, 50  # events read back at most: 200
GAP_SECONDS = 20.0
CATCH_UP = 8  # messages answered at most from one catch-up: the newest (a room keeps 8 waiting)


def own_membership(event: Any, user_id: str) -> bool:
    """Whether `event` is a membership event of the bot's own (a join, a leave, an invite, …)."""
    source = getattr(event, "source", None)
    return isinstance(source, dict) and source.get("type") == "m.room.member" and source.get("state_key") == user_id


def after_own_membership(events: list[Any], user_id: str) -> list[Any] | None:
    """The events after the bot's last membership in `events`; None when it has none there."""
    for index in range(len(events) - 1, -1, -1):
        if own_membership(events[index], user_id):
            return events[index + 1:]
    return None


async def read_back(client: Any, room_id: str, timeline: Any, *, since: str | None) -> list[Any]:
    """The events a `limited` batch left out, oldest first: back from the batch to `since` (where the
    last sync ended), and never past a membership of the bot's own (before its join is history; a
    bot that only changed its name loses what came before that, never the other way round). What
    lies further back than the bounds allow is left unanswered, and the log says so."""
    import nio

    found: list[Any] = []
    token = timeline.prev_batch
    if not timeline.limited or not token:
        if timeline.limited:
            LOG.warning("Matrix: %s gave no place to read back from; the messages before the latest are not "
                        "answered", room_id)
        return found
    with anyio.move_on_after(GAP_SECONDS):
        for _ in range(GAP_PAGES):
            page = await client.room_messages(room_id, start=token, end=since, direction=nio.MessageDirection.back,
                                              limit=GAP_PAGE)
            if not isinstance(page, nio.RoomMessagesResponse):
                LOG.warning("Matrix: the messages of %s that a sync left out could not be read (%s); they are "
                            "not answered", room_id, page.message)
                return found[::-1]
            for event in page.chunk[:GAP_PAGE]:  # newest first; a page is no longer than asked for
                if own_membership(event, client.user_id):
                    return found[::-1]
                found.append(event)
            if not page.end or page.end == token:
                return found[::-1]  # the start of the room, or where the last sync ended
            token = page.end  # an empty page with a place to go on from: the homeserver filtered it
    LOG.warning("Matrix: more than %d events or %.0f s of reading back in %s; the older messages a sync left out "
                "are not answered", GAP_PAGES * GAP_PAGE, GAP_SECONDS, room_id)
    return found[::-1]


def newest_messages(events: list[Any], user_id: str, room_id: str) -> list[Any]:
    """Events that came while the bot was not looking, with at most `CATCH_UP` messages for it: the
    newest, as a room's queue of waiting messages would otherwise keep the oldest and drop the rest."""
    import nio

    messages = [index for index, event in enumerate(events)
                if isinstance(event, nio.RoomMessageText) and getattr(event, "sender", None) != user_id]
    if len(messages) <= CATCH_UP:
        return events
    dropped = set(messages[:-CATCH_UP])
    LOG.warning("Matrix: %d messages came in %s while the bot was not looking; the newest %d are answered",
                len(messages), room_id, CATCH_UP)
    return [event for index, event in enumerate(events) if index not in dropped]
