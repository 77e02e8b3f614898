"""Three team-gateway replicas on one PostgreSQL behind Debian's HAProxy, with the configuration we
ship (`deploy/haproxy/haproxy.cfg`, its ports changed): two users with different credentials under
load, a replica killed with SIGKILL in the middle, and PostgreSQL restarted under a running replica.
"""

from __future__ import annotations

import hashlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes.home import Home
from teamscale.cluster import PASSWORD, Postgres, Proxy
from tests.support import PATIENCE, free_port, stdio_entry, wait_for
from tests.team.gateway import Gateway, Team, team_config

pytestmark = pytest.mark.anyio

ALICE_SECRET = "ghp_ALICEclusterCanary0123456789ab"
BOB_SECRET = "sk-BOBclusterCanary-9876543210zyx"


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _team_home(home: Home, database: str) -> None:
    team_config(home, {"box": stdio_entry(env={"API_TOKEN": "${API_TOKEN}"}), "ops": stdio_entry()},
                secrets={"HERMES_TEAM_DATABASE": database}, database="${HERMES_TEAM_DATABASE}", drain_seconds=5)


async def _setup_users(home: Home) -> dict[str, str]:
    async with Team(home) as setup:
        keys = {"alice": await setup.user("alice", "dev"), "bob": await setup.user("bob")}
        await setup.rule("group:dev", "box", "ops")
        await setup.rule("user:bob", "box")
        await setup.credential("alice", "API_TOKEN", ALICE_SECRET)
        await setup.credential("bob", "API_TOKEN", BOB_SECRET)
    return keys


@pytest.fixture
def replicas(home: Home, postgres: Postgres, tmp_path: Path) -> Iterator[tuple[list[Gateway], Proxy]]:
    import os

    _team_home(home, postgres.create_database())
    ports = [free_port() for _ in range(3)]
    gateways = [Gateway(home, tmp_path / f"replica{i}.log", port=port, env={"HOSTNAME": f"replica{i}"})
                for i, port in enumerate(ports, start=1)]
    proxy = Proxy(tmp_path, os.environ["HERMES_HAPROXY"], ports)
    try:
        yield gateways, proxy
    finally:
        proxy.stop()
        for gateway in gateways:
            gateway.stop(signal.SIGKILL if gateway.process.poll() is None else 0)


CUT_ANSWERS_ASKED_AGAIN = 2  # per client: a replica killed between an answer's head and its body


async def _calls(url: str, key: str, count: int, results: list[str], tools: set[str]) -> None:
    """`count` acknowledged calls. An answer cut off by a replica killed while sending it was never
    acknowledged, and no proxy can retry it (its head went out): the client asks again, as any does."""
    made, cut = 0, 0
    while made < count:
        try:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=PATIENCE) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                tools.update(tool.name for tool in (await client.list_tools()).tools)
                while made < count:
                    result = await client.call_tool("mcp__box__env_digest", {"name": "API_TOKEN"})
                    first = result.content[0]
                    assert not result.is_error and isinstance(first, types.TextContent), result
                    results.append(first.text)
                    made += 1
        except* httpx2.RemoteProtocolError:
            cut += 1
            assert cut <= CUT_ANSWERS_ASKED_AGAIN, "answers cut off again and again"


async def test_a_replica_killed_under_load_loses_no_acknowledged_call(
        home: Home, replicas: tuple[list[Gateway], Proxy]) -> None:
    gateways, proxy = replicas
    keys = await _setup_users(home)
    results: dict[str, list[str]] = {"alice": [], "bob": []}
    tools: dict[str, set[str]] = {"alice": set(), "bob": set()}

    async def load(rounds: int) -> None:
        async with anyio.create_task_group() as tasks:
            for user in ("alice", "bob"):
                for _ in range(3):  # three clients per user at once
                    tasks.start_soon(_calls, proxy.url, keys[user], rounds, results[user], tools[user])

    await load(10)
    async with Team(home) as check:
        served_alice = {r.replica for r in await check.audit() if r.user == "alice"}
    assert len(served_alice) == 1, served_alice  # a user stays on one replica while it is up
    victim = next(g for i, g in enumerate(gateways, start=1) if f"replica{i}" in served_alice)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(load, 15)
        await anyio.to_thread.run_sync(lambda: wait_for(lambda: len(results["alice"]) >= 40))
        victim.process.send_signal(signal.SIGKILL)  # in the middle of the second round of calls

    assert results["alice"] == [_digest(ALICE_SECRET)] * 75 and results["bob"] == [_digest(BOB_SECRET)] * 75
    assert any(name.startswith("mcp__ops__") for name in tools["alice"])
    assert not any(name.startswith("mcp__ops__") for name in tools["bob"])  # bob's policy names box only
    async with Team(home) as check:
        records = await check.audit()
    for user in ("alice", "bob"):
        ok = [r for r in records if r.user == user and r.outcome.value == "ok" and r.tool == "mcp__box__env_digest"]
        assert len(ok) >= 75, (user, len(ok))  # every acknowledged call is in the record (a retry may add one)
    assert len({r.replica for r in records if r.user == "alice"}) >= 2  # alice carried on at another replica
    for gateway in gateways:
        log = gateway.log.read_text()
        for secret in (ALICE_SECRET, BOB_SECRET, PASSWORD, *keys.values()):
            assert secret not in log


async def test_postgresql_restarted_under_a_replica_needs_no_restart_of_the_replica(
        home: Home, postgres: Postgres, tmp_path: Path) -> None:
    _team_home(home, postgres.create_database())
    keys = await _setup_users(home)
    gateway = Gateway(home, tmp_path / "replica.log")
    try:
        first: list[str] = []
        await _calls(gateway.url, keys["alice"], 1, first, set())
        postgres.stop()
        try:
            assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: gateway.get("/readyz").status_code == 503))
            reason: Any = gateway.get("/readyz").json()["reason"]
            assert "team database" in reason and PASSWORD not in reason, reason
        finally:
            postgres.start()
        assert await anyio.to_thread.run_sync(lambda: wait_for(lambda: gateway.get("/readyz").status_code == 200))
        after: list[str] = []
        await _calls(gateway.url, keys["bob"], 2, after, set())  # bob's first request: the store is asked
        assert first == [_digest(ALICE_SECRET)] and after == [_digest(BOB_SECRET)] * 2
        async with Team(home) as check:
            assert len([r for r in await check.audit() if r.user == "bob"]) == 2
    finally:
        assert gateway.stop() == 0
    assert PASSWORD not in gateway.log.read_text()


async def test_any_replica_answers_for_a_task_another_one_runs(
        home: Home, postgres: Postgres, tmp_path: Path) -> None:
    """A task started through the proxy runs on alice's replica; every replica reads it, one of the
    others answers its question, another cancels her second one, and bob finds neither."""
    import os

    from tests.modern_wire import ModernClient, WireError

    team_config(home, {"conf": stdio_entry("conformance_server.py")},
                secrets={"HERMES_TEAM_DATABASE": postgres.create_database()},
                database="${HERMES_TEAM_DATABASE}", drain_seconds=5)
    async with Team(home) as setup:
        keys = {"alice": await setup.user("alice"), "bob": await setup.user("bob")}
        await setup.rule("*", "conf")
    ports = [free_port() for _ in range(3)]
    gateways = [Gateway(home, tmp_path / f"replica{i}.log", port=port, env={"HOSTNAME": f"replica{i}"})
                for i, port in enumerate(ports, start=1)]
    proxy = Proxy(tmp_path, os.environ["HERMES_HAPROXY"], ports)
    try:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {keys['alice']}"}, timeout=PATIENCE) as http:
            through_proxy = ModernClient(proxy.url, http)
            direct = [ModernClient(gateway.url, http) for gateway in gateways]
            await through_proxy.request("tools/call", {"name": "mcp__conf__greet", "arguments": {"name": "a"}})
            async with Team(home) as check:  # the replica the proxy sends alice to
                running_on = next(r for r in await check.audit() if r.user == "alice").replica
            created = await through_proxy.request("tools/call", {"name": "mcp__conf__confirm_delete",
                                                                 "arguments": {"filename": "q3.xlsx"}})
            task = created["taskId"]
            for replica in direct:
                asked = await replica.until(task, "input_required")
                assert set(asked["inputRequests"]) == {"confirm"}
            others = [c for i, c in enumerate(direct, start=1) if f"replica{i}" != running_on]
            await others[0].request("tasks/update", {"taskId": task, "inputResponses": {
                "confirm": {"action": "accept", "content": {"confirm": True}}}})
            done = await through_proxy.until(task, "completed", "failed")
            assert done["result"]["content"][0]["text"] == "deleted q3.xlsx", done

            long = await through_proxy.request("tools/call", {"name": "mcp__conf__slow_compute",
                                                              "arguments": {"seconds": 600, "label": "long"}})
            await others[1].request("tasks/cancel", {"taskId": long["taskId"]})
            assert (await through_proxy.task(long["taskId"]))["status"] == "cancelled"
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {keys['bob']}"}, timeout=PATIENCE) as http:
            for replica in [ModernClient(gateway.url, http) for gateway in gateways]:
                with pytest.raises(WireError) as not_bobs:
                    await replica.task(task)
                assert not_bobs.value.code == -32602
    finally:
        proxy.stop()
        for gateway in gateways:
            gateway.stop(signal.SIGKILL if gateway.process.poll() is None else 0)
