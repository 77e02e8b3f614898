"""The dashboard's chat in Chromium: a tool that asks is approved with a button, a server's form
is filled in the page. The model is the suite's scripted stand-in; the servers are real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from browser.conftest import screenshot
from hermes.home import Home
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.support import fast_entry, stdio_entry, write_config


def test_chatting_with_approvals_as_buttons_and_a_form_in_the_page(page: Any, dashboard: Any, home: Home,
                                                                    tmp_path: Path, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([
        {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "<b>old</b>.txt"}}]},
        {"answer_from_tool": True, "prefix": "Done: <script>alert(1)</script> "},
        {"tool_calls": [{"name": "mcp__forms__test_elicitation", "arguments": {"message": "Who are you?"}}]},
        {"answer_from_tool": True}])
    # The folder the fast server records its calls in is named in its arguments: the sandbox keeps
    # it read-only unless the entry grants it.
    recorder = fast_entry("--calls", str(tmp_path), sandbox={"write": [str(tmp_path)]})
    write_config(home, {"model": model_config(model),
                        "mcp_servers": {"fast": recorder,
                                        "forms": stdio_entry("conformance_server.py", approval="never")}})
    running = dashboard()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(running.url)
    page.get_by_role("link", name="Chat").click()

    page.get_by_label("Message").fill("delete old.txt")
    page.get_by_role("button", name="Send").click()
    question = page.locator("[data-question]")
    expect(question).to_contain_text("Run mcp__fast__delete? It asks first")
    expect(question.locator("[data-question-detail]")).to_contain_text("<b>old</b>.txt")
    screenshot(page, "chat-approval")
    question.get_by_role("button", name="Run once").click()
    expect(page.locator(".conversation li.assistant").last).to_contain_text("Done: <script>alert(1)</script>")
    assert (tmp_path / "calls.txt").read_text().split() == ["delete"]

    page.get_by_label("Message").fill("ask me")
    page.get_by_role("button", name="Send").click()
    expect(question).to_contain_text("Who are you?")
    page.locator("#field-username").fill("ada")
    page.locator("#field-email").fill("ada@example.com")
    question.get_by_role("button", name="Submit").click()
    expect(page.locator(".conversation li.assistant").last).to_contain_text("ada@example.com")
    screenshot(page, "chat-form")
    assert dialogs == []


def test_a_tool_run_from_its_page_asks_the_servers_form_in_the_page(page: Any, dashboard: Any, home: Home) -> None:
    write_config(home, {"mcp_servers": {"forms": stdio_entry("conformance_server.py", approval="never")}})
    running = dashboard()
    page.goto(running.url)
    page.goto(running.base + "/servers/forms/tools/test_elicitation")
    page.get_by_label("Arguments (a JSON object)").fill('{"message": "Who are you?"}')
    page.get_by_role("button", name="Run test_elicitation").click()
    question = page.locator("[data-question]")
    expect(question).to_contain_text("Who are you?")  # the page asks while the tool waits
    page.locator("#field-username").fill("ada")
    page.locator("#field-email").fill("ada@example.com")
    screenshot(page, "run-page-form")
    question.get_by_role("button", name="Submit").click()
    expect(page.locator("[data-result]")).to_contain_text("ada@example.com")
