"""Blender, the way the tests meet it: the real bridge from PyPI and a stand-in for the app itself.

The plugin has the Blender shape: its MCP server is the stdio bridge `blender-mcp`, told where the
app listens through `${runtime.host}` / `${runtime.port}` in its environment. The stand-in app
(`servers/stand_in_blender.py`) is installed where the plugin says Blender is, picks a new port and
token at every start, publishes them in its runtime file, and removes the file when it quits.
The fixtures `bridge_bin` and `blender` are in `tests/conftest.py`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes.apps.declaration import EXTENSION_KEY
from hermes.home import Home
from tests.plugins.test_plugins import make_repo
from tests.support import SERVERS, wait_for


class StandIn:
    """The stand-in Blender, installed where the plugin says Blender is, started and stopped."""

    def __init__(self, home: Home) -> None:
        self.path = home.root / "apps" / "blender"
        self.runtime = home.root / "blender-run" / "server.json"
        self.processes: list[subprocess.Popen[bytes]] = []

    def install(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SERVERS / "stand_in_blender.py", self.path)
        self.path.chmod(0o755)

    def start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen([sys.executable, str(self.path), "--runtime-file", str(self.runtime)],
                                   stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes.append(process)

        def published() -> bool:
            try:
                return bool(json.loads(self.runtime.read_text()).get("pid") == process.pid)
            except (OSError, ValueError):
                return False

        return process if wait_for(published) else pytest.fail("the stand-in never published its endpoint")

    def stop(self, process: subprocess.Popen[bytes] | None = None) -> None:
        for running in [process] if process else list(self.processes):
            if running.poll() is None:
                running.terminate()
                running.wait(timeout=30)
            self.processes.remove(running)


def plugin_repo(tmp_path: Path, *, title: str | None = None, sandbox: dict[str, Any] | None = None) -> Path:
    declaration: dict[str, Any] = {
        "app": {"linux": {"presence": "executable", "location": "$HERMES_HOME/apps/blender"}},
        "requires": {"app": True},
        "liveness": {"kind": "server_json", "path": "$HERMES_HOME/blender-run/server.json"},
        **({"sandbox": sandbox} if sandbox else {})}
    files = {
        "plugin.json": json.dumps({"name": "blender", "version": "0.2.0", "description": "Blender through its bridge",
                                   **({"title": title} if title else {}),
                                   "extensions": {EXTENSION_KEY: {"servers": {"blender": declaration}}}}),
        "mcp.json": json.dumps({"mcpServers": {"blender": {
            "type": "stdio", "command": "blender-mcp",
            "env": {"BLENDER_HOST": "${runtime.host}", "BLENDER_PORT": "${runtime.port}",
                    "BLENDER_SESSION_TOKEN": "${runtime.token}", "DISABLE_TELEMETRY": "1",
                    "XDG_DATA_HOME": "${PLUGIN_DATA}"}}}}),
    }
    repo = tmp_path / "hermes-plugin-blender"
    make_repo(repo, files)
    return repo
