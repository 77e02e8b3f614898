"""What every `TeamStore` must do, written once and run against each one: the in-memory fake and
SQLite here, PostgreSQL in the cluster stage (`teamscale/`)."""

from __future__ import annotations

import time

import pytest

from hermes.team.records import AuditRecord, Outcome, Rule, StoredTask, TaskInputs, User
from hermes.team.store import TeamStore, TeamStoreError


async def check_store(store: TeamStore) -> None:
    first = await store.migrate()
    assert await store.migrate() == first >= 1  # a second migration changes nothing
    await store.ping()

    await store.add_user(User("alice", ("dev", "ops")), "hash-a")
    await store.add_user(User("bob", (), "bob@example.org"), None)
    for taken in (User("alice"), User("carol", (), "bob@example.org")):
        with pytest.raises(TeamStoreError):
            await store.add_user(taken, None)
    with pytest.raises(TeamStoreError):
        await store.add_user(User("dave"), "hash-a")  # a key is one user's
    assert [u.name for u in await store.users()] == ["alice", "bob"]
    assert await store.user_by_key("hash-a") == User("alice", ("dev", "ops"))
    assert await store.user_by_key("hash-x") is None
    assert await store.user_by_subject("bob@example.org") == User("bob", (), "bob@example.org")
    assert await store.set_groups("alice", ("ops",)) and not await store.set_groups("nobody", ("x",))
    assert await store.user_by_key("hash-a") == User("alice", ("ops",))
    assert await store.set_groups("alice", ("dev", "ops"))

    await store.set_rule(Rule("group:dev", ("box", "gh*"), deny=("mcp__box__rm",), calls_per_minute=30))
    await store.set_rule(Rule("*", ("box",)))
    await store.set_rule(Rule("group:dev", ("box",), ask=("*_write",)))  # replaces the first one
    assert await store.rules() == [Rule("*", ("box",)), Rule("group:dev", ("box",), ask=("*_write",))]
    assert await store.remove_rule("*") and not await store.remove_rule("*")

    await store.set_credential("alice", "API_TOKEN", "sealed-1")
    await store.set_credential("alice", "API_TOKEN", "sealed-2")
    await store.set_credential("alice", "OTHER", "sealed-3")
    await store.set_credential("bob", "API_TOKEN", "sealed-b")
    assert await store.credentials("alice") == {"API_TOKEN": "sealed-2", "OTHER": "sealed-3"}
    assert await store.remove_credential("alice", "OTHER") and not await store.remove_credential("alice", "OTHER")

    now = time.time()
    records = [AuditRecord(now + i, "alice" if i % 2 else "bob", f"mcp__box__t{i}", "box", Outcome.OK, 1.5, "r1")
               for i in range(5)]
    await store.record(records)
    await store.record([])
    newest = await store.audit(limit=2)
    assert [r.tool for r in newest] == ["mcp__box__t4", "mcp__box__t3"]
    assert [r.tool for r in await store.audit("alice")] == ["mcp__box__t3", "mcp__box__t1"]
    assert (await store.audit("bob", limit=1))[0] == records[4]

    assert await store.pins("bob") is None
    await store.set_pins("bob", '{"schema": 1, "servers": {}}')
    await store.set_pins("bob", '{"schema": 1, "servers": {"gh": {}}}')
    assert await store.pins("bob") == '{"schema": 1, "servers": {"gh": {}}}'

    await store.set_oauth_record("bob", "gh/token", "sealed-t1")
    await store.set_oauth_record("bob", "gh/token", "sealed-t2")
    await store.set_oauth_record("alice", "gh/client", "sealed-c")
    assert await store.oauth_records("bob") == {"gh/token": "sealed-t2"}

    await store.start_signin("state-1", "alice", "gh")
    assert await store.signin_result("state-1") is None  # not back yet
    assert await store.finish_signin("state-1", "code-1", None)
    assert not await store.finish_signin("state-1", "code-2", None)  # a state is used once
    assert not await store.finish_signin("state-unknown", "code-3", None)
    assert await store.signin_result("state-1") == ("code-1", None)
    await store.end_signin("state-1")
    assert await store.signin_result("state-1") is None

    await check_tasks(store, now)

    assert await store.remove_user("bob") and not await store.remove_user("bob")
    assert await store.oauth_records("bob") == {} and await store.pins("bob") is None
    assert await store.credentials("bob") == {}  # a removed user's credentials go with them
    assert await store.user_by_subject("bob@example.org") is None
    assert await store.task("bob", "t1", now) is None  # and their tasks


async def check_tasks(store: TeamStore, now: float) -> None:
    """Tasks: one user's are theirs alone; a terminal one stays as it ended; answers and a cancel
    handed over are taken once, by the replica running the task."""
    working = StoredTask("t1", "working", now, now, now + 3600, now, "sealed-1")
    await store.create_task("bob", working)
    await store.create_task("alice", StoredTask("t1", "working", now, now, now + 3600, now, "alice's"))
    await store.create_task("bob", StoredTask("ended", "working", now - 7200, now - 7200, now - 3600, now, "x"))
    assert await store.save_task("bob", StoredTask("ended", "completed", now - 7200, now - 7000, now - 3400, now, "y"))
    await store.create_task("bob", StoredTask("long", "working", now - 7200, now - 7200, now - 3600, now, "z"))
    assert await store.task("bob", "t1", now) == working
    assert (await store.task("alice", "t1", now) or working).sealed == "alice's"  # the same id, another user's
    assert await store.task("bob", "ended", now) is None and await store.task("carol", "t1", now) is None
    assert await store.task("bob", "long", now) is not None  # a task still running never expires

    assert await store.save_task("bob", StoredTask("t1", "input_required", now, now + 1, now + 3600, now, "sealed-2"))
    assert await store.answer_task("bob", "t1", "answers-1") and await store.answer_task("bob", "t1", "answers-2")
    assert not await store.answer_task("bob", "nope", "answers-3") and not await store.answer_task("carol", "t1", "a")
    taken = await store.take_task_inputs("bob", ["t1", "nope"], now + 2)
    assert taken == {"t1": TaskInputs(("answers-1", "answers-2"), False)}
    assert await store.take_task_inputs("bob", ["t1"], now + 3) == {}  # taken once
    assert await store.take_task_inputs("bob", [], now + 3) == {}
    stored = await store.task("bob", "t1", now)
    assert stored is not None
    assert (stored.status, stored.sealed, stored.alive) == ("input_required", "sealed-2", now + 3)

    cancelled = await store.cancel_task("bob", "t1", now + 4)
    assert cancelled is not None and cancelled.status == "cancelled"
    assert cancelled.expires == now + 4 + 3599  # kept its ttl after the cancel, as after any change
    assert await store.take_task_inputs("bob", ["t1"], now + 5) == {"t1": TaskInputs((), True)}
    # Ended: the replica running it cannot write over that, and a second cancel changes nothing.
    assert not await store.save_task("bob", StoredTask("t1", "completed", now, now + 6, now + 3600, now, "late"))
    again = await store.cancel_task("bob", "t1", now + 7)
    assert again is not None and (again.status, again.updated) == ("cancelled", now + 4)
    assert await store.cancel_task("bob", "nope", now) is None
    alice = await store.task("alice", "t1", now)
    assert alice is not None and alice.status == "working"  # bob's cancel was bob's
