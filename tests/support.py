"""Helpers every test module uses: config writers, the CLI in-process and as a process, waiting.

Tests wait for *conditions*, never for a fixed time: `wait_until` / `wait_for` check a predicate
until it holds and fail only after a generous bound, so a loaded machine makes them slower,
never red.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from hermes.home import Home

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

SERVERS = Path(__file__).parent / "servers"
PYTHON = sys.executable
CANARY = "canary-Zq8Lm2Xw9Tt4"
# How long a condition may take to come true before the test fails. Generous on purpose: the
# bound exists to end a broken test, not to measure anything.
PATIENCE = 60.0


def _sandbox_problem() -> str | None:
    from hermes.mcp.sandbox_support import support

    found = support()
    return None if found.available else found.problem


# For the tests whose subject is the sandbox itself: skipped, with bubblewrap's own reason, where
# it cannot build one (not installed, user namespaces refused). `.ci/run` installs it.
needs_sandbox = pytest.mark.skipif(_sandbox_problem() is not None,
                                   reason=f"bubblewrap cannot build a sandbox here: {_sandbox_problem()}")


def stdio_entry(script: str = "toolbox.py", *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": PYTHON, "args": [str(SERVERS / script), *args], **extra}


def fast_entry(*args: str, **extra: Any) -> dict[str, Any]:
    """A server that starts in milliseconds (`servers/fast.py`: the protocol, no SDK)."""
    return stdio_entry("fast.py", *args, **extra)


def write_config(home: Home, data: dict[str, Any]) -> None:
    buf = io.StringIO()
    YAML().dump(data, buf)
    home.config.write_text(buf.getvalue())


@dataclass
class Ran:
    """What a run of the CLI left: the same three fields for in-process and real runs."""

    returncode: int
    stdout: str
    stderr: str


def hermes(*args: str, home: Home, env: dict[str, str] | None = None, input: str | None = None) -> Ran:
    """Run the CLI in-process (click's CliRunner), as a user would see it: output and exit code."""
    from hermes.cli.main import cli

    runner = CliRunner()
    result = runner.invoke(cli, list(args), input=input, catch_exceptions=False, prog_name="hermes",
                           env={"HERMES_HOME": str(home.root), "NO_COLOR": "1", **(env or {})})
    return Ran(result.exit_code, result.stdout, result.stderr)


def hermes_process(*args: str, home: Home, env: dict[str, str] | None = None, timeout: float = 120,
                   input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `hermes` in a subprocess: for when the process is the point (signals, cold start)."""
    full_env = {**os.environ, "HERMES_HOME": str(home.root), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([PYTHON, "-m", "hermes", *args], env=full_env, capture_output=True, text=True,
                          timeout=timeout, input=input)


# How long a test's `hermes mcp serve` or one-shot chat waits for its servers' first attempts
# before it answers: the default (5 s) lets a slow server join later, and a loaded machine can take
# longer than that to start an SDK server, so a test that calls at once would race the start.
START_WAIT = ("--wait", str(PATIENCE))


def serve_params(home: Home, *extra: str) -> StdioServerParameters:
    """How an SDK client starts `hermes mcp serve` over stdio for `home`."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=PYTHON, args=["-m", "hermes", "mcp", "serve", *START_WAIT, *extra],
                                 env={"HERMES_HOME": str(home.root), "NO_COLOR": "1", "PATH": os.environ["PATH"]})


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(predicate: Callable[[], bool], timeout: float = PATIENCE) -> bool:
    """Block until `predicate()` holds (True) or `timeout` passes (False)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def start_portfile_server(command: list[str], portfile: Path, timeout: float = PATIENCE
                          ) -> tuple[subprocess.Popen[bytes], str]:
    """Start a test server that writes its loopback port into `portfile`: (the process, the port).

    A server that exits first, or never writes the file, fails the caller at once (and is killed)
    instead of leaving it waiting."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_for(lambda: portfile.exists() or process.poll() is not None, timeout) or not portfile.exists():
        process.kill()
        process.wait()
        raise RuntimeError(f"{' '.join(command[1:2])} did not start (no port in {portfile})")
    return process, portfile.read_text()


class ServerPool:
    """Test servers a fixture starts (each publishing its port in a file); all killed at its end."""

    def __init__(self, folder: Path, kind: str) -> None:
        self.folder = folder
        self.kind = kind  # each pool's port files have their own names, so two pools in one test never mix
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, command: Callable[[Path], list[str]], timeout: float = PATIENCE) -> str:
        """Run `command(portfile)`; its port."""
        portfile = self.folder / f"{self.kind}-port-{len(self.processes)}"
        process, port = start_portfile_server(command(portfile), portfile, timeout)
        self.processes.append(process)
        return port

    def close(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


def start_serve_http(home: Home, log: Path, *options: str) -> tuple[subprocess.Popen[bytes], str, str]:
    """`hermes mcp serve --http` (and `options`) with its stderr in `log`: (the process, its URL, its
    bearer token)."""
    with log.open("w") as errors:
        process = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "serve", "--http", *START_WAIT, *options],
                                   stdout=subprocess.DEVNULL, stderr=errors,
                                   env={**os.environ, "HERMES_HOME": str(home.root)})
    if not wait_for(lambda: "Authorization: Bearer" in log.read_text()):
        process.kill()
        process.wait()
        raise AssertionError(f"serve --http printed no token: {log.read_text()}")
    lines = log.read_text().splitlines()
    url = next(line.split(" on ")[1] for line in lines if "MCP server on" in line)
    token = next(line.split("Bearer ")[1] for line in lines if line.startswith("Authorization"))
    return process, url, token


@contextlib.contextmanager
def serving_http(home: Home, log: Path, *options: str) -> Iterator[tuple[str, str]]:
    """`start_serve_http` for the block: (its URL, its bearer token); stopped and waited for at the end."""
    process, url, token = start_serve_http(home, log, *options)
    try:
        yield url, token
    finally:
        process.terminate()
        process.wait(timeout=PATIENCE)


@contextlib.asynccontextmanager
async def sdk_client_over_http(url: str, token: str, **options: Any) -> AsyncIterator[Client]:
    """The official SDK's `Client` (with `options`: era, callbacks) of the Streamable HTTP server at
    `url`, sending `token` as its bearer."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=PATIENCE) as http, \
            Client(streamable_http_client(url, http_client=http), **options) as client:
        yield client


async def wait_until(predicate: Callable[[], bool], timeout: float = PATIENCE) -> None:
    """In async tests: return once `predicate()` holds; fail the test after `timeout`."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


def unavailable(result: Any) -> dict[str, Any] | None:
    """The structured reason of a call that found its tool unavailable (SPEC 5.5); None otherwise."""
    from hermes.tools.call_result import NotAvailable

    return result.payload() if isinstance(result, NotAvailable) else None


def browser_env(folder: Path, mode: str = "follow") -> dict[str, str]:
    """The environment that makes Python's webbrowser start the fake browser (`servers/fake_browser.py`):
    it follows the authorization redirect back to hermes (`follow`), tampers with it, or only
    records it (`print`)."""
    return {"BROWSER": f"{PYTHON} {SERVERS / 'fake_browser.py'} %s", "FAKE_BROWSER_MODE": mode,
            "FAKE_BROWSER_LOG": str(folder / "browser.log"), "FAKE_BROWSER_OUT": str(folder / "redirect.txt")}
