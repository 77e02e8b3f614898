"""What `serve --http` keeps of its SSE streams for a client that reconnects (`live/replay.py`)."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp.server.streamable_http import EventMessage

from hermes.live.replay import ReplayStore

pytestmark = pytest.mark.anyio


def _note(n: int) -> types.JSONRPCNotification:
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"n": n})


async def test_a_reconnecting_client_gets_the_rest_of_its_own_stream_only() -> None:
    store = ReplayStore()
    priming = await store.store_event("a", None)
    first = await store.store_event("a", _note(1))
    await store.store_event("b", _note(99))
    await store.store_event("a", _note(2))
    replayed: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        replayed.append(event)

    assert await store.replay_events_after(priming, send) == "a"
    assert [e.message.params for e in replayed] == [{"n": 1}, {"n": 2}]  # type: ignore[union-attr]
    replayed.clear()
    assert await store.replay_events_after(first, send) == "a"
    assert [e.message.params for e in replayed] == [{"n": 2}]  # type: ignore[union-attr]


async def test_the_store_keeps_only_the_newest_events_and_forgets_unknown_ids() -> None:
    store = ReplayStore(max_events=3)
    oldest = await store.store_event("a", _note(0))
    for n in range(1, 5):
        await store.store_event("a", _note(n))

    async def send(event: EventMessage) -> None:
        raise AssertionError("nothing should be replayed")

    assert await store.replay_events_after(oldest, send) is None
    assert await store.replay_events_after("no-such-event", send) is None
