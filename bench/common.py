"""Helpers shared by the benchmarks: temporary homes, configs, interleaved rounds and a small report format.

Every comparison runs its baseline and its subject in the same rounds, one after the other, with
the order turned round every round (a baseline that always went first would always meet a cooler
or a warmer machine), for at least five rounds; figures are the minimum (what the code costs
when nothing else gets in the way) and the median (what a user meets); a ratio adds the median of
the rounds' own ratios, which load that drifts between rounds does not move.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskStatus
from ruamel.yaml import YAML

from hermes.home import Home

BENCH = Path(__file__).parent
REPO = BENCH.parent
PYTHON = sys.executable
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"


@contextmanager
def temp_home(servers: dict[str, dict[str, Any]]) -> Iterator[Home]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as root:
        home = Home(Path(root))
        with home.config.open("w") as handle:
            YAML().dump({"mcp_servers": servers}, handle)
        yield home


MIN_ROUNDS = 5


@asynccontextmanager
async def side_by_side(*contexts: AbstractAsyncContextManager[Any]) -> AsyncIterator[list[Any]]:
    """Enter each context in a task of its own and yield what they give, all open at once.

    Entered one inside the other, the inner one's tasks would sit under the outer one's cancel
    scopes, which anyio walks at some checkpoints: the inner side could pay for the outer side's
    nesting. Side by side, both sides' tasks sit at the same depth, whatever nesting costs. (One
    measurement put six levels at 1.5 % of an HTTP call; a later A/B of a raw client under five
    levels against a flat one found no difference within its ±0.3 %.)"""
    done = anyio.Event()

    async def hold(context: AbstractAsyncContextManager[Any], *, task_status: TaskStatus[Any]) -> None:
        async with context as entered:
            task_status.started(entered)
            await done.wait()

    async with anyio.create_task_group() as tasks:
        try:
            yield [await tasks.start(hold, context) for context in contexts]
        finally:
            done.set()


def median(values: list[float]) -> float:
    return statistics.median(values)


def _orders(names: list[str], rounds: int) -> Iterator[list[str]]:
    """The running order of each round: rotated by one every round, so each subject goes first as often."""
    if rounds < MIN_ROUNDS:
        raise SystemExit(f"a comparison needs at least {MIN_ROUNDS} rounds (asked for {rounds})")
    for number in range(rounds):
        shift = number % len(names)
        yield names[shift:] + names[:shift]


def interleaved(subjects: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each subject's figures over `rounds` rounds, every round running every subject once."""
    figures: dict[str, list[float]] = {name: [] for name in subjects}
    for order in _orders(list(subjects), rounds):
        for name in order:
            figures[name].append(subjects[name]())
    return figures


async def interleaved_async(subjects: Mapping[str, Callable[[], Awaitable[float]]],
                            rounds: int) -> dict[str, list[float]]:
    """`interleaved` for subjects measured in the event loop."""
    figures: dict[str, list[float]] = {name: [] for name in subjects}
    for order in _orders(list(subjects), rounds):
        for name in order:
            figures[name].append(await subjects[name]())
    return figures


def spread(values: list[float], scale: float, unit: str) -> str:
    """'min 1.2 ms, median 1.4 ms' for figures in seconds shown in a unit `scale` times smaller."""
    return f"min {min(values) * scale:8.2f} {unit}, median {median(values) * scale:8.2f} {unit}"


def ratio(subject: list[float], baseline: list[float], goal: float | None = None) -> str:
    """The subject over the baseline: by minimum, by median and, when both were measured in the same
    rounds (`interleaved`), the median of each round's own ratio. A round's two figures met the same
    machine, so that one is what drift in load cannot move; the goal is judged on it when it exists."""
    by_min, by_median = min(subject) / min(baseline), median(subject) / median(baseline)
    shown = f"ratio min {by_min:.3f}, median {by_median:.3f}"
    judged = by_median
    if len(subject) == len(baseline):
        judged = median([ours / theirs for ours, theirs in zip(subject, baseline, strict=True)])
        shown += f", round by round {judged:.3f}"
    verdict = ""
    if goal is not None:
        verdict = f" (goal <= {goal:g}: {'held' if judged <= goal else 'NOT held'})"
    return shown + verdict


def report(title: str, rows: list[tuple[str, str]]) -> None:
    print(f"\n== {title}")
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label.ljust(width)}  {value}")


@contextmanager
def toolbox_http() -> Iterator[str]:
    """The suite's SDK test server over Streamable HTTP on loopback: its /mcp URL; stopped at the end."""
    from tests.support import start_portfile_server

    with tempfile.TemporaryDirectory() as scratch:
        portfile = Path(scratch) / "port"
        server, port = start_portfile_server([PYTHON, str(TOOLBOX), "--http", str(portfile)], portfile)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.kill()
            server.wait()
