"""Real third-party stdio servers from PyPI, each in a virtual environment of its own.

The bridge server of a real desktop-app plugin, and the reference git server.

`blender-mcp` (with `mcp-for-blender`, the package it hands off to) speaks MCP over stdio to hermes
and raw JSON over TCP to Blender's add-on. It needs an older `mcp` than hermes, hence its own
environment, pinned by `tests/bridges/blender-mcp.txt`; `mcp-server-git` likewise by
`tests/bridges/mcp-server-git.txt`, and the fastmcp client by `tests/bridges/fastmcp.txt`. Each is
installed once into the test-tools cache (`tests/npm_tools.tool_cache()`, one venv per pin file
digest, shared by the machine's checkouts). Installing reaches PyPI; the tests then run it with telemetry off
(`DISABLE_TELEMETRY=1`), against a stand-in for Blender on loopback.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from tests.npm_tools import tool_cache

PINNED = Path(__file__).parent / "bridges"


def install_blender_bridge() -> Path:
    """The folder holding the `blender-mcp` executable (installed on first use; safe across workers)."""
    return install_pinned("blender-mcp")


def install_pinned(name: str) -> Path:
    """The `bin` folder of the venv for `tests/bridges/NAME.txt` (installed on first use; safe across workers)."""
    pins = PINNED / f"{name}.txt"
    digest = hashlib.sha256(pins.read_bytes()).hexdigest()
    cache = tool_cache() / "bridges"
    venv = cache / f"{name}-{digest[:16]}"
    stamp = venv / ".installed"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache / f"{name}-{digest[:16]}.lock"), timeout=900):
        if not (stamp.exists() and stamp.read_text() == digest):
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                            "-r", str(pins)], check=True, timeout=900, stdin=subprocess.DEVNULL)
            stamp.write_text(digest)
    return venv / "bin"
