"""The seed's story in default chat: the model always knows why an app's tools are missing.

The Blender shape with its real bridge from PyPI (`blender-mcp`) and a stand-in Blender that
publishes a real-looking runtime file. Blender is installed but closed when the chat starts: the
first request's system prompt says so (state, what to do, whether retrying helps), so the model
can answer "start Blender". Blender started mid-session: its tools are in the next request, with
a notice. Blender quit normally (it removes its runtime file): the state is `app_not_running`
again, and stays so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from ruamel.yaml import YAML

from hermes.agent.chat import ChatOptions, open_chat
from hermes.cli.chat_ui import OneShotUI
from hermes.home import Home
from tests.agent.conftest import model_config
from tests.blender import StandIn, plugin_repo
from tests.support import hermes, wait_until, write_config

TOOL = "mcp__blender__get_scene_info"


def _install_plugin(home: Home, tmp_path: Path, bridge_bin: Path, blender: StandIn) -> dict[str, str]:
    env = {"PATH": f"{bridge_bin}{os.pathsep}{os.environ['PATH']}"}
    blender.install()
    installed = hermes("plugins", "install", str(plugin_repo(tmp_path, title="Blender")), "--enable", "--no-warm",
                       home=home, env=env)
    assert installed.returncode == 0, installed.stderr
    return env


def test_a_closed_app_is_explained_in_default_chat_and_joins_when_started(
        home: Home, tmp_path: Path, bridge_bin: Path, blender: StandIn, scripted_model: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    env = _install_plugin(home, tmp_path, bridge_bin, blender)
    monkeypatch.setenv("PATH", env["PATH"])
    model = scripted_model([{"content": "Blender is not running: start Blender, then ask again."},
                            {"tool_calls": [{"name": TOOL}]}, {"answer_from_tool": True, "prefix": "Scene: "}])
    data = YAML().load(home.config.read_text())
    data["model"] = model_config(model)
    write_config(home, data)

    async def run() -> tuple[str, str]:
        async with open_chat(home, ChatOptions(folder=tmp_path), OneShotUI()) as chat:
            first = (await chat.agent.turn("What objects are in my scene?")).answer
            app = await anyio.to_thread.run_sync(blender.start)
            await wait_until(lambda: TOOL in chat.session.surface().tools)
            second = (await chat.agent.turn("And now?")).answer
            blender.stop(app)  # a normal quit: the app removes its runtime file, then exits
            await wait_until(lambda: TOOL not in chat.session.surface().tools)
            await wait_until(lambda: chat.session.why("blender").state.value == "app_not_running")
            # It stays so: the watcher keeps looking, and a fresh look agrees.
            for _ in range(3):
                await chat.session.lifecycle.supervisor("blender").look_at_app()  # type: ignore[union-attr]
                assert chat.session.why("blender").state.value == "app_not_running"
            return first, second

    first, second = anyio.run(run)
    assert first.startswith("Blender is not running") and second.startswith("Scene: ")
    bodies = model.bodies()
    system = bodies[0]["messages"][0]["content"]
    assert "- blender (app_not_running" in system, system
    assert "Blender is not running. Start Blender, then try again. Retry: after_user_action." in system
    assert TOOL not in {t["function"]["name"] for t in bodies[0].get("tools") or []}
    # Started mid-session: in the next request, with a notice; the system prompt unchanged.
    assert TOOL in {t["function"]["name"] for t in bodies[1]["tools"]}
    assert bodies[1]["messages"][0]["content"] == system
    notices = [m["content"] for m in bodies[1]["messages"] if m["role"] == "user" and "[hermes]" in m["content"]]
    assert any("MCP server 'blender' is now available" in n for n in notices), notices
