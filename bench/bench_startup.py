"""Start-up of a session with 20 stdio servers that each need 0.5 s to become ready.

Baseline, measured in the same run: a session with one such server. The servers are SDK-free
(see tiny_server.py) so that the figure shows how hermes overlaps start-ups, not how long twenty
SDK imports take on two cores. Goal: 20 servers <= 1.3 x one server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

import anyio

from bench.common import BENCH, PYTHON, median, report, temp_home
from hermes.session.core import Session

TINY = str(BENCH / "tiny_server.py")


async def start_time(count: int, delay: float) -> float:
    servers = {f"s{i:02d}": {"command": PYTHON, "args": ["-S", TINY, "--delay", str(delay)]} for i in range(count)}
    with temp_home(servers) as home:
        started = time.perf_counter()
        async with Session(home) as session:
            elapsed = time.perf_counter() - started
            connected = sum(1 for c in session.snapshots().values() if c.connected)
            assert connected == count, f"only {connected} of {count} connected"
    return elapsed


async def floor_time(count: int, delay: float) -> float:
    """No hermes at all: spawn the servers and wait for each one's initialize answer.

    This is what the machine itself needs for `count` interpreter start-ups on its cores; the gap
    between it and the session figure is hermes's own cost.
    """
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "floor", "version": "1"}}}) + "\n"

    async def one() -> None:
        process = await asyncio.create_subprocess_exec(
            PYTHON, "-S", TINY, "--delay", str(delay), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, start_new_session=True)
        assert process.stdin and process.stdout
        process.stdin.write(request.encode())
        await process.stdin.drain()
        await process.stdout.readline()
        process.kill()
        await process.wait()

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(count):
            tasks.start_soon(one)
    return time.perf_counter() - started


async def main(rounds: int, delay: float) -> None:
    one: list[float] = []
    twenty: list[float] = []
    floor: list[float] = []
    for _ in range(rounds):
        one.append(await start_time(1, delay))
        twenty.append(await start_time(20, delay))
        floor.append(await floor_time(20, delay))
    a, b, c = median(one), median(twenty), median(floor)
    report(f"session start-up, servers that need {delay:g} s to become ready", [
        ("1 server (baseline)", f"{a * 1000:7.0f} ms"),
        ("20 servers", f"{b * 1000:7.0f} ms   ratio {b / a:.2f} (goal <= 1.3)"),
        ("20 bare processes, no hermes (floor)", f"{c * 1000:7.0f} ms   ratio {c / a:.2f}: "
                                                 f"what {os.cpu_count()} cores need to start 20 interpreters"),
    ])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.5)
    args = parser.parse_args()
    anyio.run(main, args.rounds, args.delay)
