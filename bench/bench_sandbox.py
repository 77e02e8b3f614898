"""What the stdio sandbox costs: start-up and per-call, the same server with and without it.

Baseline, measured in the same run: the same server with `sandbox: off`. Start-up is a whole
session start with one server (spawn, handshake, tools listed), alternating sandboxed and not,
median over `--starts`. Per call: 2,000 sequential `echo` calls in blocks of 200 that alternate
between the two sessions, so load drift hits both alike. Goal: per call <= 1.1 x unsandboxed
(bubblewrap hands the pipes to the server and is not in the data path; the start pays for the
namespaces and mounts).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import anyio

from bench.common import PYTHON, TOOLBOX, median, report, temp_home
from hermes.mcp.sandbox_support import support
from hermes.session.core import Session

BLOCK = 200


def entry(sandboxed: bool) -> dict[str, Any]:
    server: dict[str, Any] = {"command": PYTHON, "args": [str(TOOLBOX)]}
    return server if sandboxed else {**server, "sandbox": "off"}


async def start_time(sandboxed: bool) -> float:
    with temp_home({"box": entry(sandboxed)}) as home:
        started = time.perf_counter()
        async with Session(home) as session:
            elapsed = time.perf_counter() - started
            snapshot = session.snapshots()["box"]
            assert snapshot.connected, snapshot.reason
            assert snapshot.sandbox.startswith("on") == sandboxed, snapshot.sandbox
    return elapsed


async def per_call(total: int) -> tuple[float, float]:
    with temp_home({"box": entry(True)}) as inside, temp_home({"box": entry(False)}) as outside:
        async with Session(inside) as boxed, Session(outside) as plain:
            assert boxed.snapshots()["box"].sandbox.startswith("on")
            times: dict[bool, list[float]] = {True: [], False: []}
            for session in (boxed, plain):
                for _ in range(50):
                    await session.call("mcp__box__echo", {"text": "x"})
            for block in range(total // BLOCK):
                for sandboxed, session in ((True, boxed), (False, plain))[::1 if block % 2 else -1]:
                    started = time.perf_counter()
                    for _ in range(BLOCK):
                        await session.call("mcp__box__echo", {"text": "x"})
                    times[sandboxed].append((time.perf_counter() - started) / BLOCK)
    return median(times[True]), median(times[False])


async def main(starts: int, total: int) -> None:
    found = support()
    if not found.available:
        print(f"no sandbox here: {found.problem}")
        return
    boxed: list[float] = []
    plain: list[float] = []
    for _ in range(starts):
        boxed.append(await start_time(True))
        plain.append(await start_time(False))
    call_boxed, call_plain = await per_call(total)
    a, b = median(plain), median(boxed)
    report("stdio sandbox (bubblewrap): the same server with and without it", [
        ("session start, sandbox off (baseline)", f"{a * 1000:7.1f} ms"),
        ("session start, sandboxed", f"{b * 1000:7.1f} ms   ratio {b / a:.2f}"),
        ("per call, sandbox off (baseline)", f"{call_plain * 1e6:7.0f} us"),
        ("per call, sandboxed", f"{call_boxed * 1e6:7.0f} us   ratio {call_boxed / call_plain:.2f} (goal <= 1.1)"),
    ])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    anyio.run(main, args.starts, args.calls)
