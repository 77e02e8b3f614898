"""What `serve --http` keeps of its SSE streams so a client that lost one can pick it up again.

A client whose connection drops in the middle of a long call reconnects with `Last-Event-ID` and
gets the rest of that stream instead of losing the call's result (Streamable HTTP resumability).
The SDK's transport numbers the events and asks a store to keep them; this one keeps the newest
`MAX_EVENTS` in memory, oldest dropped first, so a busy or abandoned stream cannot grow `serve`.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

MAX_EVENTS = 4096
RETRY_MS = 1000  # how soon a client that lost its stream should come back (the SSE `retry` field)


class ReplayStore(EventStore):
    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self._max = max_events
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._numbers = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._numbers))
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._max:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        known = self._events.get(last_event_id)
        if known is None:
            return None  # never seen, or dropped as too old: the client starts over
        stream = known[0]
        after = False
        for event_id, (stream_id, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
            elif after and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream
