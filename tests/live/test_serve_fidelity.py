"""`hermes mcp serve` as a faithful aggregator, proven with the reference servers from npm and the
Python SDK's client downstream: what hermes does not own passes through untouched."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from hermes.home import Home
from tests.npm_tools import NpmTools
from tests.support import (
    PATIENCE,
    PYTHON,
    fast_entry,
    hermes,
    serve_params,
    serving_http,
    stdio_entry,
    write_config,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def everything_home(home: Home, npm: NpmTools, tmp_path: Path) -> Home:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "note.txt").write_text("hello from the allowed folder")
    write_config(home, {"mcp_servers": {
        "everything": {"command": npm.everything[0], "args": npm.everything[1:]},
        "files": {"command": npm.filesystem[0], "args": [*npm.filesystem[1:], str(allowed)],
                  "roots": [str(allowed)]},
    }})
    return home


async def test_tool_definitions_results_and_progress_pass_through(everything_home: Home) -> None:
    progress: list[tuple[float, float | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    async with Client(serve_params(everything_home), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        write = tools["mcp__files__write_file"]
        assert write.annotations is not None and write.annotations.destructive_hint is True
        assert write.output_schema is not None  # server-filesystem declares one for every tool
        research = tools["mcp__everything__simulate_research_query"]
        assert research.title == "Simulate Research Query"
        # Task-only upstream; hermes runs the task itself, so here it is an ordinary tool (no `tasks` needed).
        assert research.execution is None
        assert tools["mcp__everything__get_structured_content"].output_schema is not None
        assert not any(name.endswith(("__list_resources", "__get_prompt")) for name in tools)

        image = await client.call_tool("mcp__everything__get_tiny_image", {})
        assert [block.type for block in image.content] == ["text", "image", "text"]
        assert isinstance(image.content[1], types.ImageContent) and image.content[1].mime_type == "image/png"
        structured = await client.call_tool("mcp__everything__get_structured_content", {"location": "New York"})
        assert structured.structured_content is not None and "temperature" in structured.structured_content
        links = await client.call_tool("mcp__everything__get_resource_links", {"count": 2})
        assert [b.type for b in links.content].count("resource_link") == 2

        done = await client.call_tool("mcp__everything__trigger_long_running_operation", {"duration": 1, "steps": 3},
                                      progress_callback=on_progress)
        assert not done.is_error and progress == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

        # A task-only tool: hermes runs it as a task upstream; the client here calls it plainly.
        report = await client.call_tool("mcp__everything__simulate_research_query", {"topic": "tea"})
        assert not report.is_error and "Research Report" in report.content[0].text  # type: ignore[union-attr]


async def test_sampling_elicitation_and_roots_are_asked_of_the_client_downstream(everything_home: Home,
                                                                                 tmp_path: Path) -> None:
    asked: list[str] = []
    elsewhere = tmp_path / "client-root"
    elsewhere.mkdir()

    async def sampling(ctx: ClientRequestContext, params: types.CreateMessageRequestParams
                       ) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(role="assistant", model="downstream-model", stop_reason="endTurn",
                                         content=types.TextContent(type="text", text="forty-two"))

    async def elicitation(ctx: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append("elicitation")
        return types.ElicitResult(action="decline")

    async def roots(ctx: ClientRequestContext) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri=elsewhere.as_uri(), name="client-root")])  # type: ignore[arg-type]

    async with Client(serve_params(everything_home), mode="legacy", sampling_callback=sampling,
                      elicitation_callback=elicitation, list_roots_callback=roots) as client:
        sampled = await client.call_tool("mcp__everything__trigger_sampling_request", {"prompt": "x", "maxTokens": 5})
        assert not sampled.is_error and "forty-two" in sampled.content[0].text  # type: ignore[union-attr]
        declined = await client.call_tool("mcp__everything__trigger_elicitation_request", {})
        assert "declined" in declined.content[0].text  # type: ignore[union-attr]
        listed = await client.call_tool("mcp__everything__get_roots_list", {})
        assert elsewhere.as_uri() in listed.content[0].text  # type: ignore[union-attr]
        # The files server has roots: in config.yaml, which win over the client's.
        allowed = await client.call_tool("mcp__files__list_allowed_directories", {})
        assert "allowed" in allowed.content[0].text  # type: ignore[union-attr]
    assert [a for a in asked if a != "roots"] == ["sampling", "elicitation"] and "roots" in asked


async def test_resources_templates_prompts_and_completions_are_offered_as_themselves(everything_home: Home) -> None:
    async with Client(serve_params(everything_home), mode="legacy") as client:
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert {"mcp__everything__simple_prompt", "mcp__everything__args_prompt"} <= prompts
        simple = await client.get_prompt("mcp__everything__simple_prompt")
        assert simple.messages and simple.messages[0].role == "user"
        args = await client.get_prompt("mcp__everything__args_prompt", {"city": "Lisbon"})
        assert "Lisbon" in json.dumps([m.model_dump(mode="json") for m in args.messages])
        templates = (await client.list_resource_templates()).resource_templates
        template = next(t for t in templates if t.uri_template.startswith("demo://resource/dynamic/text"))
        assert template.name.startswith("mcp__everything__")
        text = await client.read_resource("demo://resource/dynamic/text/1")
        assert text.contents and isinstance(text.contents[0], types.TextResourceContents)
        prompt = types.PromptReference(type="ref/prompt", name="mcp__everything__args_prompt")
        completion = await client.complete(prompt, {"name": "city", "value": "B"})
        assert isinstance(completion.completion.values, list)


async def test_only_one_server_under_its_own_names_and_its_logs_reach_the_client(home: Home) -> None:
    write_config(home, {"mcp_servers": {"conformance": stdio_entry("conformance_server.py"),
                                        "other": fast_entry()}})
    logs: list[object] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with Client(serve_params(home, "--only", "conformance", "--no-prefix"), mode="legacy",
                      logging_callback=on_log) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "test_simple_text" in names and not any(n.startswith("mcp__") for n in names)
        text = await client.call_tool("test_simple_text", {})
        assert text.content[0].text == "This is a simple text response for testing."  # type: ignore[union-attr]
        logged = await client.call_tool("test_tool_with_logging", {})
        assert not logged.is_error
    assert len(logs) == 3 and "Tool execution started" in str(logs[0]), logs
    refused = hermes("mcp", "serve", "--no-prefix", home=home)
    assert refused.returncode == 2 and "--no-prefix needs --only" in refused.stderr


def test_http_answers_401_with_a_bearer_challenge_and_the_same_capabilities(home: Home, tmp_path: Path) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    with serving_http(home, tmp_path / "serve.log") as (url, token):
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        denied = httpx2.post(url, json=initialize, headers=headers)
        assert denied.status_code == 401 and denied.headers["www-authenticate"].startswith("Bearer")
        wrong = httpx2.post(url, json=initialize, headers={**headers, "Authorization": "Bearer nope"})
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
        answered = httpx2.post(url, json=initialize, headers={**headers, "Authorization": f"Bearer {token}"})
        assert answered.status_code == 200
        body = answered.text
        # An SSE answer opens with the priming event (an id and empty data) a reconnecting client resumes from.
        events = [line[len("data:"):].strip() for line in body.splitlines() if line.startswith("data:")]
        data = json.loads(next(e for e in events if e)) if events else answered.json()
        capabilities: dict[str, Any] = data["result"]["capabilities"]
        assert capabilities["tools"]["listChanged"] is True and capabilities["prompts"]["listChanged"] is True


def test_serve_without_a_config_says_where_it_looked(tmp_path: Path) -> None:
    empty = Home(tmp_path / "nowhere")
    # stdin at end of file: serve starts, prints its notice, and ends with the client gone.
    finished = subprocess.run([PYTHON, "-m", "hermes", "mcp", "serve"], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=PATIENCE,
                              env={**os.environ, "HERMES_HOME": str(empty.root)})
    assert "no config found at" in finished.stderr and str(empty.config) in finished.stderr, finished.stderr
    assert "Traceback" not in finished.stderr


@pytest.mark.filterwarnings("ignore:resources/.*subscribe is removed")  # a 2025-era client, on purpose
async def test_a_subscribed_resource_that_changes_upstream_is_announced_downstream(everything_home: Home) -> None:
    updated = anyio.Event()
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
            updated.set()

    async with Client(serve_params(everything_home), mode="legacy", message_handler=on_message) as client:
        uri = "demo://resource/dynamic/text/1"
        await client.subscribe_resource(uri)
        await client.call_tool("mcp__everything__toggle_subscriber_updates", {})
        with anyio.fail_after(PATIENCE):
            await updated.wait()
        assert uri in seen
        await client.unsubscribe_resource(uri)
