"""A team user's tool pins, kept in the team's database so every replica holds them to the same
definitions (`tools.pins`: what a server's tools say they do may not change behind the user's back).

Pins are checked in the middle of rebuilding the tool surface, which cannot wait on a database: the
user's pins are read once when their servers start, and each change is written by `PinsWriter`
(in the user's task group) right after it is made, the newest one winning. Pins are not secret:
they are what servers publish about their tools.
"""

from __future__ import annotations

import contextlib
import json

import anyio

from hermes.team.store import TeamStore, TeamStoreError
from hermes.team.wakeups import Wakeups
from hermes.tools.pins import Pinned, pinned_servers

_RETRY = 1.0


class PinsWriter:
    """Writes a user's newest pins to the store, and whatever is left when their servers stop."""

    def __init__(self, store: TeamStore, user: str) -> None:
        self._store = store
        self._user = user
        self._newest: Pinned | None = None
        self._wakeups = Wakeups(self._write)
        self.run = self._wakeups.run

    def note(self, servers: Pinned) -> None:
        self._newest = servers
        self._wakeups.wake()

    async def _write(self) -> None:
        while (servers := self._newest) is not None:
            try:
                await self._store.set_pins(self._user, json.dumps({"schema": 1, "servers": servers}, sort_keys=True))
            except TeamStoreError:
                await anyio.sleep(_RETRY)  # the database is away: the pins stay in memory meanwhile
                continue
            if self._newest is servers:
                self._newest = None


class StorePins:
    """`PinRecords` over the pins read when the user's servers started."""

    def __init__(self, loaded: Pinned, writer: PinsWriter) -> None:
        self._pins = loaded
        self._writer = writer

    def load(self) -> Pinned:
        return self._pins

    def save(self, servers: Pinned) -> None:
        self._pins = {server: dict(tools) for server, tools in servers.items()}
        self._writer.note(self._pins)

    def locked(self) -> contextlib.AbstractContextManager[object]:
        # One session holds a user's pins on a replica, and it changes them on the event loop.
        return contextlib.nullcontext()


async def load_pins(store: TeamStore, user: str) -> Pinned:
    document = await store.pins(user)
    if document is None:
        return {}
    try:
        return pinned_servers(json.loads(document))
    except ValueError:
        return {}
