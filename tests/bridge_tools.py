"""The bridge server of a real desktop-app plugin, from PyPI, in a virtual environment of its own.

`blender-mcp` (with `mcp-for-blender`, the package it hands off to) speaks MCP over stdio to hermes
and raw JSON over TCP to Blender's add-on. It needs an older `mcp` than hermes, hence its own
environment, pinned by `tests/bridges/blender-mcp.txt`, installed once per checkout into
`.cache/bridges/` (ignored by git). Installing reaches PyPI; the tests then run it with telemetry off
(`DISABLE_TELEMETRY=1`), against a stand-in for Blender on loopback.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

PINS = Path(__file__).parent / "bridges" / "blender-mcp.txt"
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "bridges"


def install_blender_bridge() -> Path:
    """The folder holding the `blender-mcp` executable (installed on first use; safe across workers)."""
    venv = CACHE / "blender-mcp"
    stamp = venv / ".installed"
    digest = hashlib.sha256(PINS.read_bytes()).hexdigest()
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE / "blender-mcp.lock"), timeout=900):
        if not (stamp.exists() and stamp.read_text() == digest):
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                            "-r", str(PINS)], check=True, timeout=900, stdin=subprocess.DEVNULL)
            stamp.write_text(digest)
    return venv / "bin"
