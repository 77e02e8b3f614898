"""Tasks through the team gateway: any replica answers for a task another one runs.

Two replicas on one database (SQLite here; PostgreSQL behind HAProxy in `teamscale/`). A task
started on one is read, answered and cancelled through the other; a user never finds another's
task; what a task answered is sealed in the database; a replica stopped under a running task says
so in its record, so the others answer "failed" at once.
"""

from __future__ import annotations

import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest

from hermes.home import Home
from tests.modern_wire import ModernClient, WireError
from tests.support import PATIENCE, stdio_entry
from tests.team.gateway import Gateway, Team, team_config

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _as(gateway: Gateway, key: str) -> AsyncIterator[ModernClient]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=PATIENCE) as http:
        yield ModernClient(gateway.url, http)


@pytest.fixture
def two_replicas(home: Home, tmp_path: Path) -> Iterator[tuple[Gateway, Gateway]]:
    team_config(home, {"conf": stdio_entry("conformance_server.py")})
    first = Gateway(home, tmp_path / "first.log", env={"HOSTNAME": "first"})
    second = Gateway(home, tmp_path / "second.log", env={"HOSTNAME": "second"})
    try:
        yield first, second
    finally:
        for gateway in (first, second):
            if gateway.process.poll() is None:
                gateway.stop(signal.SIGKILL)


async def _users(home: Home) -> dict[str, str]:
    async with Team(home) as setup:
        keys = {"alice": await setup.user("alice"), "bob": await setup.user("bob")}
        await setup.rule("*", "conf")
    return keys


async def test_a_task_started_on_one_replica_is_read_answered_and_cancelled_on_another(
        home: Home, two_replicas: tuple[Gateway, Gateway]) -> None:
    first, second = two_replicas
    keys = await _users(home)
    async with _as(first, keys["alice"]) as on_first, _as(second, keys["alice"]) as on_second:
        created = await on_first.request("tools/call", {"name": "mcp__conf__confirm_delete",
                                                        "arguments": {"filename": "plans.txt"}})
        task = created["taskId"]
        asked = await on_second.until(task, "input_required")
        assert asked["inputRequests"]["confirm"]["params"]["message"] == "Delete plans.txt?", asked
        await on_second.request("tasks/update", {"taskId": task, "inputResponses": {
            "confirm": {"action": "accept", "content": {"confirm": True}}}})
        done = await on_second.until(task, "completed", "failed")
        assert done["result"]["content"][0]["text"] == "deleted plans.txt", done

        # Some of the answers through the other replica: it says at once what is left.
        multi = await on_first.request("tools/call", {"name": "mcp__conf__multi_input", "arguments": {}})
        both = await on_second.until(multi["taskId"], "input_required")
        assert set(both["inputRequests"]) == {"name", "confirm"}
        await on_second.request("tasks/update", {"taskId": multi["taskId"], "inputResponses": {
            "name": {"action": "accept", "content": {"name": "Grace"}}}})
        left = await on_second.task(multi["taskId"])
        assert left["status"] == "input_required" and set(left["inputRequests"]) == {"confirm"}, left
        await on_second.request("tasks/update", {"taskId": multi["taskId"], "inputResponses": {
            "confirm": {"action": "accept", "content": {"confirm": True}}}})
        finished = await on_first.until(multi["taskId"], "completed", "failed")
        assert finished["result"]["content"][0]["text"] == "name=Grace confirm={'confirm': True}", finished

        long = await on_first.request("tools/call", {"name": "mcp__conf__slow_compute",
                                                     "arguments": {"seconds": 600, "label": "long"}})
        await on_second.request("tasks/cancel", {"taskId": long["taskId"]})
        assert (await on_first.task(long["taskId"]))["status"] == "cancelled"

    async with _as(second, keys["bob"]) as bob:
        with pytest.raises(WireError) as elsewhere:
            await bob.task(task)  # alice's task is no task of bob's, on any replica
        assert elsewhere.value.code == -32602
    async with Team(home) as check:
        stored = await check.store.task("alice", task, time.time())
    assert stored is not None and stored.status == "completed" and "plans.txt" not in stored.sealed


async def test_a_replica_stopped_under_a_task_leaves_it_failed_not_hanging(
        home: Home, two_replicas: tuple[Gateway, Gateway]) -> None:
    first, second = two_replicas
    keys = await _users(home)
    async with _as(first, keys["alice"]) as on_first, _as(second, keys["alice"]) as on_second:
        created = await on_first.request("tools/call", {"name": "mcp__conf__slow_compute",
                                                        "arguments": {"seconds": 600, "label": "cut short"}})
        assert (await on_second.task(created["taskId"]))["status"] == "working"
        assert await anyio.to_thread.run_sync(first.stop) == 0  # SIGTERM: the replica drains, then stops under the task
        found = await on_second.until(created["taskId"], "failed", "completed", "cancelled")
        assert found["status"] == "failed" and "stopped before this task finished" in found["error"]["message"]
