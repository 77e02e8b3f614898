"""An MCP Apps view from a real example server (npm server-basic-vanillajs) in the dashboard."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from browser.conftest import screenshot
from hermes.home import Home
from tests.npm_tools import NpmTools


def test_a_tools_view_runs_sandboxed_and_its_calls_meet_the_permission_rules(
        page: Any, dashboard: Any, home: Home, npm: NpmTools) -> None:
    app = ", ".join(f'"{part}"' for part in npm.apps_example[1:])
    home.config.write_text(f"mcp_servers:\n  clock:\n    command: {npm.node}\n    args: [{app}]\n")
    running = dashboard()
    page.goto(running.url)
    page.get_by_role("link", name="clock").click()
    page.get_by_role("link", name="run (has a view)").click()
    page.get_by_role("button", name="Run get-time").click()
    expect(page.locator("[data-result]")).to_contain_text("T")  # an ISO 8601 time
    first_time = page.locator("[data-result]").inner_text().strip()

    view = page.frame_locator("iframe[data-view]")
    expect(view.locator("#server-time")).to_have_text(first_time)  # the result reached the view
    screenshot(page, "apps-view")

    # get-time says nothing about changing things: a call from the view asks the user first, here.
    view.get_by_role("button", name="Get Server Time").click()
    approval = page.locator("[data-approval]")
    expect(approval).to_be_visible()
    expect(approval).to_contain_text("mcp__clock__get_time")
    screenshot(page, "apps-approval")
    approval.get_by_role("button", name="Run it").click()
    expect(view.locator("#server-time")).not_to_have_text(first_time)

    view.locator("#message-text").fill("hello from the view")
    view.get_by_role("button", name="Send Message").click()
    expect(page.locator('[data-said] li[data-kind="message"]')).to_contain_text("hello from the view")

    # The view's document is opaque-origin: the dashboard is out of its reach.
    frame = page.frames[1]
    assert frame.evaluate("() => { try { return parent.document.title; } catch (e) { return 'blocked'; } }") == \
        "blocked"
    assert frame.evaluate("() => fetch('/').then(() => 'fetched', () => 'blocked')") == "blocked"

    # Opened on its own (a new tab, a link), the view's document is still sandboxed by its policy.
    alone = page.context.new_page()
    alone.goto(page.frames[1].url)
    expect(alone.locator("#get-time-btn")).to_be_visible()
    assert alone.evaluate("() => window.origin") == "null"
    assert alone.evaluate("() => fetch('/').then(() => 'fetched', () => 'blocked')") == "blocked"
    alone.close()
