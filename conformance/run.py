"""Run the official MCP conformance suite against hermes, as a server and as a client.

    python conformance/run.py [server] [client]      (both when neither is named)

Server: `hermes mcp serve --http --only conformance --no-prefix --no-auth` stands in front of
`tests/servers/conformance_server.py` (an SDK server with the suite's test tools, resources and
prompts), and the suites' server scenarios run through the aggregator for each protocol version.
Client: the suite starts a scenario server per scenario and runs `conformance/client.py URL`,
which drives the real `hermes` CLI (`mcp test`, `mcp login`, `tools call`) against it; at most one
client per core runs at a time (conformance/slots.py), and no scenario is retried.

Two pinned suites run: 0.1.16 and 0.2.0-alpha.12 (whose requirement sets name exactly what the
2025-11-25 and 2026-07-28 revisions require). Failures are judged against each suite's expected
failures (`conformance/expected-failures*.yml`: only what cannot apply to hermes, each with its
reason): a new failure or a stale entry fails the run. Everything stays on loopback;
the npm packages come from `tests/npm/package-lock.json` (installed on first use).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import slots  # noqa: E402

from tests.npm_tools import NpmTools, install  # noqa: E402  (the repository's own pinned npm tools)

HERE = Path(__file__).resolve().parent
SERVE_READY = re.compile(r"hermes MCP server on (http://\S+)")
STARTUP_LIMIT = 120.0
# A client scenario's time counts from its start by the suite, waiting for a slot included: at most
# 52 scenarios queue on two slots, a few seconds each at idle, several times that on a loaded machine.
CLIENT_TIMEOUT_MS = 900_000


@dataclass(frozen=True)
class Suite:
    """One pinned release of the suite, what of it runs, and the failures it is allowed."""

    name: str
    command: Callable[[NpmTools], list[str]]
    baseline: Path
    server_runs: tuple[tuple[str, ...], ...]  # the selection arguments of each server run
    client_runs: tuple[tuple[str, ...], ...]


SUITES = (
    Suite("0.1.16", lambda npm: npm.conformance, HERE / "expected-failures.yml",
          server_runs=(("--spec-version", "2025-06-18"), ("--spec-version", "2025-11-25"), ("--suite", "pending")),
          # The 2025-03-26 set adds the authorization fallbacks of that revision.
          client_runs=tuple(("--suite", "all", "--spec-version", v) for v in ("2025-06-18", "2025-11-25",
                                                                               "2025-03-26"))),
    # 0.2.0-alpha.12 has requirement sets (exactly the scenarios a revision requires) for 2025-11-25
    # and 2026-07-28; 2025-06-18 is every scenario of that version.
    Suite("0.2.0-alpha.12", lambda npm: npm.conformance_next, HERE / "expected-failures-0.2.yml",
          server_runs=(("--suite", "all", "--spec-version", "2025-06-18"), ("--requirements", "2025-11-25"),
                       ("--requirements", "2026-07-28")),
          client_runs=(("--suite", "all", "--spec-version", "2025-06-18"), ("--requirements", "2025-11-25"),
                       ("--requirements", "2026-07-28"))),
)


def _suite(npm: NpmTools, suite: Suite, *args: str, output: Path,
           extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [*suite.command(npm), *args, "--expected-failures", str(suite.baseline), "-o", str(output)]
    return subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0", **(extra_env or {})})


def _summary(run: subprocess.CompletedProcess[str]) -> str:
    """The suite's own verdict lines: per-scenario marks, the total, and the baseline check."""
    keep = [line for line in run.stdout.splitlines()
            if line.startswith(("✓", "✗", "Total:", "Baseline", "Unexpected", "Stale", "  ✗", "  ✓"))]
    return "\n".join(keep) if keep else (run.stdout + run.stderr)[-4000:]


def _start_serve(home: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    (home / "config.yaml").write_text(
        "mcp_servers:\n"
        "  conformance:\n"
        f"    command: {sys.executable}\n"
        f"    args: [{ROOT / 'tests' / 'servers' / 'conformance_server.py'}]\n")
    with log.open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "hermes", "mcp", "serve", "--http", "--only", "conformance", "--no-prefix",
             "--no-auth", "--wait", str(STARTUP_LIMIT)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
            env={**os.environ, "HERMES_HOME": str(home)})
    deadline = time.monotonic() + STARTUP_LIMIT
    while time.monotonic() < deadline and process.poll() is None:
        found = SERVE_READY.search(log.read_text(errors="replace"))
        if found:
            return process, found.group(1)
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"hermes mcp serve did not start; its output:\n{log.read_text(errors='replace')}")


def _label(selection: tuple[str, ...]) -> str:
    return " ".join(a.removeprefix("--") for a in selection)


def run_server(npm: NpmTools, work: Path) -> bool:
    home = work / "serve-home"
    home.mkdir()
    process, url = _start_serve(home, work / "serve.log")
    passed = True
    try:
        for suite in SUITES:
            for number, selection in enumerate(suite.server_runs):
                started = time.monotonic()
                run = _suite(npm, suite, "server", "--url", url, *selection,
                             output=work / f"server-{suite.name}-{number}")
                print(f"== suite {suite.name}, server scenarios ({_label(selection)}), through hermes mcp serve "
                      f"({time.monotonic() - started:.1f} s)")
                print(_summary(run))
                passed &= run.returncode == 0
    finally:
        process.terminate()
        process.wait(timeout=60)
    return passed


def run_client(npm: NpmTools, work: Path) -> bool:
    passed = True
    adapter = f"{sys.executable} {HERE / 'client.py'}"
    cores = os.cpu_count() or 1
    for suite in SUITES:
        for number, selection in enumerate(suite.client_runs):
            started = time.monotonic()
            # The suite starts every scenario at once; the clients take turns on one slot per core.
            bounded = slots.prepare(work / f"slots-{suite.name}-{number}", cores)
            run = _suite(npm, suite, "client", "--command", adapter, *selection,
                         "--timeout", str(CLIENT_TIMEOUT_MS), output=work / f"client-{suite.name}-{number}",
                         extra_env=bounded)
            print(f"== suite {suite.name}, client scenarios ({_label(selection)}), hermes as the client "
                  f"({time.monotonic() - started:.1f} s)")
            print(_summary(run))
            passed &= run.returncode == 0
    return passed


def main(argv: list[str]) -> int:
    wanted = set(argv) or {"server", "client"}
    unknown = wanted - {"server", "client"}
    if unknown:
        print(f"usage: python conformance/run.py [server] [client] (not {', '.join(sorted(unknown))})")
        return 2
    npm = install()
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-") as scratch:
        work = Path(scratch)
        passed = True
        if "server" in wanted:
            passed &= run_server(npm, work)
        if "client" in wanted:
            passed &= run_client(npm, work)
    print("conformance: " + ("passed (every failure is an expected one)" if passed else "FAILED"))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
