"""The MCP menu in Chromium against the npm reference servers: what a user sees and clicks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from browser.conftest import screenshot
from hermes.home import Home
from tests.dashboard.conftest import fast_server
from tests.npm_tools import NpmTools


def write_config(home: Home, npm: NpmTools, notes: Path) -> None:
    notes.mkdir(exist_ok=True)
    (notes / "hello.txt").write_text("hello\n")
    everything = ", ".join(f'"{part}"' for part in npm.everything[1:])
    home.config.write_text(
        "# servers for the browser test\n"
        "mcp_servers:\n"
        f"  everything:\n    command: {npm.node}\n    args: [{everything}]\n"
        f"  files:\n    command: {npm.node}\n    args: [\"{npm.filesystem[1]}\", \"{notes}\"]\n"
        "  broken:\n    command: /nonexistent/program\n"
        "  evil:\n" + fast_server("--hostile"))


def hermes_cli(home: Home, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "hermes", *args], env={"HERMES_HOME": str(home.root), "NO_COLOR": "1",
                                                                "PATH": "/usr/bin:/bin"},
                   check=True, capture_output=True, timeout=120, cwd=home.root)


def card(page: Any, server: str) -> Any:
    return page.locator(f'li[data-server="{server}"]')


def test_the_menu_shows_every_server_and_why_one_is_unavailable(page: Any, dashboard: Any, home: Home,
                                                                 npm: NpmTools, tmp_path: Path) -> None:
    write_config(home, npm, tmp_path / "notes")
    running = dashboard()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(running.url)
    expect(page).to_have_url(running.base + "/")  # the token left the address bar
    expect(page.get_by_role("heading", name="MCP servers")).to_be_visible()
    for server in ("everything", "files"):
        expect(card(page, server).locator(".badge")).to_have_text("connected")
    expect(card(page, "everything")).to_contain_text("given to the model (and 4 for its resources and prompts)")
    expect(card(page, "broken").locator("[data-why]")).to_contain_text("command '/nonexistent/program' was not found")
    expect(card(page, "broken").locator("[data-action]")).to_contain_text("Fix the cause")
    screenshot(page, "menu-desktop")

    # A hostile server's markup is text: no script of it ran, on the menu or on its own page.
    page.goto(running.base + "/servers/evil")
    expect(page.get_by_text("<img src=x onerror=alert(2)><script>alert(3)</script> Read a note.")).to_be_visible()
    expect(page.get_by_label("The end of evil's log")).to_contain_text("<script>alert(4)</script> in the log")
    assert dialogs == []
    screenshot(page, "hostile-server")

    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto(running.base + "/")
    expect(card(page, "everything")).to_be_visible()
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1")
    screenshot(page, "menu-phone")


def test_buttons_change_config_yaml_and_changes_elsewhere_appear_without_a_reload(
        page: Any, dashboard: Any, home: Home, npm: NpmTools, tmp_path: Path) -> None:
    write_config(home, npm, tmp_path / "notes")
    running = dashboard()
    page.goto(running.url)
    page.on("dialog", lambda dialog: dialog.accept())  # the question before a removal

    card(page, "files").get_by_role("button", name="Disable files").click()
    expect(page.locator(".note.ok")).to_contain_text("Disabled MCP server 'files'")
    expect(card(page, "files").locator(".badge")).to_have_text("disabled")
    assert "  files:\n    command:" in home.config.read_text() and "enabled: false" in home.config.read_text()

    # The keyboard alone: focus the button, press Enter.
    card(page, "files").get_by_role("button", name="Enable files").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".note.ok")).to_contain_text("Enabled MCP server 'files'")
    assert "enabled: false" not in home.config.read_text()

    card(page, "broken").get_by_role("button", name="Remove broken").click()
    expect(page.locator(".note.ok")).to_contain_text("Removed MCP server 'broken'")
    assert "broken" not in home.config.read_text() and "# servers for the browser test" in home.config.read_text()

    # The tool checklist and a permission on the server's page.
    page.get_by_role("link", name="everything").click()
    boxes = page.locator('input[name="tool"]')
    expect(boxes.first).to_be_checked()
    first = boxes.first.get_attribute("value")
    boxes.first.uncheck()
    page.get_by_role("button", name="Save the tool selection").click()
    expect(page.locator(".note.ok")).to_contain_text("tools.include written")
    written = home.config.read_text()
    assert "include:" in written and f" {first}," not in written and f"[{first}," not in written
    second = page.locator("tr[data-tool]").nth(1)
    registered = second.get_attribute("data-tool")
    second.get_by_label(f"Permission for {registered}").select_option("deny")
    second.get_by_role("button", name="Set").click()
    expect(page.locator(".note.ok")).to_contain_text(f"{registered}: permissions.deny")
    expect(page.locator(f'tr[data-tool="{registered}"] [data-permission]')).to_have_text("deny")
    assert f"deny:\n    - {registered}" in home.config.read_text()
    screenshot(page, "server-page")

    # A change made with the CLI reaches the open menu through its event stream.
    page.goto(running.base + "/")
    expect(card(page, "everything").locator(".badge")).to_have_text("connected")
    hermes_cli(home, "mcp", "disable", "everything")
    expect(card(page, "everything").locator(".badge")).to_have_text("disabled")
    screenshot(page, "after-cli-change")


def test_the_dashboard_refuses_a_browser_without_its_link(page: Any, dashboard: Any, home: Home) -> None:
    home.config.write_text("mcp_servers: {}\n")
    running = dashboard()
    answer = page.goto(running.base + "/")
    assert answer is not None and answer.status == 401
    expect(page.locator("body")).to_contain_text("Open the link hermes dashboard printed")
