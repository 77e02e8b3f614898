"""The one thing the SQL store needs of a database: run a statement, fetch rows, migrate.

Statements are written once, with `%s` placeholders; a dialect that spells them otherwise
translates. Errors come out as `TeamStoreError` (`Conflict` for a unique key already taken), with
the database named by host and name only: a URL's password never reaches a message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from hermes.team.migrations import Migration
from hermes.team.store import TeamStoreError


class Conflict(TeamStoreError):
    """A row with that key is already there."""


class Database(Protocol):
    dialect: str

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; how many rows it changed."""
        ...

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    async def migrate(self, migrations: Sequence[Migration]) -> int:
        """Apply the migrations not applied yet, under a lock other replicas wait on; the version."""
        ...

    async def close(self) -> None: ...
