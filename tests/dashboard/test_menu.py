"""The MCP menu over a real session: what it shows, and that every button edits config.yaml (and
.env) exactly as the matching CLI command does."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import anyio
import pytest

from hermes.home import Home
from tests.dashboard.conftest import Running, dashboard, fast_server
from tests.support import hermes

pytestmark = pytest.mark.anyio

CONFIG = """# my servers, by hand
mcp_servers:
  fast:  # the quick one
{fast}  broken:
    command: /nonexistent/program  # never installed
"""


def write_config(home: Home, text: str) -> None:
    home.root.mkdir(parents=True, exist_ok=True)
    home.config.write_text(text)


def twin(home: Home, tmp_path: Path) -> Home:
    """A second HERMES_HOME with the same files, for the CLI to edit."""
    other = Home(tmp_path / "cli-home")
    shutil.copytree(home.root, other.root)
    return other


async def cli(*args: str, home: Home) -> str:
    ran = await anyio.to_thread.run_sync(lambda: hermes(*args, home=home))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


async def test_every_button_writes_what_the_matching_command_writes(home: Home, tmp_path: Path) -> None:
    write_config(home, CONFIG.format(fast=fast_server()))
    by_cli = twin(home, tmp_path)
    canary = "sk-dashboard-canary-0123456789abcdef"
    async with dashboard(home) as running:
        steps: list[tuple[tuple[str, ...], str, dict[str, str]]] = [
            (("mcp", "disable", "broken"), "/servers/broken/disable", {"scope": "user"}),
            (("tools", "permit", "mcp__fast__crash", "deny"), "/permission",
             {"pattern": "mcp__fast__crash", "permission": "deny", "back": "/servers/fast"}),
            (("tools", "permit", "mcp__fast__echo", "ask"), "/permission",
             {"pattern": "mcp__fast__echo", "permission": "ask", "back": "/servers/fast"}),
            (("tools", "permit", "mcp__fast__echo", "default"), "/permission",
             {"pattern": "mcp__fast__echo", "permission": "default", "back": "/servers/fast"}),
            (("mcp", "add", "extra", "-e", f"FAKE_API_KEY={canary}", "--", "python3", "-m", "some_server", "--flag"),
             "/servers", {"name": "extra", "command_line": "python3 -m some_server --flag",
                          "env": f"FAKE_API_KEY={canary}", "scope": "user"}),
            (("mcp", "add", "remote", "--url", "https://example.com/mcp", "-H", f"Authorization: Bearer {canary}"),
             "/servers", {"name": "remote", "url": "https://example.com/mcp",
                          "headers": f"Authorization: Bearer {canary}", "scope": "user"}),
            (("mcp", "remove", "remote"), "/servers/remote/remove", {"scope": "user"}),
            (("mcp", "enable", "broken"), "/servers/broken/enable", {"scope": "user"}),
        ]
        for command, path, form in steps:
            await cli(*command, home=by_cli)
            page = await running.post(path, form)
            assert 'class="note ok"' in page.text, (command, page.text)
            assert home.config.read_text() == by_cli.config.read_text(), command
            assert _dotenv(home) == _dotenv(by_cli), command
            assert canary not in page.text
        written = home.config.read_text()
        assert "# the quick one" in written and "deny:\n    - mcp__fast__crash" in written

        refused = await running.post("/servers", {"name": "bad name!", "command_line": "x", "scope": "user",
                                                  "env": f"FAKE_API_KEY={canary}"})
        assert 'class="note failed"' in refused.text and "not a server name" in refused.text
        # What was typed comes back to fix, but not the environment: it may hold a secret.
        assert 'value="bad name!"' in refused.text and 'value="x"' in refused.text
        assert canary not in refused.text and "type them again" in refused.text
        assert 'value="bad name!"' not in (await running.client.get("/")).text  # once only
        before = home.config.read_text()
        both = await running.post("/servers", {"name": "both", "command_line": "x", "url": "https://a.example/mcp"})
        assert 'class="note failed"' in both.text and home.config.read_text() == before


def _dotenv(home: Home) -> str:
    return home.dotenv.read_text() if home.dotenv.exists() else ""


async def test_the_tool_checklist_writes_tools_include_and_all_checked_removes_it(home: Home) -> None:
    write_config(home, CONFIG.format(fast=fast_server()))
    async with dashboard(home) as running:
        page = await running.client.get("/servers/fast")
        offered = re.findall(r'name="tool" value="([^"]+)"', page.text)
        assert {"echo", "crash", "get-weather"} <= set(offered)
        picked = await running.post("/servers/fast/tools", {"scope": "user", "back": "/servers/fast",
                                                              "tool": ["echo", "get-weather"]})
        assert "Selected 2 of" in picked.text
        assert "include: [echo, get-weather]" in home.config.read_text()
        assert re.findall(r'name="tool" value="([^"]+)" id="[^"]+" checked', picked.text) == ["echo", "get-weather"]
        everything = await running.post("/servers/fast/tools", {"scope": "user", "back": "/servers/fast",
                                                                 "tool": offered})
        assert "selected (no filter written)" in everything.text and "include" not in home.config.read_text()
        stranger = await running.post("/servers/fast/tools", {"scope": "user", "tool": "not-a-tool"})
        assert "offers no tool named not-a-tool" in stranger.text


async def test_the_menu_says_why_a_server_is_unavailable_and_what_to_do(home: Home) -> None:
    write_config(home, CONFIG.format(fast=fast_server()))
    async with dashboard(home) as running:
        menu = (await running.client.get("/fragment/menu")).text
        broken = menu[menu.index('data-server="broken"'):]
        assert "command &#39;/nonexistent/program&#39; was not found" in broken
        assert "What to do:" in broken
        fast = menu[menu.index('data-server="fast"'):menu.index('data-server="broken"')]
        assert "data-why" not in fast and "14 of 14 given to the model" in fast

        tested = await running.post("/servers/broken/test", {})
        assert 'role="alert"' in tested.text and "/nonexistent/program" in tested.text
        assert "ready" in (await running.post("/servers/fast/test", {})).text.lower() or \
            "Connected in" in (await running.client.get("/servers/fast")).text


async def test_hostile_names_descriptions_and_logs_are_shown_as_text(home: Home) -> None:
    canary = "sk-log-canary-abcdef0123456789"
    write_config(home, "mcp_servers:\n  evil:\n" + fast_server("--hostile", "--stderr-secret")
                 + "    env:\n      FAKE_API_KEY: ${FAKE_API_KEY}\n")
    home.dotenv.write_text(f"FAKE_API_KEY={canary}\n")
    home.dotenv.chmod(0o600)
    async with dashboard(home) as running:
        pages = [(await running.client.get(path)).text for path in ("/", "/fragment/menu", "/servers/evil")]
        tested = await running.post("/servers/evil/test", {})
        for text in [*pages, tested.text]:
            assert "<script>alert" not in text and "onerror=alert" not in text.replace("&lt;img src=x onerror", "")
            assert canary not in text
        server_page = pages[2]
        assert "&lt;img src=x onerror=alert(2)&gt;&lt;script&gt;alert(3)&lt;/script&gt; Read a note." in server_page
        assert "&lt;script&gt;alert(4)&lt;/script&gt; in the log" in server_page
        assert "x&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in server_page


async def test_a_change_made_with_the_cli_reaches_an_open_page_without_a_reload(home: Home) -> None:
    write_config(home, CONFIG.format(fast=fast_server()))
    async with dashboard(home) as running, running.client.stream("GET", "/events") as events:
        lines = events.aiter_lines()
        assert await anext(lines) == "retry: 2000"
        await cli("mcp", "disable", "fast", home=home)  # the CLI reloads this dashboard's session
        assert await _menu_once_changed(running, lines, lambda menu: _state(menu, "fast") == "disabled")
        home.config.write_text(home.config.read_text().replace("  broken:", "  broken2:"))  # by hand
        assert await _menu_once_changed(running, lines, lambda menu: 'data-server="broken2"' in menu)


async def _menu_once_changed(running: Running, lines: object, done: object) -> bool:
    """Read change events until the menu fragment satisfies `done` (each look follows an event)."""
    assert callable(done)
    async for line in lines:  # type: ignore[attr-defined]
        if line.startswith("data: ") and done((await running.client.get("/fragment/menu")).text):
            return True
    return False


def _state(menu: str, server: str) -> str:
    found = re.search(rf'data-server="{server}">\s*<div class="head">.*?data-state="([^"]+)"', menu, re.S)
    return found.group(1) if found else ""


async def test_hostile_requests_get_one_sentence_and_a_broken_config_is_named(home: Home) -> None:
    write_config(home, CONFIG.format(fast=fast_server("--hostile")))
    async with dashboard(home) as running:
        deep = "[" * 100_000 + "]" * 100_000
        for path in ("/chat/answer", "/chat/send"):
            answer = await running.client.post(path, content=deep, headers={"Origin": running.base,
                                                                            "Content-Type": "application/json"})
            assert answer.status_code in (400, 409), path
        nested = await running.post("/servers/fast/tools/echo", {"arguments": "[" * 3000 + "]" * 3000})
        assert "nested too deeply" in nested.text
        async with running.client.stream("GET", "/chat/events?after=%C2%B2") as odd:  # '²' is a digit to isdigit()
            assert odd.status_code == 200
        unknown = await running.post("/servers/nope/test", {})
        assert 'class="note failed"' in unknown.text and "nope" in unknown.text
        enabled = await running.client.post("/servers/fast/enable", data={"scope": "user", "back": "/servers/fast"},
                                            headers={"Origin": running.base}, follow_redirects=False)
        key = enabled.headers["location"].split("note=")[1]
        assert (await running.client.get(f"/servers/fast?probe={key}")).status_code == 200

        # A tool whose name has a '/' (and markup) still has its page.
        server_page = (await running.client.get("/servers/fast")).text
        link = re.search(r'href="(/servers/fast/tools/x[^"]+)"', server_page)
        assert link is not None and "%2F" in link.group(1)
        assert (await running.client.get(link.group(1))).status_code == 200

        home.config.write_text("mcp_servers:\n  fast: [unclosed\n")  # a hand edit gone wrong
        for path in ("/", "/servers/fast", "/catalog"):
            broken = await running.client.get(path)
            assert broken.status_code == 409 and "config.yaml" in broken.text and "Traceback" not in broken.text


async def test_a_crash_reaches_an_open_page_without_a_reload(home: Home) -> None:
    write_config(home, CONFIG.format(fast=fast_server()))
    async with dashboard(home) as running, running.client.stream("GET", "/events") as events:
        lines = events.aiter_lines()
        assert await anext(lines) == "retry: 2000"
        crashed = await running.client.post("/servers/fast/tools/crash", data={"arguments": "{}"},
                                            headers={"Origin": running.base})
        assert crashed.status_code == 200  # the run's page
        assert await _menu_once_changed(running, lines, lambda menu: "<dt>Restarts</dt><dd>1</dd>" in menu)


async def test_a_fifo_in_place_of_a_servers_log_leaves_its_page_whole(home: Home) -> None:
    write_config(home, CONFIG.format(fast=fast_server()))
    home.logs.mkdir(parents=True, exist_ok=True)
    os.mkfifo(home.server_log("broken"))  # a plain open would wait for a writer forever
    async with dashboard(home) as running:
        page = await running.client.get("/servers/broken")
        assert page.status_code == 200 and "No log yet." in page.text
        assert "mcp-broken.log: it is not a regular file" in page.text  # the session says why, not hangs
