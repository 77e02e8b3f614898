"""MCP Apps views over a real example server (npm server-basic-vanillajs): the host side's rules."""

from __future__ import annotations

import json

import httpx2
import pytest

from hermes.dashboard.apps import APP_POLICY
from hermes.home import Home
from tests.dashboard.conftest import Running, dashboard, fast_server
from tests.npm_tools import NpmTools
from tests.support import hermes

pytestmark = pytest.mark.anyio


def clock_config(npm: NpmTools) -> str:
    app = ", ".join(f'"{part}"' for part in npm.apps_example[1:])
    return f"  clock:\n    command: {npm.node}\n    args: [{app}]\n"


async def run_tool(running: Running, server: str, tool: str, arguments: str = "{}") -> str:
    """Run a tool from its page and wait for it to end; the id of the view the result page shows."""
    answer = await running.client.post(f"/servers/{server}/tools/{tool}", data={"arguments": arguments},
                                       headers={"Origin": running.base}, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"].startswith("/views/"), answer.text
    view = str(answer.headers["location"]).removeprefix("/views/")
    assert (await running.client.get(f"/views/{view}/state?wait=1")).json()["done"]
    return view


async def view_call(running: Running, view: str, body: dict[str, object]) -> httpx2.Response:
    return await running.client.post(f"/views/{view}/call", content=json.dumps(body),
                                     headers={"Origin": running.base, "Content-Type": "application/json"})


async def test_a_tools_view_is_served_sandboxed_and_its_calls_meet_the_rules(home: Home, npm: NpmTools) -> None:
    home.root.mkdir(exist_ok=True)
    home.config.write_text("mcp_servers:\n" + clock_config(npm))
    async with dashboard(home) as running:
        server_page = (await running.client.get("/servers/clock")).text
        assert 'href="/servers/clock/tools/get-time">run (has a view)' in server_page
        view = await run_tool(running, "clock", "get-time")
        page = (await running.client.get(f"/views/{view}")).text
        assert f'sandbox="allow-scripts" src="/views/{view}/frame"' in page and "allow-same-origin" not in page

        frame = await running.client.get(f"/views/{view}/frame")
        assert frame.status_code == 200 and "Get Server Time" in frame.text
        assert frame.headers["content-security-policy"] == APP_POLICY
        assert "connect-src 'none'" in APP_POLICY and frame.headers["x-frame-options"] == "SAMEORIGIN"
        async with httpx2.AsyncClient(base_url=running.base) as stranger:
            assert (await stranger.get(f"/views/{view}/frame")).status_code == 401

        state = (await running.client.get(f"/views/{view}/state")).json()
        assert state["tool"]["name"] == "get-time" and state["arguments"] == {}
        assert "T" in state["result"]["structuredContent"]["time"]

        # get-time does not say it only reads: a call from its view needs the user's yes first.
        asked = (await view_call(running, view, {"name": "get-time", "arguments": {}})).json()
        assert asked == {"needsApproval": True, "tool": "mcp__clock__get_time",
                         "because": "it does not say it only reads (no readOnlyHint)"}
        approved = (await view_call(running, view, {"name": "get-time", "arguments": {}, "approved": True})).json()
        assert "T" in approved["result"]["structuredContent"]["time"]

        denied = await running.post("/permission", {"pattern": "mcp__clock__get_time", "permission": "deny",
                                                     "back": "/servers/clock"})
        assert 'class="note ok"' in denied.text
        refused = await view_call(running, view, {"name": "get-time", "arguments": {}, "approved": True})
        assert refused.status_code == 403 and "get-time" in refused.json()["error"]


async def test_a_view_reaches_only_its_own_servers_tools_and_its_words_are_redacted(home: Home) -> None:
    canary = "sk-view-canary-0123456789abcdef"
    home.root.mkdir(exist_ok=True)
    # `a` with tool `b__echo` would share its registered name with `a__b`'s `echo`.
    home.config.write_text("mcp_servers:\n  a:\n" + fast_server() + "  a__b:\n" + fast_server()
                           + f"    env:\n      FAKE_API_KEY: {canary}\n")
    async with dashboard(home) as running:
        view = await run_tool(running, "a", "echo", '{"text": "hi"}')
        assert (await running.client.get(f"/views/{view}")).text.count("hi") >= 1
        own = (await view_call(running, view, {"name": "echo", "arguments": {"text": "again"}})).json()
        assert own["result"]["content"][0]["text"] == "again"  # echo says it only reads: no question
        other = await view_call(running, view, {"name": "b__echo", "arguments": {"text": "x"}})
        assert other.status_code == 403 and "own server" in other.json()["error"]
        assert (await view_call(running, view, {"name": "nothing"})).status_code == 403
        bad = await running.client.post(f"/views/{view}/call", content=b"[1]",
                                        headers={"Origin": running.base, "Content-Type": "application/json"})
        assert bad.status_code == 400

        secret = await running.client.get("/servers/a__b/tools/reveal")
        assert secret.status_code == 200
        revealing = await run_tool(running, "a__b", "reveal", '{"variable": "FAKE_API_KEY"}')
        shown = (await running.client.get(f"/views/{revealing}")).text
        assert canary not in shown
        said = await running.client.post(f"/views/{view}/said", content=json.dumps(
            {"kind": "message", "text": f"<b>key</b> {canary}"}), headers={"Origin": running.base})
        assert said.status_code == 200
        state = (await running.client.get(f"/views/{view}/state")).json()
        assert state["said"][0]["kind"] == "message" and canary not in json.dumps(state)


def test_a_terminal_says_a_tool_has_a_view_and_where_to_open_it(home: Home, npm: NpmTools) -> None:
    home.root.mkdir(exist_ok=True)
    home.config.write_text("mcp_servers:\n" + clock_config(npm))
    ran = hermes("tools", "call", "mcp__clock__get_time", "--yes", home=home)
    assert ran.returncode == 0, ran.stderr
    assert "get-time has an interactive view (ui://get-time/mcp-app.html)" in ran.stderr
    assert "hermes dashboard" in ran.stderr and "/servers/clock/tools/get-time" in ran.stderr
