"""Large tool results: MB/s against result size, over stdio and Streamable HTTP.

hermes's stdio transport splits lines in linear time, so its MB/s stays flat as results grow;
the SDK's own `stdio_client` (the baseline, measured in the same run on the same server) re-splits
its whole buffer on every chunk and slows down as the result grows. Over HTTP, hermes lifts the
SDK's 1 MiB limit on one SSE event. Figures are for the raw transfer (the model-facing 2,000,000
character cap applies after it).
"""

from __future__ import annotations

import argparse
import io
import os
import time

import anyio
from mcp import Client, StdioServerParameters

from bench.common import PYTHON, TOOLBOX, median, report, toolbox_http
from hermes.mcp.stdio import StdioProcess
from hermes.security.redact import Redactor

SERVER = str(TOOLBOX)
ENV = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}


async def _time(client: Client, size: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = await client.call_tool("big", {"size": size})
        times.append(time.perf_counter() - started)
        assert not result.is_error
    return median(times)


async def hermes_stdio(size: int, rounds: int) -> float:
    process = StdioProcess(PYTHON, [SERVER], env=ENV, cwd=None, log=io.StringIO(), redact=Redactor())
    async with Client(process, mode="legacy") as client:
        return await _time(client, size, rounds)


async def sdk_stdio(size: int, rounds: int) -> float:
    async with Client(StdioServerParameters(command=PYTHON, args=[SERVER]), mode="legacy") as client:
        return await _time(client, size, rounds)


async def hermes_http(url: str, size: int, rounds: int) -> float:
    from hermes.mcp.transports import HttpStatus, streamable_http

    async with Client(streamable_http(url, {}, None, HttpStatus()), mode="legacy") as client:
        return await _time(client, size, rounds)


def _rate(size: int, seconds: float) -> str:
    return f"{size / seconds / 1e6:7.1f} MB/s ({seconds * 1000:6.0f} ms)"


async def main(sizes: list[int], sdk_limit: int, rounds: int) -> None:
    with toolbox_http() as url:
        rows = []
        for size in sizes:
            ours = await hermes_stdio(size, rounds)
            theirs = await sdk_stdio(size, rounds) if size <= sdk_limit else None
            http = await hermes_http(url, size, rounds)
            baseline = f"   SDK stdio_client {_rate(size, theirs)}" if theirs else "   SDK stdio_client: skipped"
            rows.append((f"{size / 1e6:5.0f} MB", f"hermes stdio {_rate(size, ours)}{baseline}   "
                                                    f"hermes HTTP {_rate(size, http)}"))
    report("large results: throughput by size (flat MB/s = linear)", rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,5,20,50", help="result sizes in MB, comma-separated")
    parser.add_argument("--sdk-limit", type=int, default=20, help="largest size (MB) to try with the SDK baseline")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    anyio.run(main, [int(float(s) * 1_000_000) for s in args.sizes.split(",")], args.sdk_limit * 1_000_000,
              args.rounds)
