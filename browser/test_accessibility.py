"""The dashboard's pages audited by Deque's axe-core (WCAG 2 A and AA rules), at desktop and
phone width. axe is loaded into each page by the test (the page's own policy would refuse a
script it did not serve, so this one browser context lets the test's script in)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from hermes.home import Home
from tests.npm_tools import NpmTools

WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


@pytest.fixture
def audited(browser: Any) -> Iterator[Any]:
    context = browser.new_context(bypass_csp=True)
    context.set_default_timeout(60_000)
    yield context.new_page()
    context.close()


def violations(page: Any, npm: NpmTools) -> list[str]:
    page.add_script_tag(path=str(npm.axe))
    found = page.evaluate("async (rules) => (await axe.run(document, {runOnly: rules})).violations", WCAG)
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}" for v in found]


def test_every_page_passes_the_wcag_rules_at_desktop_and_phone_width(audited: Any, dashboard: Any, home: Home,
                                                                      npm: NpmTools, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    everything = ", ".join(f'"{part}"' for part in npm.everything[1:])
    app = ", ".join(f'"{part}"' for part in npm.apps_example[1:])
    home.config.write_text(
        "mcp_servers:\n"
        f"  everything:\n    command: {npm.node}\n    args: [{everything}]\n"
        f"  clock:\n    command: {npm.node}\n    args: [{app}]\n"
        "  broken:\n    command: /nonexistent/program\n")
    running = dashboard()
    audited.goto(running.url)
    for server in ("everything", "clock"):  # the menu follows their starts
        expect(audited.locator(f'li[data-server="{server}"] .badge')).to_have_text("connected")
    audited.goto(running.base + "/servers/clock/tools/get-time")
    audited.get_by_role("button", name="Run get-time").click()
    expect(audited.locator("[data-result]")).to_be_visible()  # the run's page once it has ended
    view = audited.url.removeprefix(running.base)
    found: dict[str, list[str]] = {}
    for width in (1280, 390):
        audited.set_viewport_size({"width": width, "height": 900})
        for path in ("/", "/servers/everything", "/servers/broken", "/servers/everything/tools/echo", "/catalog",
                     "/catalog/time", "/chat", view):
            audited.goto(running.base + path)
            problems = violations(audited, npm)
            if problems:
                found[f"{path} at {width}px"] = problems
    assert found == {}
