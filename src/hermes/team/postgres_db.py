"""The shared team database: PostgreSQL through psycopg 3's async pool, for many replicas.

The pool checks a connection before lending it, so after PostgreSQL restarts a replica's next
statement gets a fresh connection instead of the dead one (no replica restart needed); a statement
that fails because the connection broke under it is tried once more on a new one. Migrations take
a transaction-scoped advisory lock, so replicas starting together apply each migration once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from hermes.team.database import Conflict
from hermes.team.migrations import VERSION_TABLE, Migration
from hermes.team.store import TeamStoreError

_MIGRATION_LOCK = 0x6865726D6573  # "hermes": one advisory lock for schema changes
_TRIES = 2


def shown(url: str) -> str:
    """The database as a message may name it: scheme, host, port and name, never the password."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class PostgresDatabase:
    dialect = "postgresql"

    def __init__(self, url: str, *, max_connections: int = 8, wait: float = 5.0) -> None:
        from psycopg_pool import AsyncConnectionPool

        self._shown = shown(url)
        self._wait = wait
        self._pool = AsyncConnectionPool(url, min_size=1, max_size=max_connections, open=False, timeout=wait,
                                         check=AsyncConnectionPool.check_connection,
                                         kwargs={"autocommit": True, "connect_timeout": max(1, int(wait))})
        self._opened = False

    async def _open(self) -> None:
        if not self._opened:
            await self._pool.open(wait=False)  # the pool connects in the background; a down database is retried
            self._opened = True

    def _failed(self, exc: Exception) -> TeamStoreError:
        import psycopg

        if isinstance(exc, psycopg.errors.UniqueViolation):
            return Conflict(f"the team database ({self._shown}) already has that")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return TeamStoreError(f"the team database ({self._shown}) failed: {first}")

    async def _run(self, sql: str, params: Sequence[Any], rows: bool) -> Any:
        import psycopg
        from psycopg_pool import PoolTimeout

        await self._open()
        for attempt in range(_TRIES):
            try:
                async with self._pool.connection() as connection:
                    cursor = await connection.execute(sql, tuple(params))
                    return await cursor.fetchall() if rows else cursor.rowcount
            except psycopg.OperationalError as exc:
                if attempt + 1 == _TRIES:
                    raise self._failed(exc) from None
            except PoolTimeout:
                raise TeamStoreError(f"the team database ({self._shown}) cannot be reached "
                                     f"(no connection within {self._wait:g} s)") from None
            except psycopg.Error as exc:
                raise self._failed(exc) from None
        raise AssertionError("unreachable")

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(await self._run(sql, params, rows=False))

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(await self._run(sql, params, rows=True))

    async def migrate(self, migrations: Sequence[Migration]) -> int:
        import psycopg
        from psycopg_pool import PoolTimeout

        await self._open()
        try:
            async with self._pool.connection() as connection, connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                await connection.execute(VERSION_TABLE)
                cursor = await connection.execute("SELECT COALESCE(MAX(version), 0) FROM team_schema")
                found = await cursor.fetchone()
                current = int(found[0]) if found else 0
                for migration in migrations:
                    if migration.version > current:
                        for statement in migration.for_dialect(self.dialect):
                            await connection.execute(statement)
                        await connection.execute("INSERT INTO team_schema VALUES (%s, %s, %s)",
                                                 (migration.version, migration.summary, time.time()))
                        current = migration.version
                return current
        except PoolTimeout:
            raise TeamStoreError(f"the team database ({self._shown}) cannot be reached "
                                 f"(no connection within {self._wait:g} s)") from None
        except psycopg.Error as exc:
            raise self._failed(exc) from None

    async def close(self) -> None:
        if self._opened:
            await self._pool.close()
            self._opened = False
