"""The Blender path end to end with the real bridge server from PyPI and a stand-in for Blender.

The plugin has the Blender shape: its MCP server is the stdio bridge `blender-mcp`, told where the
app listens through `${runtime.host}` / `${runtime.port}` in its environment. The app picks a new
port and token at every start and publishes them in its runtime file; the bridge reads its port
once, so hermes must restart it when the app moves. The whole path: the install gate, enable, a
call, an app restart on a new port (the next call works without user action), the app stopped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import psutil
import pytest

from hermes.apps.declaration import EXTENSION_KEY
from hermes.home import Home
from hermes.mcp.connection import RestartPolicy
from hermes.mcp.states import ConnectionState
from hermes.session.core import Session, SessionSettings
from tests.bridge_tools import install_blender_bridge
from tests.plugins.test_plugins import make_repo
from tests.support import SERVERS, hermes, unavailable, wait_for, wait_until

pytestmark = pytest.mark.anyio
TOOL = "mcp__blender__get_scene_info"


@pytest.fixture(scope="session")
def bridge_bin() -> Path:
    return install_blender_bridge()


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


@pytest.fixture
def blender(home: Home) -> Iterator[StandIn]:
    stand_in = StandIn(home)
    yield stand_in
    stand_in.stop()


def _plugin_repo(tmp_path: Path) -> Path:
    declaration = {"app": {"linux": {"presence": "executable", "location": "$HERMES_HOME/apps/blender"}},
                   "requires": {"app": True},
                   "liveness": {"kind": "server_json", "path": "$HERMES_HOME/blender-run/server.json"}}
    files = {
        "plugin.json": json.dumps({"name": "blender", "version": "0.2.0", "description": "Blender through its bridge",
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


async def test_the_real_bridge_follows_the_app_across_restarts(home: Home, tmp_path: Path, bridge_bin: Path,
                                                                blender: StandIn) -> None:
    env = {"PATH": f"{bridge_bin}{os.pathsep}{os.environ['PATH']}"}
    repo = _plugin_repo(tmp_path)
    refused = hermes("plugins", "install", str(repo), "--no-warm", home=home, env=env)
    assert refused.returncode == 1 and "server 'blender' is unavailable: missing_app" in refused.stderr
    blender.install()
    installed = hermes("plugins", "install", str(repo), "--enable", "--no-warm", home=home, env=env)
    assert installed.returncode == 0, installed.stderr

    # No restart budget at all: an app restart must not count as a crash.
    settings = SessionSettings(watch_interval=0.05, policy=RestartPolicy(attempts=0))
    async with Session(home, settings, environ={**os.environ, **env}) as session:
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "app_not_running", payload

        first = await anyio.to_thread.run_sync(blender.start)
        await wait_until(lambda: session.snapshots()["blender"].live_pid == first.pid)
        answer = await session.call(TOOL, {})
        assert not answer.is_error and "Cube" in answer.text and f'"app_pid": {first.pid}' in answer.text
        token = json.loads(blender.runtime.read_text())["token"]
        bridge = psutil.Process(session.snapshots()["blender"].pid)
        assert token not in " ".join(bridge.cmdline())  # passed through the environment, not argv
        assert session.redactor(token) == "[REDACTED]"

        # Blender restarts: the new instance publishes a new port and token while hermes is
        # connected to the old one; the bridge is restarted with the new values, no budget spent.
        second = await anyio.to_thread.run_sync(blender.start)
        blender.stop(first)
        await wait_until(lambda: session.snapshots()["blender"].live_pid == second.pid)
        answer = await session.call(TOOL, {})
        assert not answer.is_error and f'"app_pid": {second.pid}' in answer.text, answer.text
        snapshot = session.snapshots()["blender"]
        assert snapshot.state is ConnectionState.CONNECTED and snapshot.restarts == 1

        # Stopped and started again: the tools come back by themselves.
        blender.stop(second)
        await wait_until(lambda: TOOL not in session.surface().tools)
        third = await anyio.to_thread.run_sync(blender.start)
        await wait_until(lambda: session.snapshots()["blender"].live_pid == third.pid)
        assert f'"app_pid": {third.pid}' in (await session.call(TOOL, {})).text

        blender.stop()
        await wait_until(lambda: TOOL not in session.surface().tools)
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "app_not_running"
        assert payload["app"]["name"] == "Blender"  # no title in plugin.json: the name, title-cased
        assert payload["user_action"] == "Start Blender, then try again."
