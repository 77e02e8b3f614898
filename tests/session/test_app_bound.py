"""App-bound servers in a real session: gates, the runtime file as the only endpoint, reconnects."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from hermes.apps.declaration import EXTENSION_KEY
from hermes.demo import setup as demo_setup
from hermes.home import Home
from hermes.session.core import Session, SessionSettings
from tests.hosts import FixtureHost
from tests.support import CANARY, SERVERS, fast_entry, free_port, hermes, unavailable, wait_until, write_config

pytestmark = pytest.mark.anyio
TOOL = "mcp__demo_app__scene_summary"


@pytest.fixture
def demo_home(home: Home) -> Home:
    demo_setup.install_plugin_folder(home)
    return home


@pytest.fixture
def apps(home: Home) -> Iterator[demo_setup.DemoApps]:
    started = demo_setup.DemoApps(home)
    yield started
    started.stop_all()


async def test_app_story_and_the_token_never_leaks(demo_home: Home, apps: demo_setup.DemoApps) -> None:
    home = demo_home
    tokens: list[str] = []
    async with Session(home, SessionSettings(watch_interval=0.05)) as session:
        assert unavailable(await session.call(TOOL, {}))["state"] == "missing_app"  # type: ignore[index]
        assert TOOL not in session.surface().tools
        demo_setup.install_app(home)
        await session.reload()
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "app_not_running"
        assert payload["app"]["name"] == "Demo Scene App" and payload["retry"] == "after_user_action"
        assert payload["user_action"] == "Start Demo Scene App, then try again."

        app = await anyio.to_thread.run_sync(apps.start)
        tokens.append(json.loads(demo_setup.runtime_file(home).read_text())["token"])
        await wait_until(lambda: session.snapshots()["demo-app"].connected)
        assert (await session.call(TOOL, {})).text == "3 objects: Camera, Cube, Light"
        first_port = json.loads(demo_setup.runtime_file(home).read_text())["http"]

        apps.stop(app)
        app = await anyio.to_thread.run_sync(apps.start)
        runtime = json.loads(demo_setup.runtime_file(home).read_text())
        tokens.append(runtime["token"])
        assert runtime["http"] != first_port and tokens[0] != tokens[1]
        await wait_until(lambda: session.snapshots()["demo-app"].live_pid == app.pid)
        info = await session.call("mcp__demo_app__app_info", {})
        assert info.structured == {"pid": app.pid}

        # Both tokens were registered with the redactor before any header was built from them.
        assert session.redactor(f"x {tokens[0]} {tokens[1]}") == "x [REDACTED] [REDACTED]"

        apps.stop(app)
        await wait_until(lambda: TOOL not in session.surface().tools)
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "app_not_running"
        status = json.dumps([s.to_json() for s in session.status()])
    assert '"app_not_running"' in status
    for path in home.root.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not any(token in text for token in tokens), path
    assert not any(token in status for token in tokens)


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        _Recorder.hits.append(self.path)
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    _Recorder.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    server.shutdown()


def _plugin_with_url(home: Home, url: str) -> None:
    root = demo_setup.install_plugin_folder(home)
    (root / "mcp.json").write_text(json.dumps({"mcpServers": {"demo-app": {"type": "streamable-http", "url": url}}}))
    demo_setup.install_app(home)


@pytest.mark.parametrize("runtime", [
    None,
    {"pid": os.getpid(), "http": "http://169.254.169.254:80", "token": CANARY},
    {"pid": os.getpid(), "http": "https://127.0.0.1:443", "token": CANARY},
    {"pid": 2**31 - 1, "http": "http://127.0.0.1:9", "token": CANARY},
], ids=["missing runtime file", "metadata address", "https", "dead pid"])
async def test_missing_runtime_file_never_falls_back(home: Home, recorder: str, runtime: dict[str, Any] | None
                                                     ) -> None:
    _plugin_with_url(home, recorder)
    if runtime is not None:
        demo_setup.runtime_file(home).parent.mkdir(parents=True, exist_ok=True)
        demo_setup.runtime_file(home).write_text(json.dumps(runtime))
    async with Session(home, SessionSettings(watch_interval=0.05)) as session:
        outcome = await session.call(TOOL, {})
        await anyio.sleep(0.3)  # give a wrong implementation time to try the static URL
    payload = unavailable(outcome)
    assert payload is not None and payload["state"] in ("app_not_running", "endpoint_unavailable")
    assert CANARY not in json.dumps(outcome.to_json())
    assert _Recorder.hits == []


async def test_a_live_pid_whose_endpoint_does_not_answer_is_endpoint_unavailable(demo_home: Home) -> None:
    home = demo_home
    demo_setup.install_app(home)
    port = free_port()  # the runtime file names a port nothing listens on; its pid is alive
    demo_setup.runtime_file(home).parent.mkdir(parents=True, exist_ok=True)
    demo_setup.runtime_file(home).write_text(json.dumps({"pid": os.getpid(), "http": f"http://127.0.0.1:{port}",
                                                          "token": CANARY}))
    async with Session(home, SessionSettings(watch_interval=0.05)) as session:
        payload = unavailable(await session.call(TOOL, {}))
    assert payload is not None and payload["state"] == "endpoint_unavailable", payload
    assert f"http://127.0.0.1:{port} does not answer" in payload["reason"]
    assert payload["user_action"] == "Restart the MCP bridge from inside Demo Scene App, then try again."
    assert CANARY not in json.dumps(payload)


async def test_hermes_not_connected_only_when_the_endpoint_answers_but_our_connection_fails(
        demo_home: Home, recorder: str) -> None:
    home = demo_home
    demo_setup.install_app(home)
    demo_setup.runtime_file(home).parent.mkdir(parents=True, exist_ok=True)
    # The endpoint answers (500 to everything), so the app and its bridge are there; MCP is not.
    demo_setup.runtime_file(home).write_text(json.dumps({
        "pid": os.getpid(), "http": recorder.removesuffix("/mcp"), "token": CANARY}))
    async with Session(home, SessionSettings(watch_interval=0.05)) as session:
        payload = unavailable(await session.call(TOOL, {}))
    assert payload is not None and payload["state"] == "hermes_not_connected", payload
    assert "500" in payload["reason"]
    assert payload["user_action"] == "Run `hermes mcp reload`, then try again."
    assert CANARY not in json.dumps(payload)


async def test_a_declared_server_without_liveness_that_fails_is_a_plain_failure(home: Home, tmp_path: Path) -> None:
    """The real Blender plugin declares no liveness: its failing process is reported as what it is."""
    root = demo_setup.install_plugin_folder(home)
    plugin = json.loads((root / "plugin.json").read_text())
    del plugin["extensions"][EXTENSION_KEY]["servers"]["demo-app"]["liveness"]
    (root / "plugin.json").write_text(json.dumps(plugin))
    (root / "mcp.json").write_text(json.dumps({"mcpServers": {"demo-app": {
        "type": "stdio", "command": "uv", "args": ["tool", "run", "not-there-mcp"]}}}))
    demo_setup.install_app(home)
    async with Session(home, environ={**os.environ, "PATH": str(tmp_path)}) as session:  # no `uv` to be found
        payload = unavailable(await session.call(TOOL, {}))
    assert payload is not None and payload["state"] == "failed", payload
    assert "command 'uv' was not found" in payload["reason"]
    assert "hermes is not connected" not in payload["error"]


async def test_an_app_running_without_its_runtime_file_says_so_after_a_grace_period(
        home: Home, tmp_path: Path) -> None:
    demo_setup.install_plugin_folder(home)
    host = FixtureHost("linux", tmp_path / "host", environ={"HERMES_HOME": "/hh"})
    app = "/hh/demo-apps/bin/hermes-demo-app"
    host.make_file(app)
    host.running.add(app)  # the app runs, but its bridge never writes the runtime file
    async with Session(home, SessionSettings(watch_interval=0.05, publish_grace=0), host=host) as session:
        payload = unavailable(await session.call(TOOL, {}))
    assert payload is not None and payload["state"] == "endpoint_unavailable"
    assert payload["reason"] == ("Demo Scene App is running but has not published its endpoint; enable the bridge "
                                 "in its settings")
    async with Session(home, SessionSettings(watch_interval=0.05, publish_grace=3600), host=host) as session:
        payload = unavailable(await session.call(TOOL, {}))
    assert payload is not None and payload["state"] == "endpoint_unavailable"
    assert "the file does not exist" in payload["reason"]  # within the grace period: just not there yet


async def test_a_runtime_file_path_that_cannot_expand_here_names_the_variable(home: Home, tmp_path: Path) -> None:
    root = demo_setup.install_plugin_folder(home)
    plugin = json.loads((root / "plugin.json").read_text())
    plugin["extensions"][EXTENSION_KEY]["servers"]["demo-app"]["liveness"]["path"] = \
        "%LOCALAPPDATA%/Demo/server.json"  # as the documents' own example does for every OS
    (root / "plugin.json").write_text(json.dumps(plugin))
    host = FixtureHost("linux", tmp_path / "host", environ={"HERMES_HOME": "/hh"})
    host.make_file("/hh/demo-apps/bin/hermes-demo-app")
    async with Session(home, host=host) as session:
        payload = unavailable(await session.call(TOOL, {}))
    assert payload is not None and payload["state"] == "endpoint_unavailable"
    assert "uses LOCALAPPDATA, which is not set on Linux" in payload["reason"]
    validated = hermes("plugins", "validate", str(root), home=home)
    assert validated.returncode == 0 and "uses LOCALAPPDATA, which is not set on Linux" in validated.stdout


async def test_version_too_old_unsupported_os_and_no_desktop_session(home: Home, tmp_path: Path) -> None:
    root = demo_setup.install_plugin_folder(home)
    plugin = json.loads((root / "plugin.json").read_text())
    declaration = plugin["extensions"][EXTENSION_KEY]["servers"]["demo-app"]
    declaration["app"]["linux"]["version"] = {"kind": "dpkg", "package": "hermes-demo-app"}
    (root / "plugin.json").write_text(json.dumps(plugin))
    host = FixtureHost("linux", tmp_path / "host", environ={"HERMES_HOME": "/hh"})
    host.make_file("/hh/demo-apps/bin/hermes-demo-app")
    host.make_file("/var/lib/dpkg/status", "Package: hermes-demo-app\nStatus: install ok installed\nVersion: 0.9-1\n")
    async with Session(home, host=host) as session:
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "version_too_old"
        assert payload["app"]["version"] == "0.9" and "1.0 or newer" in payload["error"]
    async with Session(home, host=FixtureHost("darwin", tmp_path / "mac", environ={"HERMES_HOME": "/hh"})) as s:
        payload = unavailable(await s.call(TOOL, {}))
        assert payload is not None and payload["state"] == "missing_app"
    del declaration["app"]["darwin"]
    (root / "plugin.json").write_text(json.dumps(plugin))
    async with Session(home, host=FixtureHost("darwin", tmp_path / "mac")) as s:
        payload = unavailable(await s.call(TOOL, {}))
        assert payload is not None and payload["state"] == "unsupported_os" and payload["retry"] == "never_here"
    declaration["liveness"] = {"kind": "interactive_session"}
    (root / "plugin.json").write_text(json.dumps(plugin))
    host.make_file("/var/lib/dpkg/status", "Package: hermes-demo-app\nStatus: install ok installed\nVersion: 2.0\n")
    host.session = False
    async with Session(home, host=host) as session:
        payload = unavailable(await session.call(TOOL, {}))
        assert payload is not None and payload["state"] == "no_interactive_session"
        assert payload["retry"] == "never_here"


async def test_plugin_servers_merge_and_config_wins(home: Home) -> None:
    root = home.plugins / "tools-plugin"
    (root / "bin").mkdir(parents=True)
    shutil.copy(SERVERS / "fast.py", root / "bin" / "server.py")
    launcher = root / "bin" / "serve"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    launcher.chmod(0o755)
    (root / "plugin.json").write_text(json.dumps({"name": "tools-plugin", "version": "1.0", "homepage": "x",
                                                  "categories": ["extra field from another host"]}))
    (root / "mcp.json").write_text(json.dumps({"$schema": "x", "mcpServers": {
        "lean": {"type": "stdio", "command": "./bin/serve", "args": ["${PLUGIN_ROOT}/bin/server.py", "--lean"]},
        "box": {"type": "stdio", "command": "python3", "args": ["-c", "raise SystemExit(9)"]},
    }}))
    broken = home.plugins / "broken"
    broken.mkdir()
    (broken / "plugin.json").write_text("{ not json")
    write_config(home, {"mcp_servers": {"box": fast_entry()}, "plugins": {"enabled": ["tools-plugin", "broken",
                                                                                          "absent"]}})
    async with Session(home) as session:
        assert session.source_of("lean") == "plugin:tools-plugin" and session.source_of("box") == "config.yaml"
        assert (await session.call("mcp__lean__ping", {})).text == "pong"
        assert (await session.call("mcp__box__echo", {"text": "config wins"})).text == "config wins"
        assert any("broken" in e and "not valid JSON" in e for e in session.plugins.errors)
        assert any("absent" in e and "not installed" in e for e in session.plugins.errors)
        assert any("unknown field 'categories'" in w for w in session.warnings)
    listing = hermes("mcp", "list", "--json", home=home)
    rows = json.loads(listing.stdout)["servers"]
    assert {(r["name"], r["source"], r["shadowed_by"]) for r in rows} == {
        ("box", "config.yaml", None), ("lean", "plugin:tools-plugin", None),
        ("box", "plugin:tools-plugin", "config.yaml")}
    removal = hermes("mcp", "remove", "lean", home=home)
    assert removal.returncode == 2 and "comes from plugin:tools-plugin" in removal.stderr


def test_hermes_demo_runs_the_whole_story(tmp_path: Path) -> None:
    home = Home(tmp_path / "demo-home")
    result = hermes("demo", "--home", str(home.root), home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("   ok: ") == 9 and "FAILED" not in result.stdout
    for state in ("missing_app", "app_not_running"):
        assert f'"state": "{state}"' in result.stdout
    assert "hermes reconnected to the new endpoint without any user action" in result.stdout
    assert "refused with missing_app, and nothing was left behind" in result.stdout
    assert "every step behaved as described" in result.stdout
    # The agent step: a stand-in model, labelled as such, answers from the app's tool through the real loop.
    assert "scripted stand-in model (not a language model" in result.stdout
    assert "model: According to the app, your scene has 3 objects: Camera, Cube, Light." in result.stdout
    assert not list(home.root.glob("demo-apps/run/*.json"))


async def test_the_app_watcher_survives_anything_the_runtime_file_holds(demo_home: Home,
                                                                         apps: demo_setup.DemoApps) -> None:
    home = demo_home
    demo_setup.install_app(home)
    runtime = demo_setup.runtime_file(home)
    async with Session(home, SessionSettings(watch_interval=0.05)) as session:
        app = await anyio.to_thread.run_sync(apps.start)
        await wait_until(lambda: session.snapshots()["demo-app"].connected)
        good = runtime.read_text()
        hostile = ['{"pid": ' + "9" * 5000 + "}", '{"pid": 1, "x": ' + "[" * 30000 + "]" * 30000 + "}",
                   json.dumps({"pid": app.pid, "http": "http://127.0.0.1:1", "token": "a\nb"})]
        for content in hostile:
            runtime.write_text(content)
            await wait_until(lambda: TOOL not in session.surface().tools)
            payload = unavailable(await session.call(TOOL, {}))
            assert payload is not None and payload["state"] == "endpoint_unavailable", payload
            runtime.write_text(good)
            await wait_until(lambda: TOOL in session.surface().tools)
        runtime.unlink()
        os.mkfifo(runtime)  # a reader that opened it naively would block the whole session here
        await wait_until(lambda: TOOL not in session.surface().tools)
        assert unavailable(await session.call("mcp__demo_app__scene_summary", {})) is not None
        runtime.unlink()
        runtime.write_text(good)
        await wait_until(lambda: TOOL in session.surface().tools)
        assert (await session.call(TOOL, {})).text == "3 objects: Camera, Cube, Light"
        apps.stop(app)
