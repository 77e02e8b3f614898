"""The team store's contract on the in-memory fake and on a real SQLite file."""

from __future__ import annotations

import stat
from pathlib import Path

import anyio
import pytest

from hermes.errors import ConfigError
from hermes.team.memory_store import MemoryStore
from hermes.team.migrations import NEWEST
from hermes.team.sql_store import open_store
from tests.team.store_contract import check_store

pytestmark = pytest.mark.anyio


async def test_the_in_memory_fake_keeps_the_contract() -> None:
    await check_store(MemoryStore())


async def test_sqlite_keeps_the_contract_in_a_private_file(tmp_path: Path) -> None:
    store = open_store(None, tmp_path / "team.db")
    try:
        await check_store(store)
    finally:
        await store.close()
    assert stat.S_IMODE((tmp_path / "team.db").stat().st_mode) == 0o600


async def test_replicas_migrating_one_file_at_once_apply_each_migration_once(tmp_path: Path) -> None:
    stores = [open_store(f"sqlite:///{tmp_path}/shared.db", tmp_path / "unused.db") for _ in range(4)]
    versions: list[int] = []

    async def migrate(index: int) -> None:
        versions.append(await stores[index].migrate())

    async with anyio.create_task_group() as tasks:
        for index in range(len(stores)):
            tasks.start_soon(migrate, index)
    applied = await stores[0].db.fetch("SELECT version FROM team_schema")
    for store in stores:
        await store.close()
    assert versions == [NEWEST] * 4 and applied == [(version,) for version in range(1, NEWEST + 1)]


def test_a_database_setting_of_another_kind_is_refused_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        open_store("mysql://db/team", tmp_path / "team.db")
    assert "team.database" in str(refused.value) and "postgresql://" in str(refused.value)


async def test_a_file_that_is_not_a_database_gives_one_sentence_naming_it(tmp_path: Path) -> None:
    from hermes.team.store import TeamStoreError

    broken = tmp_path / "team.db"
    broken.write_bytes(b"this is not SQLite" * 100)
    store = open_store(None, broken)
    with pytest.raises(TeamStoreError) as failed:
        await store.migrate()
    await store.close()
    assert str(broken) in str(failed.value) and "\n" not in str(failed.value)


async def test_a_task_s_record_is_sealed_for_its_user_and_one_too_large_to_share_says_so() -> None:
    from hermes.live.task_records import TaskRecord, TaskStatus
    from hermes.team.sealing import Sealer, new_key
    from hermes.team.task_records import MAX_SHARED_RECORD, StoreTaskRecords

    store, sealer = MemoryStore(), Sealer(new_key())
    alice, bob = (StoreTaskRecords(store, sealer, user, clock=lambda: 1_002.0) for user in ("alice", "bob"))
    started = TaskRecord("t", TaskStatus.WORKING, 1_000.0, 1_000.0, 3_600_000, 500)
    await alice.create(started)
    done = started.changed(TaskStatus.COMPLETED, at=1_001.0, result={"content": [{"type": "text", "text": "ok 42"}]})
    assert await alice.save(done) == done
    stored = await store.task("alice", "t", 1_002.0)
    assert stored is not None and "ok 42" not in stored.sealed
    assert await bob.get("t") is None  # the same id is no task of bob's
    found = await alice.get("t")
    assert found is not None and found[0].result == done.result

    await alice.create(TaskRecord("huge", TaskStatus.WORKING, 1_000.0, 1_000.0, 3_600_000, 500))
    huge = {"content": [{"type": "text", "text": "x" * MAX_SHARED_RECORD}]}
    written = await alice.save(TaskRecord("huge", TaskStatus.COMPLETED, 1_000.0, 1_001.0, 3_600_000, 500,
                                          result=huge))
    assert written is not None and written.status is TaskStatus.FAILED and written.result is None
    assert "larger than the team gateway keeps" in str(written.error)
    kept = await alice.get("huge")
    assert kept is not None and kept[0].status is TaskStatus.FAILED  # what every replica answers
