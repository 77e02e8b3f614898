"""Which transcript each room's conversation is saved in (`HERMES_HOME/gateway/rooms.json`), so that a
room closed when idle, or a gateway restarted, takes up the same conversation on its next message."""

from __future__ import annotations

import json

from hermes.files import atomic_write, file_lock, private_dir, read_json_object
from hermes.home import Home

MAX_BYTES = 4_000_000
MAX_ROOMS = 10_000  # the oldest entries go first past this


class RoomLog:
    def __init__(self, home: Home) -> None:
        self._path = home.gateway / "rooms.json"

    def transcript_of(self, room: tuple[str, str]) -> str | None:
        found = (read_json_object(self._path, MAX_BYTES, follow_symlinks=False) or {}).get(_key(room))
        return found if isinstance(found, str) else None

    def remember(self, room: tuple[str, str], transcript_id: str) -> None:
        """Blocking: call it off the event loop. A failure to write loses only the resume, never the turn."""
        try:
            private_dir(self._path.parent)
            with file_lock(self._path):
                data = read_json_object(self._path, MAX_BYTES, follow_symlinks=False) or {}
                if data.get(_key(room)) == transcript_id:
                    return
                data.pop(_key(room), None)
                data[_key(room)] = transcript_id
                kept = dict(list(data.items())[-MAX_ROOMS:])
                atomic_write(self._path, json.dumps(kept, ensure_ascii=False, indent=1))
        except OSError:
            return


def _key(room: tuple[str, str]) -> str:
    return f"{room[0]}:{room[1]}"
