"""A team user's OAuth records for upstream servers, kept sealed in the team's database.

The provider reads its records the moment it is built (before any await), so a user's records are
read from the database once, when their servers start, and kept here; each write goes to both. A
record is the same JSON hermes writes to a token file for one person (the token, when it expires,
the issuer's metadata, the resource it is for; or the client registration), so the same rules
apply: a record is used only for its resource and its issuer. Sealed with the team key, bound to
the user and to `<server>/token` or `<server>/client`.
"""

from __future__ import annotations

import json
from typing import Any

from hermes.team.sealing import Sealer
from hermes.team.store import TeamStore


class StoreTokenRecords:
    """`TokenRecords` for one user's one server, over the user's records read at start."""

    def __init__(self, store: TeamStore, sealer: Sealer, user: str, server: str, loaded: dict[str, dict[str, Any]]
                 ) -> None:
        self._store = store
        self._sealer = sealer
        self._user = user
        self._server = server
        self._loaded = loaded  # the user's opened records by name, shared by their servers

    def _name(self, kind: str) -> str:
        return f"{self._server}/{kind}"

    def token(self) -> dict[str, Any] | None:
        found = self._loaded.get(self._name("token"))
        return dict(found) if found is not None else None

    def client(self) -> dict[str, Any] | None:
        found = self._loaded.get(self._name("client"))
        return dict(found) if found is not None else None

    async def save_token(self, record: dict[str, Any]) -> None:
        await self._save("token", record)

    async def save_client(self, record: dict[str, Any]) -> None:
        await self._save("client", record)

    async def _save(self, kind: str, record: dict[str, Any]) -> None:
        name = self._name(kind)
        self._loaded[name] = dict(record)
        await self._store.set_oauth_record(self._user, name, self._sealer.seal(self._user, name, json.dumps(record)))


async def load_records(store: TeamStore, sealer: Sealer, user: str) -> dict[str, dict[str, Any]]:
    """A user's OAuth records, opened (one that does not open, or is not a JSON object, is left out)."""
    opened: dict[str, dict[str, Any]] = {}
    for name, sealed in (await store.oauth_records(user)).items():
        value = sealer.open(user, name, sealed)
        if value is None:
            continue
        try:
            record = json.loads(value)
        except ValueError:
            continue
        if isinstance(record, dict):
            opened[name] = record
    return opened
