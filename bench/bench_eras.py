"""Per-call cost of MCP 2026-07-28 (stateless, one POST a request on a kept-alive connection) vs the
2025-11-25 handshake era, over Streamable HTTP, to a server and through `hermes mcp serve --http`.

The client is the official SDK's `Client` in both modes (`mode="legacy"` and `mode="2026-07-28"`),
and hermes itself (a session whose server entries pin `protocol:` to each era);
the baseline is the legacy figure of the same target in the same run. Calls run in blocks that
alternate between the modes, so drift in machine load hits both alike.

Before hermes set TCP_NODELAY on its listening sockets, a 2026-07-28 call paid about 45 ms for the
client's delayed ACK on every kept-alive connection (legacy opens a fresh connection per POST and
never waited). Goal: 2026-07-28 / legacy <= 1.1 on both targets.

    python -m bench.bench_eras [--calls 600]
"""

from __future__ import annotations

import argparse
import os
import time

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.common import median, report, temp_home, toolbox_http
from tests.support import start_serve_http

BLOCK = 100
MODES = ("legacy", "2026-07-28")


async def per_call(url: str, token: str | None, mode: str, calls: int, tool: str) -> float:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        await client.call_tool(tool, {"text": "x"})  # warm: the connection, the tool list
        started = time.perf_counter()
        for _ in range(calls):
            await client.call_tool(tool, {"text": "x"})
        return (time.perf_counter() - started) / calls


async def compare(url: str, token: str | None, calls: int, tool: str) -> dict[str, float]:
    blocks: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(calls // BLOCK):
        for mode in MODES:
            blocks[mode].append(await per_call(url, token, mode, BLOCK, tool))
    return {mode: median(values) for mode, values in blocks.items()}


async def through_hermes(url: str, calls: int) -> dict[str, float]:
    """hermes as the client: one session per era (`protocol:` pinned), calls alternating in blocks."""
    from hermes.session.core import Session

    entries = {mode: {"url": url, "protocol": mode} for mode in MODES}
    with temp_home(entries) as home:
        async with Session(home) as session:
            for mode in MODES:
                snapshot = session.snapshots()[mode]
                assert snapshot.connected and snapshot.protocol in (mode, "2025-11-25"), snapshot.reason
                await session.call(f"mcp__{mode.replace('-', '_')}__echo", {"text": "x"})
            blocks: dict[str, list[float]] = {mode: [] for mode in MODES}
            for _ in range(calls // BLOCK):
                for mode in MODES:
                    name = f"mcp__{mode.replace('-', '_')}__echo"
                    started = time.perf_counter()
                    for _ in range(BLOCK):
                        await session.call(name, {"text": "x"})
                    blocks[mode].append((time.perf_counter() - started) / BLOCK)
    return {mode: median(values) for mode, values in blocks.items()}


def rows(figures: dict[str, float]) -> list[tuple[str, str]]:
    legacy, modern = figures["legacy"], figures["2026-07-28"]
    return [("2025-11-25 (handshake), baseline", f"{legacy * 1e3:7.2f} ms/call"),
            ("2026-07-28 (stateless)", f"{modern * 1e3:7.2f} ms/call   ratio {modern / legacy:.2f} (goal <= 1.1)")]


async def main(calls: int) -> None:
    with toolbox_http() as url, temp_home({"box": {"url": url}}) as home:
        report("per call, SDK client -> an SDK server (hermes's test server)",
               rows(await compare(url, None, calls, "echo")))
        report("per call, hermes as the client (a session, protocol pinned) -> that server",
               rows(await through_hermes(url, calls)))
        process, serve_url, token = start_serve_http(home, home.root / "serve.log")
        try:
            report("per call, SDK client -> hermes mcp serve --http -> that server",
                   rows(await compare(serve_url, token, calls, "mcp__box__echo")))
        finally:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=600)
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    anyio.run(main, args.calls)
