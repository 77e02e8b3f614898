"""Shared fixtures: a temporary HERMES_HOME, real test servers, and the real `hermes` CLI."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from hermes.home import Home

SERVERS = Path(__file__).parent / "servers"
PYTHON = sys.executable
CANARY = "canary-Zq8Lm2Xw9Tt4"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    root = tmp_path / "hermes-home"
    root.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(root))
    monkeypatch.setenv("NO_COLOR", "1")
    return Home(root)


def stdio_entry(script: str = "toolbox.py", *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": PYTHON, "args": [str(SERVERS / script), *args], **extra}


def write_config(home: Home, data: dict[str, Any]) -> None:
    buf = io.StringIO()
    YAML().dump(data, buf)
    home.config.write_text(buf.getvalue())


def hermes(*args: str, home: Home, env: dict[str, str] | None = None, timeout: float = 90,
           input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    full_env = {**os.environ, "HERMES_HOME": str(home.root), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([PYTHON, "-m", "hermes", *args], env=full_env, capture_output=True, text=True,
                          timeout=timeout, input=input)


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(predicate: Callable[[], bool], timeout: float = 20, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start toolbox over Streamable HTTP on a free loopback port; returns its /mcp URL."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> str:
        portfile = tmp_path / f"port-{len(processes)}"
        process = subprocess.Popen([PYTHON, str(SERVERS / "toolbox.py"), "--http", str(portfile), *args],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(process)
        assert wait_for(portfile.exists, timeout=30), "test HTTP server did not start"
        return f"http://127.0.0.1:{portfile.read_text()}/mcp"

    yield start
    for process in processes:
        process.kill()
        process.wait()
