"""The embedded team database: one SQLite file in HERMES_HOME, for a gateway on one machine.

sqlite3 blocks, so each statement runs in a worker thread the caller awaits (never on the event
loop); one connection behind a lock keeps statements in order. The file is private (0600): it
holds key hashes and sealed credentials.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from hermes.team.database import Conflict
from hermes.team.migrations import VERSION_TABLE, Migration
from hermes.team.store import TeamStoreError

T = TypeVar("T")


class SqliteDatabase:
    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            os.close(fd)
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
            connection.execute("PRAGMA journal_mode=WAL")
            # WAL's usual pairing: a commit survives hermes being killed (what an acknowledged call
            # needs); only a power cut may take the last moments back, without corrupting the file.
            connection.execute("PRAGMA synchronous=NORMAL")
            self._connection = connection
        return self._connection

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                try:
                    return work(self._connect())
                except sqlite3.IntegrityError as exc:
                    raise Conflict(f"the team database ({self.path}) already has that: {exc}") from None
                except sqlite3.Error as exc:
                    raise TeamStoreError(f"the team database ({self.path}) failed: {exc}") from None
                except OSError as exc:
                    raise TeamStoreError(f"the team database ({self.path}) cannot be opened: "
                                         f"{exc.strerror or exc}") from None

        return await anyio.to_thread.run_sync(locked)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return await self._run(lambda db: db.execute(sql.replace("%s", "?"), tuple(params)).rowcount)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._run(lambda db: list(db.execute(sql.replace("%s", "?"), tuple(params)).fetchall()))

    async def migrate(self, migrations: Sequence[Migration]) -> int:
        def apply(db: sqlite3.Connection) -> int:
            db.execute("BEGIN IMMEDIATE")  # another process migrating waits here
            try:
                db.execute(VERSION_TABLE)
                current = db.execute("SELECT COALESCE(MAX(version), 0) FROM team_schema").fetchone()[0]
                for migration in migrations:
                    if migration.version > current:
                        for statement in migration.for_dialect(self.dialect):
                            db.execute(statement)
                        db.execute("INSERT INTO team_schema VALUES (?, ?, ?)",
                                   (migration.version, migration.summary, time.time()))
                        current = migration.version
                db.execute("COMMIT")
                return int(current)
            except BaseException:
                db.execute("ROLLBACK")
                raise

        return await self._run(apply)

    async def close(self) -> None:
        def close() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        await anyio.to_thread.run_sync(close)
