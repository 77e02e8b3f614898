"""`hermes demo`: the whole story, offline, with real parts, in a temporary HERMES_HOME.

A plain stdio server first; then a plugin whose MCP server needs a desktop app, installed from a
local git repository. The demo app is a real process with a real MCP server on a loopback port it
picks at each start, guarded by a token that is new at each start. The story: installing the plugin
before the app is installed is refused with `missing_app` and leaves no trace; with the app
installed it installs; app not running -> `app_not_running`; started -> hermes finds it through the
app's runtime file and the tool works; restarted on a new port with a new token -> hermes
reconnects by itself; stopped -> `app_not_running`; uninstalled -> `missing_app`. Last, the agent:
a scripted stand-in model (labelled as such; no network, no account) asks through the real tool
loop what is in the scene, and answers from the app's tool result.
Exit 0 only if every step behaved as described.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from hermes import interrupts
from hermes.apps.host import local_host
from hermes.apps.states import AppState
from hermes.config.edit import add_server
from hermes.config.store import ConfigStore
from hermes.demo import setup as demo_setup
from hermes.errors import HermesError
from hermes.home import Home
from hermes.plugins.install import install
from hermes.plugins.lifecycle import set_enabled

TOOL = "mcp__demo_app__scene_summary"


def say(text: str) -> None:
    """The demo narrates on stdout, line by line, as it goes."""
    print(text, flush=True)
_WAIT = 20.0


class Story:
    def __init__(self) -> None:
        self.number = 0
        self.failures: list[str] = []
        self.started = time.monotonic()

    def step(self, text: str) -> None:
        self.number += 1
        say(f"\n{self.number}. [{time.monotonic() - self.started:5.1f} s] {text}")

    def check(self, ok: bool, good: str, bad: str) -> None:
        if ok:
            say(f"   ok: {good}")
        else:
            say(f"   FAILED: {bad}")
            self.failures.append(f"step {self.number}: {bad}")


def _show(payload: dict[str, Any]) -> None:
    say("   -> " + json.dumps({k: payload[k] for k in ("state", "error", "retry") if k in payload}))


async def _until(predicate: Callable[[], bool], timeout: float = _WAIT) -> bool:
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)
    return predicate()


async def _walk(home: Home, story: Story, apps: demo_setup.DemoApps) -> None:
    from hermes.session.core import Session, SessionSettings

    story.step("A plain MCP server: add the bundled example server (stdio) to config.yaml.")
    with ConfigStore(home).edit() as doc:
        add_server(doc, "example", {"command": sys.executable, "args": ["-m", "hermes.examples.echo_server"]},
                   replace=True)
    story.step("Put the plugin 'hermes-demo' in a local git repository. Its MCP server needs the desktop app "
               "'Demo Scene App'.")
    repo = home.root / "demo-src" / "hermes-demo-plugin"
    commit = demo_setup.make_plugin_repo(repo)
    source = str(repo)
    say(f"   {repo} at commit {commit[:12]}" if commit else "   git is not available: installing from the folder")
    say("   Its mcp.json holds a placeholder URL; hermes will only ever use the app's runtime file.")

    story.step("Install the plugin while the app is not installed:")
    try:
        install(home, source, host=local_host())
        refusal = ""
    except HermesError as exc:
        refusal = str(exc)
    say(f"   -> {refusal or 'installed (unexpected)'}")
    leftovers = [p.name for p in home.plugins.iterdir() if p.name != ".lock"] if home.plugins.exists() else []
    story.check(AppState.MISSING_APP.value in refusal and not leftovers,
                "refused with missing_app, and nothing was left behind",
                f"expected a missing_app refusal and no trace, got {refusal!r} and {leftovers}")

    story.step("Install the app (without starting it), then install and enable the plugin:")
    demo_setup.install_app(home)
    result = install(home, source, host=local_host())
    set_enabled(home, result.name, True)
    say(f"   installed {result.name} {result.version} at {(result.commit or 'a folder copy')[:12]}, enabled")
    story.check(result.name == demo_setup.PLUGIN_NAME, "the plugin passed the app gate and is installed",
                f"installed {result.name!r}")

    story.step("Start a session: every configured server connects in parallel. Call the example's echo tool:")
    async with Session(home, SessionSettings(watch_interval=0.1)) as session:
        echo = await session.call("mcp__example__echo", {"text": "hello from hermes"})
        say(f"   mcp__example__echo -> {echo.text}")
        story.check(echo.text == "hello from hermes", "the plain server's tool works", f"echo answered {echo.text!r}")

        async def call_app(tool: str = TOOL) -> Any:
            return await session.call(tool, {})

        story.step("The app is installed but not running. Call its tool anyway:")
        answer = await call_app()
        _show(answer.to_json())
        story.check(_app_state(answer) == AppState.APP_NOT_RUNNING,
                    "hermes says the app is not running", f"unexpected answer {answer.to_json()}")

        story.step("Start the app. It picks a free port and a fresh token and writes its runtime file.")
        process = await anyio.to_thread.run_sync(apps.start)
        connected = await _until(lambda: session.snapshots()["demo-app"].connected)
        answer = await call_app()
        say(f"   app pid {process.pid}; {TOOL} -> {answer.text}")
        story.check(connected and not answer.is_error, "hermes found the app by itself and the tool works",
                    f"no connection: {session.snapshots()['demo-app'].reason or answer.text}")

        story.step("Restart the app: it comes back on another port with another token.")
        apps.stop(process)
        process = await anyio.to_thread.run_sync(apps.start)
        reconnected = await _until(lambda: _answers_from(session, process.pid))
        info = await call_app("mcp__demo_app__app_info")
        say(f"   new app pid {process.pid}; mcp__demo_app__app_info -> {info.text.replace(chr(10), ' ')}")
        story.check(reconnected, "hermes reconnected to the new endpoint without any user action",
                    "hermes did not reconnect to the restarted app")

        story.step("Stop the app: its tools leave the surface and a call says why.")
        apps.stop(process)
        gone = await _until(lambda: TOOL not in session.surface().tools)
        answer = await call_app()
        _show(answer.to_json())
        story.check(gone and _app_state(answer) == AppState.APP_NOT_RUNNING,
                    "the tool is hidden and the answer says the app is not running",
                    f"unexpected answer {answer.to_json()}")

        story.step("Uninstall the app and reload:")
        demo_setup.uninstall_app(home)
        await session.reload()
        answer = await call_app()
        _show(answer.to_json())
        story.check(_app_state(answer) == AppState.MISSING_APP,
                    "hermes says the app is missing, and what to do", f"unexpected answer {answer.to_json()}")

        story.step("The agent: install and start the app again, then ask 'What is in my scene?'.")
        demo_setup.install_app(home)
        process = await anyio.to_thread.run_sync(apps.start)
        await session.reload()
        await _until(lambda: TOOL in session.surface().tools)
        answer_text, calls = await _ask_agent(session, "What is in my scene?")
        say(f"   the tool loop called {', '.join(calls) or 'nothing'}")
        say(f"   model: {answer_text}")
        story.check(calls == [TOOL] and "objects" in answer_text,
                    "the question went through the agent loop to the app's tool and back",
                    f"the agent answered {answer_text!r} after calling {calls}")
        apps.stop(process)
    say("\nSession closed; every server process it started has exited.")


async def _ask_agent(session: Any, question: str) -> tuple[str, list[str]]:
    """One turn of the real agent loop against the stand-in model on loopback."""
    from hermes.agent.loop import Agent
    from hermes.agent.prompt import system_prompt
    from hermes.agent.provider import Provider
    from hermes.config.model_settings import ModelSettings
    from hermes.demo.stand_in_model import LABEL, stand_in_model
    from hermes.loopback import bind_loopback, serve_asgi

    calls: list[str] = []

    class Narrator:
        interactive = False

        async def text(self, delta: str) -> None:
            return None

        def waiting(self, model: str | None) -> None:
            return None

        async def tool_started(self, call_id: str, name: str, arguments: Any) -> None:
            calls.append(name)

        async def tool_finished(self, call_id: str, name: str, status: Any, seconds: float, summary: str) -> None:
            say(f"   {name}: {status} ({seconds:.2f} s)")

        def progress(self, call_id: str, name: str) -> None:
            return None

        async def approve_tool(self, *asked: Any) -> Any:
            raise AssertionError("the scene tool needs no approval")

        approve_sampling = elicit = approve_tool

        async def notice(self, text: str) -> None:
            say(f"   {text}")

    say("   the model here is a " + LABEL.format(tool=TOOL))
    sock = bind_loopback()
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, stand_in_model(TOOL), sock)
        settings = ModelSettings(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1", name="demo-stand-in")
        provider = Provider(settings, session.redactor)
        agent = Agent(session, provider, Narrator(), system_prompt=system_prompt(catalog=None, skills=[]),
                      settings=settings)
        try:
            turn = await agent.turn(question)
        finally:
            await provider.close()
            tasks.cancel_scope.cancel()
    return turn.answer, calls


def _answers_from(session: Any, pid: int) -> bool:
    snapshot = session.snapshots()["demo-app"]
    return bool(snapshot.connected and snapshot.live_pid == pid)


def _app_state(result: Any) -> str | None:
    """The state an unavailable call answered with, if it was one."""
    from hermes.tools.call_result import NotAvailable

    return str(result.why.state) if isinstance(result, NotAvailable) else None


def run_demo(home_dir: str | None = None) -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hermes-demo-") as scratch:
        root = Path(home_dir).expanduser().resolve() if home_dir else Path(scratch)
        home = Home(root)
        home.ensure()
        # The demo plugin's paths are rooted at $HERMES_HOME; the session must see the same value.
        os.environ["HERMES_HOME"] = str(root)
        say(f"hermes demo (HERMES_HOME={root}; offline, loopback only)")
        story = Story()
        apps = demo_setup.DemoApps(home)
        try:
            interrupts.run(functools.partial(_walk, home, story, apps))
        except RuntimeError as exc:  # the demo app could not start
            story.failures.append(f"step {story.number}: {exc}")
        finally:
            apps.stop_all()
    elapsed = time.monotonic() - started
    if story.failures:
        say(f"\nDemo FAILED in {elapsed:.1f} s:")
        for failure in story.failures:
            say(f"  - {failure}")
        return 1
    say(f"\nDemo finished in {elapsed:.1f} s: every step behaved as described.")
    return 0
