"""Lifecycle costs that grow with the number of servers: stopping, idling, status and the surface.

1. Stop: a session holding N stdio servers is left; baseline (the floor): the same N server
   processes spawned without hermes, in the same sandbox or with none (`sandbox: off`), stopped
   the way the protocol says (close stdin, wait). The same sandbox is bubblewrap's command line
   exactly as hermes starts it: the places bound through the descriptors hermes holds open, and
   the environment a server gets (`child_environment`, then split as `host_side` splits it).
   Goal: hermes <= 1.2x the floor at 100 servers, sandboxed and not. (What the sandbox itself
   costs at a stop is shown beside: the sandboxed floor over the bare one.)
2. Idle: CPU time a session holding N connected servers burns in 2 s of doing nothing, measured
   with the process's own CPU clock; baseline: an event loop that only sleeps. Goal: zero wake-ups
   beyond the baseline (no exit polling).
Both sides of each comparison run in the same rounds, the order turned every round.
3. status() and the surface with S servers x T tools, built from in-memory connections; the time
   per tool must stay flat as S grows (linear, not S x tools).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import anyio
import mcp_types as types

from bench.common import BENCH, MIN_ROUNDS, PYTHON, interleaved_async, median, ratio, report, spread, temp_home
from hermes.config.model import ToolFilter
from hermes.config.sandbox import SandboxSettings
from hermes.mcp.sandbox import SandboxRequest, bwrap_argv, host_side
from hermes.mcp.sandbox_hold import HeldBinds
from hermes.mcp.sandbox_support import support
from hermes.security.environment import child_environment
from hermes.session.core import Session
from hermes.tools.surface import ServerTools, build_surface

TINY = str(BENCH / "tiny_server.py")
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "floor", "version": "1"}}}) + "\n"


SERVER_ARGS = ["-S", TINY, "--delay", "0"]


def _servers(count: int, sandboxed: bool = True) -> dict[str, dict[str, object]]:
    off = {} if sandboxed else {"sandbox": "off"}
    return {f"s{i:03d}": {"command": PYTHON, "args": SERVER_ARGS, **off} for i in range(count)}


@dataclass
class Start:
    """How one floor process starts: its command line, environment and the descriptors it inherits."""

    argv: list[str]
    env: dict[str, str] | None = None
    held: HeldBinds | None = None


def bare_start() -> Start:
    return Start([PYTHON, *SERVER_ARGS])


def sandboxed_start(home: str) -> Start:
    """The start hermes makes for the server with the default settings (`StdioProcess._argv`): the
    plan, its places held open and bound through their descriptors, the server's environment."""
    found = support()
    assert found.available and found.bwrap, found.problem
    request = SandboxRequest(found.bwrap, SandboxSettings(), (), home)
    cwd = os.getcwd()
    env = child_environment(os.environ, {})
    plan, held = request.prepare(PYTHON, SERVER_ARGS, env, cwd, False)
    outside, inside = host_side(env)
    return Start([*bwrap_argv(found.bwrap, plan, cwd, inside=inside, held=held), PYTHON, *SERVER_ARGS], outside, held)


IDLE_WINDOW = 2.0


async def hermes_stop(count: int, sandboxed: bool) -> float:
    """Seconds to leave a session of `count` connected servers."""
    with temp_home(_servers(count, sandboxed)) as home:
        session = Session(home)
        await session.__aenter__()
        assert all(c.connected and c.sandbox.startswith("on") == sandboxed for c in session.snapshots().values())
        started = time.perf_counter()
        await session.__aexit__(None, None, None)
        return time.perf_counter() - started


async def hermes_idle(count: int) -> float:
    """CPU seconds a session of `count` connected servers spends over IDLE_WINDOW of doing nothing."""
    with temp_home(_servers(count)) as home:
        async with Session(home) as session:
            assert all(c.connected for c in session.snapshots().values())
            cpu_before = time.process_time()
            await anyio.sleep(IDLE_WINDOW)
            return time.process_time() - cpu_before


async def floor_stop(count: int, starting: Callable[[], Start]) -> float:
    """The same processes without hermes: spawn, handshake, then close stdin and wait for each."""
    async def spawn() -> asyncio.subprocess.Process:
        start = starting()
        try:
            process = await asyncio.create_subprocess_exec(*start.argv, stdin=asyncio.subprocess.PIPE,
                                                           stdout=asyncio.subprocess.PIPE, env=start.env,
                                                           pass_fds=start.held.fds if start.held else (),
                                                           start_new_session=True)
        finally:
            if start.held is not None:
                start.held.close()
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
    await anyio.sleep(IDLE_WINDOW)
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
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as scratch:
        stops = await interleaved_async({
            "bare floor": partial(floor_stop, count, bare_start),
            "hermes, sandbox off": partial(hermes_stop, count, False),
            "sandboxed floor": partial(floor_stop, count, partial(sandboxed_start, scratch)),
            "hermes, sandboxed": partial(hermes_stop, count, True)}, rounds)
    report(f"stopping a session of {count} stdio servers ({os.cpu_count()} cores, {rounds} rounds)", [
        ("the processes without hermes, no sandbox", spread(stops["bare floor"], 1000, "ms")),
        ("hermes, sandbox: off", spread(stops["hermes, sandbox off"], 1000, "ms")),
        ("", ratio(stops["hermes, sandbox off"], stops["bare floor"], goal=1.2)),
        ("the processes in their sandboxes, without hermes", spread(stops["sandboxed floor"], 1000, "ms")),
        ("hermes, sandboxed (the default)", spread(stops["hermes, sandboxed"], 1000, "ms")),
        ("", ratio(stops["hermes, sandboxed"], stops["sandboxed floor"], goal=1.2)),
        ("the sandbox's own cost at a stop", ratio(stops["sandboxed floor"], stops["bare floor"])),
    ])
    idle = await interleaved_async({"baseline": idle_baseline, "hermes": partial(hermes_idle, count)}, rounds)
    beyond = (median(idle["hermes"]) - median(idle["baseline"])) / IDLE_WINDOW * 100
    report(f"idle CPU over {IDLE_WINDOW:g} s with {count} connected servers", [
        ("baseline: an event loop that only sleeps", spread(idle["baseline"], 1000, "ms")),
        ("hermes session", spread(idle["hermes"], 1000, "ms")),
        ("", f"{beyond:.2f} % of a core beyond the baseline by median (goal 0)"),
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
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    args = parser.parse_args()
    anyio.run(main, args.servers, args.rounds)
