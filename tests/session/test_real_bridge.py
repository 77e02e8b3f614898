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
from pathlib import Path

import anyio
import psutil
import pytest

from hermes.apps.states import AppState
from hermes.home import Home
from hermes.mcp.connection import RestartPolicy
from hermes.mcp.states import ConnectionState
from hermes.session.core import Session, SessionSettings
from tests.blender import StandIn, plugin_repo
from tests.support import hermes, needs_sandbox, unavailable, wait_until

pytestmark = pytest.mark.anyio
TOOL = "mcp__blender__get_scene_info"


async def test_the_real_bridge_follows_the_app_across_restarts(home: Home, tmp_path: Path, bridge_bin: Path,
                                                                blender: StandIn) -> None:
    env = {"PATH": f"{bridge_bin}{os.pathsep}{os.environ['PATH']}"}
    repo = plugin_repo(tmp_path)
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
        # The add-on removes its runtime file a moment before Blender's process is gone; once it
        # is, the next look says so.
        await wait_until(lambda: getattr(session.why("blender"), "state", None) is AppState.APP_NOT_RUNNING)
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "app_not_running"
        assert payload["app"]["name"] == "Blender"  # no title in plugin.json: the name, title-cased
        assert payload["user_action"] == "Start Blender, then try again."


@needs_sandbox
async def test_the_real_bridge_reaches_only_the_app_from_a_loopback_sandbox(home: Home, tmp_path: Path,
                                                                          bridge_bin: Path, blender: StandIn) -> None:
    """Declared `network: loopback`: the bridge has no network but the app's own port, read from the
    runtime file at each start (a new port after an app restart is relayed too)."""
    env = {"PATH": f"{bridge_bin}{os.pathsep}{os.environ['PATH']}"}
    blender.install()
    repo = plugin_repo(tmp_path, sandbox={"network": "loopback"})
    installed = hermes("plugins", "install", str(repo), "--enable", "--no-warm", home=home, env=env)
    assert installed.returncode == 0, installed.stderr
    settings = SessionSettings(watch_interval=0.05, policy=RestartPolicy(attempts=0))
    async with Session(home, settings, environ={**os.environ, **env}) as session:
        first = await anyio.to_thread.run_sync(blender.start)
        await wait_until(lambda: session.snapshots()["blender"].live_pid == first.pid)
        assert session.snapshots()["blender"].sandbox == "on (network loopback)"
        answer = await session.call(TOOL, {})
        assert not answer.is_error and f'"app_pid": {first.pid}' in answer.text, answer.text
        second = await anyio.to_thread.run_sync(blender.start)
        blender.stop(first)
        await wait_until(lambda: session.snapshots()["blender"].live_pid == second.pid)
        answer = await session.call(TOOL, {})
        assert not answer.is_error and f'"app_pid": {second.pid}' in answer.text, answer.text
