"""Lifecycle costs that grow with the number of servers: stopping, idling, status and the surface.

1. Stop: a session holding N stdio servers is left; baseline (the floor): the same N bare server
   processes, spawned without hermes, stopped the way the protocol says (close stdin, wait).
   Goal: hermes <= 2x the floor at 100 servers.
2. Idle: CPU time a session holding N connected servers burns in 5 s of doing nothing, measured
   with the process's own CPU clock; baseline: an event loop that only sleeps. Goal: zero wake-ups
   beyond the baseline (no exit polling).
3. status() and the surface with S servers x T tools, built from in-memory connections; the time
   per tool must stay flat as S grows (linear, not S x tools).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import time

import anyio
import mcp_types as types

from bench.common import BENCH, PYTHON, median, report, temp_home
from hermes.config.model import ToolFilter
from hermes.session.core import Session
from hermes.tools.surface import ServerTools, build_surface

TINY = str(BENCH / "tiny_server.py")
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "floor", "version": "1"}}}) + "\n"


def _servers(count: int) -> dict[str, dict[str, object]]:
    return {f"s{i:03d}": {"command": PYTHON, "args": ["-S", TINY, "--delay", "0"]} for i in range(count)}


async def hermes_stop(count: int) -> tuple[float, float]:
    """(seconds to leave a session of `count` servers, CPU seconds spent idle for 5 s in it)."""
    with temp_home(_servers(count)) as home:
        session = Session(home)
        await session.__aenter__()
        assert all(c.connected for c in session.snapshots().values())
        cpu_before = time.process_time()
        await anyio.sleep(5)
        idle_cpu = time.process_time() - cpu_before
        started = time.perf_counter()
        await session.__aexit__(None, None, None)
        return time.perf_counter() - started, idle_cpu


async def floor_stop(count: int) -> float:
    """The same processes without hermes: spawn, handshake, then close stdin and wait for each."""
    async def spawn() -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(PYTHON, "-S", TINY, "--delay", "0",
                                                       stdin=asyncio.subprocess.PIPE,
                                                       stdout=asyncio.subprocess.PIPE, start_new_session=True)
        assert process.stdin and process.stdout
        process.stdin.write(INIT.encode())
        await process.stdin.drain()
        await process.stdout.readline()
        return process

    processes = [await spawn() for _ in range(count)]
    started = time.perf_counter()

    async def stop(process: asyncio.subprocess.Process) -> None:
        assert process.stdin
        process.stdin.close()
        await process.wait()

    async with anyio.create_task_group() as tasks:
        for process in processes:
            tasks.start_soon(stop, process)
    return time.perf_counter() - started


async def idle_baseline() -> float:
    cpu_before = time.process_time()
    await anyio.sleep(5)
    return time.process_time() - cpu_before


def surface_cost(servers: int, tools: int, rounds: int = 5) -> float:
    """Seconds per tool to build the surface and count every server's tools (what status does)."""
    offered = [ServerTools(f"s{s:03d}", ToolFilter(), [types.Tool(name=f"tool_{t}", input_schema={"type": "object"})
                                                       for t in range(tools)], False, False)
               for s in range(servers)]
    times = []
    # The cyclic collector's full passes grow with the whole heap, whatever the code does; with it
    # paused, the figure is the algorithm's own cost.
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            started = time.perf_counter()
            surface = build_surface(offered)
            counts = [len(surface.for_server(server.name)) for server in offered]
            times.append(time.perf_counter() - started)
            assert sum(counts) == servers * tools
    finally:
        gc.enable()
    return median(times) / (servers * tools)


async def main(count: int, rounds: int) -> None:
    stops, floors, idles = [], [], []
    for _ in range(rounds):
        seconds, idle = await hermes_stop(count)
        stops.append(seconds)
        idles.append(idle)
        floors.append(await floor_stop(count))
    baseline_idle = await idle_baseline()
    hermes_s, floor_s, idle_s = median(stops), median(floors), median(idles)
    report(f"stopping a session of {count} stdio servers ({os.cpu_count()} cores)", [
        ("floor: the same processes without hermes", f"{floor_s * 1000:7.0f} ms"),
        ("hermes: leaving the session", f"{hermes_s * 1000:7.0f} ms   ratio {hermes_s / floor_s:.2f} (goal <= 2)"),
    ])
    report(f"idle CPU over 5 s with {count} connected servers", [
        ("baseline: an event loop that only sleeps", f"{baseline_idle * 1000:7.1f} ms"),
        ("hermes session", f"{idle_s * 1000:7.1f} ms   ({(idle_s - baseline_idle) / 5 * 100:.2f} % of a core "
                           f"beyond the baseline; goal 0)"),
    ])
    rows = []
    surface_cost(10, 50)  # warm up
    small = surface_cost(10, 50)
    for servers in (10, 100, 400):
        per_tool = surface_cost(servers, 50)
        rows.append((f"{servers} servers x 50 tools", f"{per_tool * 1e6:6.2f} us per tool   "
                                                       f"ratio to 10 servers {per_tool / small:.2f} (linear: ~1)"))
    report("surface build + per-server counts (status)", rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    anyio.run(main, args.servers, args.rounds)
