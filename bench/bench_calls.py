"""Per-call cost through hermes vs the raw SDK `Client.call_tool`, same server, stdio and HTTP.

For each transport and each protocol era: sequential calls, then 8 concurrent callers. Calls run
in blocks of 200, raw and hermes taking turns block by block with the order turned every pair, so
drift in machine load hits both sides alike; `--rounds` rounds of `--calls` calls each side, and
the figures are the minimum and median over the blocks. Both sides
speak the same era (hermes's entry pins it with `protocol:`): left to itself hermes speaks
2026-07-28 to a server that offers it, and an era's own cost is bench_eras's subject, not hermes's.
Both sides also ask the server for the same things: the raw client declares what hermes's client
declares (sampling, elicitation, the tasks extension) and asks for every log level, as hermes does
so that a server's log file gets all; in 2026-07-28 each request carries those (a third larger).
Goal: hermes / raw <= 1.02. Shown beside it, not judged: the raw client asking with the read
timeout hermes gives every call (the SDK arms a timer per request for it), so that what hermes's
own layers cost is told apart from what its timeout costs.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Awaitable, Callable
from functools import partial

import anyio
from mcp import Client, StdioServerParameters

from bench.common import (
    MIN_ROUNDS,
    PYTHON,
    TOOLBOX,
    interleaved_async,
    ratio,
    report,
    side_by_side,
    spread,
    temp_home,
    toolbox_http,
)
from hermes.mcp.task_extension import TasksExtension
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


async def _never_asked(*_: object) -> object:
    raise AssertionError("the echo tool asks its caller nothing")


async def _logged(*_: object) -> None:
    """The raw side hears the server's log lines, as hermes does (and drops them)."""


GOAL = 1.02


async def measure(raw_target: object, hermes_entry: dict[str, object], mode: str, total: int, rounds: int
                  ) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {}
    with temp_home({"box": {**hermes_entry, "protocol": mode}}) as home:
        raw_client = Client(raw_target, mode=mode, log_level="debug", extensions=[TasksExtension()],
                            sampling_callback=_never_asked, elicitation_callback=_never_asked, logging_callback=_logged)
        async with side_by_side(raw_client, Session(home)) as (client, session):
            assert session.snapshots()["box"].protocol == ERAS[mode], session.snapshots()["box"].protocol
            timeout = session.lifecycle.server_config("box").timeout  # type: ignore[union-attr]

            async def raw() -> object:
                return await client.call_tool("echo", {"text": "x"})

            async def raw_with_timeout() -> object:
                return await client.call_tool("echo", {"text": "x"}, read_timeout_seconds=timeout)

            async def through_hermes() -> object:
                return await session.call("mcp__box__echo", {"text": "x"})

            for call in (raw, raw_with_timeout, through_hermes):  # warm every path
                await timed(call, 200, 1)
            for callers, suffix in ((1, "seq"), (8, "8")):
                blocks = await interleaved_async({
                    "raw": partial(timed, raw, BLOCK, callers),
                    "timed": partial(timed, raw_with_timeout, BLOCK, callers),
                    "hermes": partial(timed, through_hermes, BLOCK, callers)}, rounds * (total // BLOCK))
                figures |= {f"{side}-{suffix}": values for side, values in blocks.items()}
    return figures


def show(transport: str, figures: dict[str, list[float]]) -> None:
    rows = []
    for mode, label in (("seq", "sequential"), ("8", "8 concurrent callers")):
        raw, timed_raw, ours = figures[f"raw-{mode}"], figures[f"timed-{mode}"], figures[f"hermes-{mode}"]
        rows.append((f"{label}: raw SDK", spread(raw, 1e6, "µs/call")))
        rows.append((f"{label}: hermes", spread(ours, 1e6, "µs/call")))
        rows.append(("", ratio(ours, raw, goal=GOAL)))
        rows.append(("  raw SDK with hermes's read timeout", spread(timed_raw, 1e6, "µs/call")))
        rows.append(("  hermes against it (shown, not judged)", ratio(ours, timed_raw)))
    report(f"per-call cost, {transport} ({len(figures['raw-seq'])} blocks of {BLOCK} calls a side)", rows)


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
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    anyio.run(main, args.calls, args.rounds)
