"""The team store on a real PostgreSQL: the same contract as SQLite, migrations once when replicas
start together, a password that never shows, and a restart of the database that needs no restart
of the store."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hermes.team.migrations import NEWEST
from hermes.team.records import User
from hermes.team.sql_store import open_store
from hermes.team.store import TeamStoreError
from teamscale.cluster import PASSWORD, Postgres
from tests.team.store_contract import check_store

pytestmark = pytest.mark.anyio


async def test_postgresql_keeps_the_store_contract(postgres: Postgres, tmp_path: Path) -> None:
    store = open_store(postgres.create_database(), tmp_path / "unused.db")
    try:
        await check_store(store)
    finally:
        await store.close()


async def test_replicas_starting_together_apply_each_migration_once(postgres: Postgres, tmp_path: Path) -> None:
    url = postgres.create_database()
    stores = [open_store(url, tmp_path / "unused.db") for _ in range(3)]
    versions: list[int] = []

    async def migrate(index: int) -> None:
        versions.append(await stores[index].migrate())

    async with anyio.create_task_group() as tasks:
        for index in range(3):
            tasks.start_soon(migrate, index)
    applied = await stores[0].db.fetch("SELECT version FROM team_schema ORDER BY version")
    for store in stores:
        await store.close()
    assert versions == [NEWEST] * 3 and applied == [(v,) for v in range(1, NEWEST + 1)]


async def test_after_postgresql_restarts_the_same_store_carries_on(postgres: Postgres, tmp_path: Path) -> None:
    store = open_store(postgres.create_database(), tmp_path / "unused.db")
    try:
        await store.migrate()
        await store.add_user(User("before"), None)
        postgres.stop()
        try:
            with pytest.raises(TeamStoreError) as away:
                await store.users()
            assert PASSWORD not in str(away.value) and "127.0.0.1" in str(away.value)
        finally:
            postgres.start()
        await store.add_user(User("after"), None)
        assert [u.name for u in await store.users()] == ["after", "before"]
    finally:
        await store.close()
