"""`hermes mcp list --json` with 20 servers configured, against the floor of any CLI that reads
round-trip YAML with click (`python3 -c "import click, ruamel.yaml"`) and a bare Python start.
Shown beside them, not judged: the same floor also reading the 20 servers' config.yaml the
round-trip way (what hermes must do before it can list anything, or name a mistake's line).

The four commands run in the same rounds, the order turned every round. Goals: at most 1.2x the
floor, and the `mcp` SDK never imported (checked with -X importtime).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from functools import partial
from pathlib import Path

from bench.common import MIN_ROUNDS, PYTHON, interleaved, ratio, report, spread, temp_home

# The command users run: the installed entry point (`python -m hermes` adds runpy's own imports).
HERMES = str(Path(PYTHON).parent / "hermes")
if not Path(HERMES).exists():
    raise SystemExit(f"bench_list measures the installed command; {HERMES} is missing (pip install -e .)")


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
        # Beside the goal's floor: the same imports reading this very file the round-trip way, which
        # any command that lists it (and can name the line of a mistake in it) does too.
        reading = f"import click, ruamel.yaml; ruamel.yaml.YAML(typ='rt').load(open({str(home.config)!r}))"
        commands = {"bare": [PYTHON, "-c", "pass"], "floor": [PYTHON, "-c", "import click, ruamel.yaml"],
                    "reading": [PYTHON, "-c", reading], "listing": [HERMES, "mcp", "list", "--json"]}
        for command in commands.values():  # warm the page cache for every side
            wall(command, env)
        figures = interleaved({name: partial(wall, command, env) for name, command in commands.items()}, runs)
        trace = subprocess.run([PYTHON, "-X", "importtime", HERMES, "mcp", "list", "--json"], env=env,
                               capture_output=True, text=True, check=True).stderr
    modules = {line.rsplit("|", 1)[-1].strip() for line in trace.splitlines() if line.startswith("import time:")}
    sdk = sorted(m for m in modules if m.split(".")[0] in {"mcp", "mcp_types", "httpx2"})
    bare, floor, reading, listing = figures["bare"], figures["floor"], figures["reading"], figures["listing"]
    report(f"hermes mcp list --json, 20 servers ({runs} rounds)", [
        ("python3 -c pass", spread(bare, 1000, "ms")),
        ("import click, ruamel.yaml (the floor)", spread(floor, 1000, "ms")),
        ("the floor reading this config (round-trip)", spread(reading, 1000, "ms")),
        ("hermes mcp list --json", spread(listing, 1000, "ms")),
        ("  against the floor", ratio(listing, floor, goal=1.2)),
        ("  against the floor reading the config", ratio(listing, reading)),
        ("  against a bare start", ratio(listing, bare)),
        ("SDK modules imported", ", ".join(sdk) if sdk else "none (goal: none)"),
    ])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=max(MIN_ROUNDS, 21))
    main(parser.parse_args().runs)
