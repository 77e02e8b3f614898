"""Resident memory of a session holding 10 stdio connections.

Baseline, measured in the same run: this process after importing the SDK and hermes, before any
connection. Goal: <= 120 MB for the session process (children are separate processes).
"""

from __future__ import annotations

import anyio
import psutil

from bench.common import PYTHON, REPO, report, temp_home
from hermes.session.core import Session

SERVER = str(REPO / "tests" / "servers" / "toolbox.py")


async def main() -> None:
    me = psutil.Process()
    baseline = me.memory_info().rss
    servers = {f"s{i}": {"command": PYTHON, "args": [SERVER]} for i in range(10)}
    with temp_home(servers) as home:
        async with Session(home) as session:
            assert all(c.connected for c in session.snapshots().values())
            for name in session.snapshots():
                await session.call(f"mcp__{name}__echo", {"text": "warm"})
            held = me.memory_info().rss
            children = sum(p.memory_info().rss for p in me.children())
    mb = 1024 * 1024
    report("memory of a session with 10 stdio connections", [
        ("after imports, no connection (baseline)", f"{baseline / mb:6.1f} MB"),
        ("session holding 10 connections", f"{held / mb:6.1f} MB   (+{(held - baseline) / mb:.1f} MB; goal <= 120 MB)"),
        ("(the 10 server processes, for scale)", f"{children / mb:6.1f} MB"),
    ])


if __name__ == "__main__":
    anyio.run(main)
