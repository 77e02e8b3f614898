"""Per-call cost through hermes vs the raw SDK `Client.call_tool`, same server, stdio and HTTP.

For each transport and each protocol era: 2,000 sequential calls, then 8 concurrent callers sharing
2,000 calls. The 2,000 calls run in blocks of 200 that alternate between raw and hermes, so drift in
machine load hits both sides alike; each figure is the median over `--rounds` rounds. Both sides
speak the same era (hermes's entry pins it with `protocol:`): left to itself hermes speaks
2026-07-28 to a server that offers it, and an era's own cost is bench_eras's subject, not hermes's.
Goal: hermes / raw <= 1.05.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Awaitable, Callable

import anyio
from mcp import Client, StdioServerParameters

from bench.common import PYTHON, TOOLBOX, median, report, temp_home, toolbox_http
from hermes.session.core import Session

SERVER = str(TOOLBOX)
Call = Callable[[], Awaitable[object]]
BLOCK = 200


async def timed(call: Call, total: int, callers: int) -> float:
    per_caller = total // callers

    async def worker() -> None:
        for _ in range(per_caller):
            await call()

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(callers):
            tasks.start_soon(worker)
    return (time.perf_counter() - started) / (per_caller * callers)


ERAS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


async def measure(raw_target: object, hermes_entry: dict[str, object], mode: str, total: int, rounds: int
                  ) -> dict[str, float]:
    figures: dict[str, list[float]] = {"raw-seq": [], "hermes-seq": [], "raw-8": [], "hermes-8": []}
    with temp_home({"box": {**hermes_entry, "protocol": mode}}) as home:
        async with Client(raw_target, mode=mode) as client, Session(home) as session:  # type: ignore[arg-type]
            assert session.snapshots()["box"].protocol == ERAS[mode], session.snapshots()["box"].protocol
            async def raw() -> object:
                return await client.call_tool("echo", {"text": "x"})

            async def through_hermes() -> object:
                return await session.call("mcp__box__echo", {"text": "x"})

            for call in (raw, through_hermes):  # warm both paths
                await timed(call, 200, 1)
            for _ in range(rounds):
                for callers, suffix in ((1, "seq"), (8, "8")):
                    raw_blocks, hermes_blocks = [], []
                    for _ in range(total // BLOCK):
                        raw_blocks.append(await timed(raw, BLOCK, callers))
                        hermes_blocks.append(await timed(through_hermes, BLOCK, callers))
                    figures[f"raw-{suffix}"].append(sum(raw_blocks) / len(raw_blocks))
                    figures[f"hermes-{suffix}"].append(sum(hermes_blocks) / len(hermes_blocks))
    return {key: median(values) for key, values in figures.items()}


def show(transport: str, figures: dict[str, float]) -> None:
    rows = []
    for mode, label in (("seq", "sequential"), ("8", "8 concurrent callers")):
        raw, ours = figures[f"raw-{mode}"], figures[f"hermes-{mode}"]
        rows.append((f"{label}: raw SDK", f"{raw * 1e6:8.1f} µs/call"))
        rows.append((f"{label}: hermes", f"{ours * 1e6:8.1f} µs/call   ratio {ours / raw:.3f} (goal <= 1.05)"))
    report(f"per-call cost, {transport}", rows)


async def main(total: int, rounds: int) -> None:
    stdio = StdioServerParameters(command=PYTHON, args=[SERVER])
    for mode, era in ERAS.items():
        show(f"stdio, MCP {era}", await measure(stdio, {"command": PYTHON, "args": [SERVER]}, mode, total, rounds))
    with toolbox_http() as url:
        for mode, era in ERAS.items():
            show(f"Streamable HTTP, MCP {era}", await measure(url, {"url": url}, mode, total, rounds))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    anyio.run(main, args.calls, args.rounds)
