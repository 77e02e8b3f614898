"""Which transcript each room's conversation is saved in (`HERMES_HOME/gateway/rooms.json`), so that a
room closed when idle, or a gateway restarted, takes up the same conversation on its next message."""

from __future__ import annotations

import logging

from hermes.errors import HermesError
from hermes.files import private_dir
from hermes.gateway.records import locked_record, read_record
from hermes.home import Home

LOG = logging.getLogger("hermes.gateway")

MAX_BYTES = 4_000_000
MAX_ROOMS = 10_000  # the oldest entries go first past this


class RoomLog:
    def __init__(self, home: Home) -> None:
        self._path = home.gateway / "rooms.json"

    def transcript_of(self, room: tuple[str, str]) -> str | None:
        try:
            found = read_record(self._path, MAX_BYTES).get(_key(room))
        except HermesError:
            return None
        return found if isinstance(found, str) else None

    def remember(self, room: tuple[str, str], transcript_id: str) -> None:
        """Blocking: call it off the event loop (the caller calls it when the room's transcript changed). A
        failure to write loses only the resume, never the turn."""
        try:
            private_dir(self._path.parent)
            with locked_record(self._path, MAX_BYTES) as data:
                data.pop(_key(room), None)
                data[_key(room)] = transcript_id
                for old in list(data)[:-MAX_ROOMS]:
                    del data[old]
        except (HermesError, OSError) as exc:
            LOG.warning("gateway: which transcript a room uses was not kept: %s", exc)


def _key(room: tuple[str, str]) -> str:
    return f"{room[0]}:{room[1]}"
