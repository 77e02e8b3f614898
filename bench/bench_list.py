"""`hermes mcp list --json` with 20 servers configured, against a bare Python start.

Goal: median <= 150 ms, and the `mcp` SDK is never imported (checked with -X importtime).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

from bench.common import PYTHON, median, report, temp_home


def wall(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main(runs: int) -> None:
    servers = {f"s{i:02d}": {"command": "npx", "args": ["-y", f"@example/server-{i}"]} for i in range(20)}
    with temp_home(servers) as home:
        env = {**os.environ, "HERMES_HOME": str(home.root)}
        # An installed hermes has its bytecode compiled; an editable checkout under
        # PYTHONDONTWRITEBYTECODE would recompile every module on every start and measure the compiler.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        wall([PYTHON, "-m", "hermes", "mcp", "list", "--json"], env)
        bare = [wall([PYTHON, "-c", "pass"], env) for _ in range(runs)]
        # The floor of any CLI that reads round-trip YAML with click: shows how fast this machine is today.
        floor = [wall([PYTHON, "-c", "import click, ruamel.yaml"], env) for _ in range(runs)]
        listing = [wall([PYTHON, "-m", "hermes", "mcp", "list", "--json"], env) for _ in range(runs)]
        trace = subprocess.run([PYTHON, "-X", "importtime", "-m", "hermes", "mcp", "list", "--json"], env=env,
                               capture_output=True, text=True, check=True).stderr
    modules = {line.rsplit("|", 1)[-1].strip() for line in trace.splitlines() if line.startswith("import time:")}
    sdk = sorted(m for m in modules if m.split(".")[0] in {"mcp", "mcp_types", "httpx2"})
    a, f, b = median(bare), median(floor), median(listing)
    report("hermes mcp list --json, 20 servers", [
        ("bare python3 -c pass (baseline)", f"{a * 1000:6.1f} ms"),
        ("import click, ruamel.yaml (floor)", f"{f * 1000:6.1f} ms"),
        ("hermes mcp list --json", f"{b * 1000:6.1f} ms median of {runs}   (goal <= 150 ms; "
                                   f"{b / a:.1f}x a bare start, {b / f:.1f}x the floor)"),
        ("SDK modules imported", ", ".join(sdk) if sdk else "none (goal: none)"),
    ])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    main(parser.parse_args().runs)
