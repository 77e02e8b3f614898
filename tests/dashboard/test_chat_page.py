"""The dashboard's chat: hermes chat's agent on the dashboard's session, asking in the page.

The model is the suite's scripted stand-in (an OpenAI-compatible server that answers from a
script); the servers are real processes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from hermes.agent.transcripts import recent
from hermes.home import Home
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.dashboard.conftest import Running, dashboard
from tests.support import fast_entry, stdio_entry, write_config

pytestmark = pytest.mark.anyio


async def post(running: Running, path: str, body: dict[str, Any]) -> Any:
    answer = await running.client.post(path, content=json.dumps(body),
                                       headers={"Origin": running.base, "Content-Type": "application/json"})
    return answer


async def events_until(lines: AsyncIterator[str], wanted: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The chat's events, read as they come, up to and including the first one `wanted` picks."""
    seen: list[dict[str, Any]] = []
    async for line in lines:
        if line.startswith("data: "):
            seen.append(json.loads(line.removeprefix("data: ")))
            if wanted(seen[-1]):
                return seen
    raise AssertionError(f"the stream ended first: {seen}")


async def test_without_a_model_the_chat_page_says_how_to_configure_one(home: Home) -> None:
    write_config(home, {"mcp_servers": {"fast": fast_entry()}})
    async with dashboard(home) as running:
        page = (await running.client.get("/chat")).text
        assert "No model is configured" in page and "restart the dashboard" in page
        refused = await post(running, "/chat/send", {"text": "hi"})
        assert refused.status_code == 409


async def test_a_tool_that_asks_is_approved_with_a_button_and_the_chat_is_saved_for_resume(
        home: Home, tmp_path: Path, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "old.txt"}}]},
                            {"answer_from_tool": True, "prefix": "Done: "},
                            {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "new.txt"}}]},
                            {"content": "I did not delete it."}])
    write_config(home, {"model": model_config(model), "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    async with dashboard(home) as running, running.client.stream("GET", "/chat/events") as stream:
        lines = stream.aiter_lines()
        assert (await post(running, "/chat/send", {"text": "delete old.txt"})).status_code == 202
        asked = (await events_until(lines, lambda e: e["type"] == "question"))[-1]
        assert asked["kind"] == "tool" and "mcp__fast__delete" in asked["text"]
        assert asked["arguments"] == {"what": "old.txt"} and asked["choices"] == ["once", "always", "deny"]
        assert not (tmp_path / "calls.txt").exists()  # nothing ran before the yes
        assert (await post(running, "/chat/answer", {"id": asked["id"], "choice": "once"})).status_code == 200
        done = await events_until(lines, lambda e: e["type"] in ("answer", "error"))
        assert done[-1] == {**done[-1], "type": "answer"} and done[-1]["text"].startswith("Done: ")
        assert [e["status"] for e in done if e["type"] == "tool_done"] == ["ok"]
        assert (tmp_path / "calls.txt").read_text().split() == ["delete"]

        assert (await post(running, "/chat/send", {"text": "and new.txt"})).status_code == 202
        asked = (await events_until(lines, lambda e: e["type"] == "question"))[-1]
        assert (await post(running, "/chat/answer", {"id": asked["id"], "choice": "maybe"})).status_code == 400
        await post(running, "/chat/answer", {"id": asked["id"], "choice": "deny"})
        done = await events_until(lines, lambda e: e["type"] in ("answer", "error"))
        assert [e["status"] for e in done if e["type"] == "tool_done"] == ["denied"]
        assert (tmp_path / "calls.txt").read_text().split() == ["delete"]  # the denied call never reached it

        saved = recent(home)
        assert saved and saved[0].first == "delete old.txt"
        page = (await running.client.get("/chat")).text
        assert f'data-resume="{saved[0].id}"' in page
        assert (await post(running, "/chat/new", {})).status_code == 200
        resumed = await post(running, "/chat/resume", {"id": saved[0].id})
        assert resumed.status_code == 200 and resumed.json()["messages"] >= 4


async def test_a_servers_form_is_answered_in_the_page(home: Home, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__forms__test_elicitation",
                                             "arguments": {"message": "Who are you?"}}]},
                            {"answer_from_tool": True}])
    write_config(home, {"model": model_config(model),
                        "mcp_servers": {"forms": stdio_entry("conformance_server.py", approval="never")}})
    async with dashboard(home) as running, running.client.stream("GET", "/chat/events") as stream:
        lines = stream.aiter_lines()
        await post(running, "/chat/send", {"text": "ask me"})
        asked = (await events_until(lines, lambda e: e["type"] == "question"))[-1]
        assert asked["kind"] == "form" and "Who are you?" in asked["text"]
        assert [f["name"] for f in asked["fields"]] == ["username", "email"]
        missing = await post(running, "/chat/answer", {"id": asked["id"], "choice": "accept",
                                                       "values": {"username": "ada"}})
        assert missing.status_code == 400 and "required" in missing.json()["error"]
        await post(running, "/chat/answer", {"id": asked["id"], "choice": "accept",
                                             "values": {"username": "ada", "email": "ada@example.com"}})
        done = await events_until(lines, lambda e: e["type"] in ("answer", "error"))
        assert "ada@example.com" in done[-1]["text"]


async def test_without_a_model_a_tool_run_from_its_page_asks_its_form_on_the_page(home: Home) -> None:
    write_config(home, {"mcp_servers": {"forms": stdio_entry("conformance_server.py", approval="never")}})
    async with dashboard(home) as running, running.client.stream("GET", "/chat/events") as stream:
        lines = stream.aiter_lines()
        started = await running.client.post("/servers/forms/tools/test_elicitation",
                                            data={"arguments": '{"message": "Who are you?"}'},
                                            headers={"Origin": running.base})
        assert "Running test_elicitation" in started.text  # the page answers at once; the tool waits for the user
        asked = (await events_until(lines, lambda e: e["type"] == "question"))[-1]
        pending = (await running.client.get("/questions")).json()["pending"]
        assert [q["id"] for q in pending] == [asked["id"]]  # a page opened now shows it too
        await post(running, "/chat/answer", {"id": asked["id"], "choice": "accept",
                                             "values": {"username": "ada", "email": "ada@example.com"}})
        await events_until(lines, lambda e: e["type"] == "answered")
        view = str(started.url).rsplit("/", 1)[1]
        state = (await running.client.get(f"/views/{view}/state?wait=1")).json()
        assert state["done"] and "ada@example.com" in json.dumps(state["result"])
