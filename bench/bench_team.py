"""tools/call throughput through the team gateway, per second and per core, in both protocol eras.

Subjects, measured in the same run, block by block in turns (the order rotated every round):

- `raw SDK`: the suite's SDK test server (toolbox) over Streamable HTTP, called directly;
- `one replica`: `hermes mcp serve --http --team` (SQLite store on one machine, PostgreSQL with
  `--postgres`), the same server as each user's stdio upstream, every call authenticated, policed,
  rate-limited (the limit set out of reach) and audited with its record written before the answer.

Each block is `--calls` calls by `--clients` concurrent SDK clients (of `--users` users); a figure is
calls per wall-clock second, and calls per CPU-second of the serving processes (the replica and its
upstream servers, or the raw server): the per-core figure a pod is sized by, which the load
generator sharing the machine does not distort. With `--postgres` (and the environment
`.ci/teamscale.sh` prints) three replicas behind HAProxy are measured too: scaling from one to three.
The figure published for the field's gateways is 250-400 MCP requests a second per pod.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from ruamel.yaml import YAML

from bench.common import MIN_ROUNDS, PYTHON, TOOLBOX, interleaved_async, report, toolbox_http
from hermes.home import Home

ERAS = {"2026-07-28": "auto", "2025-11-25": "legacy"}


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            process = psutil.Process(pid)
            for one in [process, *process.children(recursive=True)]:
                times = one.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


class Target:
    """Where calls go: a URL, the keys of its users, the processes that serve it, the tool's name."""

    def __init__(self, url: str, keys: list[str | None], pids: list[int], tool: str) -> None:
        self.url, self.keys, self.pids, self.tool = url, keys, pids, tool


@asynccontextmanager
async def _clients(target: Target, mode: str, count: int) -> AsyncIterator[list[Client]]:
    async with AsyncExitStack() as stack:
        clients = []
        for index in range(count):
            key = target.keys[index % len(target.keys)]
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=120))
            client = await stack.enter_async_context(Client(streamable_http_client(target.url, http_client=http),
                                                            mode=mode))
            await client.list_tools()
            clients.append(client)
        yield clients


async def _block(clients: list[Client], tool: str, calls: int, pids: list[int]) -> tuple[float, float]:
    per_client = max(1, calls // len(clients))
    before = _cpu(pids)
    started = time.perf_counter()

    async def one(client: Client) -> None:
        for _ in range(per_client):
            result = await client.call_tool(tool, {"text": "x"})
            assert not result.is_error, result

    async with anyio.create_task_group() as tasks:
        for client in clients:
            tasks.start_soon(one, client)
    wall = time.perf_counter() - started
    cpu = max(_cpu(pids) - before, 1e-9)
    done = per_client * len(clients)
    return done / wall, done / cpu


def _team_home(root: Path, database: str | None) -> Home:
    from hermes.team.sealing import new_key

    home = Home(root)
    home.ensure()
    team: dict[str, Any] = {"secret_key": new_key(), "calls_per_minute": 1_000_000, "max_users": 1000}
    if database:
        team["database"] = database
    with home.config.open("w") as handle:
        YAML().dump({"team": team, "mcp": {"sandbox": "off"},
                     "mcp_servers": {"box": {"command": PYTHON, "args": [str(TOOLBOX)]}}}, handle)
    return home


async def _users(home: Home, count: int) -> list[str | None]:
    from hermes.team.auth import key_hash, new_key
    from hermes.team.records import Rule, User
    from hermes.team.run import team_settings, team_store

    store = team_store(home, team_settings(home))
    await store.migrate()
    keys: list[str | None] = []
    for index in range(count):
        key = new_key()
        await store.add_user(User(f"user{index}"), key_hash(key))
        keys.append(key)
    await store.set_rule(Rule("*", ("box",)))
    await store.close()
    return keys


def _replica(home: Home, port: int, name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "serve", "--http", "--team", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "HERMES_HOME": str(home.root), "HOSTNAME": name})


def _wait_ready(url: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx2.get(url, timeout=5).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} never became ready")


async def run(calls: int, clients: int, users: int, rounds: int, postgres: bool) -> None:
    from tests.support import free_port

    with tempfile.TemporaryDirectory(prefix="hermes-bench-team-") as scratch, toolbox_http() as raw_url:
        raw_pid = next(p.pid for p in psutil.process_iter(["cmdline"])
                       if str(TOOLBOX) in " ".join(p.info["cmdline"] or []) and "--http" in (p.info["cmdline"] or []))
        processes: list[subprocess.Popen[bytes]] = []
        database = None
        server: Any = None
        if postgres:
            from teamscale.cluster import start_postgres

            server, pg_folder = start_postgres(Path(os.environ["HERMES_POSTGRES_BIN"]))
            database = server.create_database()
        home = _team_home(Path(scratch) / "home", database)
        keys = await _users(home, users)
        ports = [free_port() for _ in range(3 if postgres else 1)]
        processes = [_replica(home, port, f"replica{i}") for i, port in enumerate(ports, start=1)]
        try:
            for port in ports:
                _wait_ready(f"http://127.0.0.1:{port}/readyz")
            targets = {"raw SDK": Target(raw_url, [None], [raw_pid], "echo"),
                       "one replica": Target(f"http://127.0.0.1:{ports[0]}/mcp", keys, [processes[0].pid],
                                             "mcp__box__echo")}
            if server is not None:
                from teamscale.cluster import Proxy

                proxy = Proxy(Path(scratch), os.environ["HERMES_HAPROXY"], ports, per_minute=10_000_000)
                targets["three replicas"] = Target(proxy.url, keys, [p.pid for p in processes], "mcp__box__echo")
            for era, mode in ERAS.items():
                samples = await _measure(targets, mode, clients, calls, rounds)
                rows = []
                for name, found in samples.items():
                    rows.append((f"{name}: calls/s", _best([r for r, _ in found])))
                    rows.append((f"{name}: calls per CPU-second", _best([c for _, c in found])))
                raw_cpu = _median([c for _, c in samples["raw SDK"]])
                ours_cpu = _median([c for _, c in samples["one replica"]])
                rows.append(("one replica / raw SDK, per CPU-second", f"{ours_cpu / raw_cpu:.2f}"))
                if "three replicas" in samples:
                    one = _median([r for r, _ in samples["one replica"]])
                    three = _median([r for r, _ in samples["three replicas"]])
                    rows.append(("three replicas / one, calls/s", f"{three / one:.2f} (on {os.cpu_count()} cores)"))
                report(f"tools/call through the team gateway, MCP {era}, {clients} clients of {users} users, "
                       f"{rounds} rounds of {calls} calls", rows)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait()
            if server is not None:
                import shutil

                if "three replicas" in locals().get("targets", {}):
                    proxy.stop()
                server.stop()
                shutil.rmtree(pg_folder, ignore_errors=True)


async def _measure(targets: dict[str, Target], mode: str, clients: int, calls: int, rounds: int
                   ) -> dict[str, list[tuple[float, float]]]:
    """Each target's (calls/s, calls per CPU-second) of every block, blocks in turns."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in targets}
    async with AsyncExitStack() as stack:
        connected = {name: await stack.enter_async_context(_clients(target, mode, clients))
                     for name, target in targets.items()}
        for name, target in targets.items():  # warm: every user's servers started
            await _block(connected[name], target.tool, clients * 4, target.pids)

        def subject(name: str) -> Callable[[], Awaitable[float]]:
            async def measure() -> float:
                found = await _block(connected[name], targets[name].tool, calls, targets[name].pids)
                samples[name].append(found)
                return 1.0 / found[0]
            return measure

        await interleaved_async({name: subject(name) for name in targets}, rounds)
    return samples


def _median(values: list[float]) -> float:
    import statistics

    return statistics.median(values)


def _best(rates: list[float]) -> str:
    return f"best {max(rates):8.1f}, median {_median(rates):8.1f}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL and three replicas behind HAProxy")
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    try:
        anyio.run(run, args.calls, args.clients, args.users, args.rounds, args.postgres)
    except BaseExceptionGroup as group:
        from hermes.errors import leaf

        raise SystemExit(f"bench_team failed: {leaf(group)!r}") from None
