"""`hermes mcp serve` offering the Tasks extension (2026-07-28) to its clients.

A client that declares the extension gets a task the moment the call's upstream made it one: the
conformance suite's fixtures (`tests/servers/task_fixtures.py` on the conformance upstream), and
server-everything's research tool (npm), whose task hermes follows the 2025-11-25 way. Questions
the upstream asks within its task reach the client as the task's `inputRequests`; cancels reach the
upstream. A client without the extension gets the call's result, as before. The official suite's
tasks-* scenarios run in `conformance/run.py`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from hermes.home import Home
from tests.modern_wire import ModernClient, WireError
from tests.support import PATIENCE, PYTHON, serving_http, stdio_entry, write_config

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def conf_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """One `serve --http` before the conformance upstream, for the tests that need nothing else:
    (its URL, its token). Each test connects its own client and follows its own tasks; a serve
    and its upstream cost two seconds of CPU to start."""
    home = Home(tmp_path_factory.mktemp("serve-tasks"))
    write_config(home, {"mcp_servers": {"conf": stdio_entry("conformance_server.py")}})
    with serving_http(home, home.root / "serve.log") as found:
        yield found


@asynccontextmanager
async def _client(url: str, token: str, **options: Any) -> AsyncIterator[ModernClient]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=PATIENCE) as http:
        yield ModernClient(url, http, **options)


async def test_a_call_the_upstream_runs_as_a_task_is_a_task_for_a_client_that_declared_the_extension(
        conf_serve: tuple[str, str]) -> None:
    async with _client(*conf_serve) as client:
        created = await client.request("tools/call", {"name": "mcp__conf__slow_compute",
                                                      "arguments": {"seconds": 0, "label": "now"}})
        assert created["resultType"] == "task" and created["status"] == "working", created
        assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
        done = await client.until(created["taskId"], "completed", "failed")
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "computed now after 0 s"
        assert done["resultType"] == "complete" and "error" not in done

        # A tool's own error is a completed task with isError; a call that failed is a failed task.
        tool_error = await client.request("tools/call", {"name": "mcp__conf__failing_job", "arguments": {}})
        found = await client.until(tool_error["taskId"], "completed", "failed")
        assert found["status"] == "completed" and found["result"]["isError"] is True
        crashed = await client.request("tools/call", {"name": "mcp__conf__protocol_error_job", "arguments": {}})
        found = await client.until(crashed["taskId"], "completed", "failed")
        assert found["status"] == "failed" and "worker crashed" in found["error"]["message"], found
        assert "result" not in found

        # A tool the upstream answers at once stays an ordinary call, and so does its failure.
        plain = await client.request("tools/call", {"name": "mcp__conf__greet", "arguments": {"name": "Ada"}})
        assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "Hello, Ada!"
        missing = await client.request("tools/call", {"name": "mcp__conf__no_such_tool", "arguments": {}})
        assert missing["isError"] is True and "has no tool named" in missing["content"][0]["text"], missing


async def test_a_task_s_questions_are_its_input_requests_and_answers_resume_it(conf_serve: tuple[str, str]) -> None:
    async with _client(*conf_serve) as client:
        created = await client.request("tools/call", {"name": "mcp__conf__multi_input", "arguments": {}})
        asked = await client.until(created["taskId"], "input_required")
        assert set(asked["inputRequests"]) == {"name", "confirm"}, asked  # the upstream's keys, both at once
        assert asked["inputRequests"]["name"]["method"] == "elicitation/create"

        # Some of the answers: the task waits for the rest, and shows only what is left.
        ack = await client.request("tasks/update", {"taskId": created["taskId"], "inputResponses": {
            "name": {"action": "accept", "content": {"name": "Grace"}}, "nobody-asked": {"x": 1}}})
        assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
        left = await client.task(created["taskId"])
        assert left["status"] == "input_required" and set(left["inputRequests"]) == {"confirm"}, left

        with pytest.raises(WireError) as malformed:  # an answer that is no answer is refused, not dropped
            await client.request("tasks/update", {"taskId": created["taskId"],
                                                  "inputResponses": {"confirm": {"action": 7}}})
        assert malformed.value.code == -32602
        await client.request("tasks/update", {"taskId": created["taskId"], "inputResponses": {
            "confirm": {"action": "accept", "content": {"confirm": True}}}})
        done = await client.until(created["taskId"], "completed", "failed")
        assert done["result"]["content"][0]["text"] == "name=Grace confirm={'confirm': True}", done


async def test_a_cancelled_task_stays_cancelled_and_a_client_without_the_extension_gets_results(
        conf_serve: tuple[str, str]) -> None:
    url, token = conf_serve
    async with _client(url, token) as client:
        created = await client.request("tools/call", {"name": "mcp__conf__slow_compute",
                                                      "arguments": {"seconds": 600, "label": "long"}})
        cancel = await client.request("tasks/cancel", {"taskId": created["taskId"]})
        assert cancel["resultType"] == "complete" and "status" not in cancel
        assert (await client.task(created["taskId"]))["status"] == "cancelled"
        await client.request("tasks/cancel", {"taskId": created["taskId"]})  # again: the same ack
        for method in ("tasks/get", "tasks/cancel"):
            with pytest.raises(WireError) as unknown:
                await client.request(method, {"taskId": "no-such-task"})
            assert unknown.value.code == -32602
        with pytest.raises(WireError) as misrouted:
            await client.request("tasks/get", {"taskId": created["taskId"]}, name="another-task")
        assert misrouted.value.code == -32020
        with pytest.raises(WireError) as unrouted:  # over HTTP the header is required
            await client.request("tasks/get", {"taskId": created["taskId"]}, name="")
        assert unrouted.value.code == -32020
        listed = await client.request("tools/list", {})
        assert "execution" not in str(listed)  # 2026-07-28 tool definitions say nothing of tasks

    async with _client(url, token, tasks=False) as plain:
        result = await plain.request("tools/call", {"name": "mcp__conf__slow_compute",
                                                    "arguments": {"seconds": 0, "label": "sync"}})
        assert result["resultType"] == "complete" and result["content"][0]["text"] == "computed sync after 0 s"
        with pytest.raises(WireError) as undeclared:
            await plain.request("tasks/get", {"taskId": created["taskId"]})
        assert undeclared.value.code == -32021
        assert undeclared.value.data == {"requiredCapabilities": {"extensions": {
            "io.modelcontextprotocol/tasks": {}}}}


async def test_a_2025_task_server_s_task_is_a_task_downstream(home: Home, tmp_path: Path, npm: Any) -> None:
    """server-everything (npm) runs its research tool as a 2025-11-25 task: hermes follows it
    upstream, and its 2026-07-28 client follows hermes's task."""
    write_config(home, {"mcp_servers": {"everything": {"command": npm.everything[0], "args": npm.everything[1:]}}})
    with serving_http(home, tmp_path / "serve.log") as (url, token):
        async with _client(url, token) as client:
            created = await client.request("tools/call", {"name": "mcp__everything__simulate_research_query",
                                                          "arguments": {"topic": "tea"}})
            assert created["resultType"] == "task", created
            done = await client.until(created["taskId"], "completed", "failed")
            assert done["status"] == "completed" and "Research Report" in done["result"]["content"][0]["text"], done


async def test_hermes_as_the_client_follows_serve_s_task(conf_serve: tuple[str, str], tmp_path: Path) -> None:
    """hermes's own client (the extension declared on every 2026-07-28 connection) in front of a
    `serve` that runs the call as a task: `tools call` answers the task's result."""
    url, token = conf_serve
    client_home = Home(tmp_path / "client-home")
    client_home.root.mkdir()
    write_config(client_home, {"mcp_servers": {"front": {"url": url,
                                                         "headers": {"Authorization": f"Bearer {token}"}}}})
    ran = await anyio.to_thread.run_sync(lambda: subprocess.run(
        [PYTHON, "-m", "hermes", "tools", "call", "mcp__front__mcp__conf__slow_compute", "--args",
         '{"seconds": 0, "label": "through"}'], capture_output=True, text=True, timeout=PATIENCE,
        env={**os.environ, "HERMES_HOME": str(client_home.root), "NO_COLOR": "1"}))
    assert ran.returncode == 0 and "computed through after 0 s" in ran.stdout, (ran.stdout, ran.stderr)


async def test_a_declined_ask_is_a_result_for_a_client_with_the_extension(home: Home, tmp_path: Path) -> None:
    """A call that never became a task answers as any call does: a tool a rule says asks, declined
    by the client's user, is an error result the model reads, not a JSON-RPC error."""
    servers = {"conf": stdio_entry("conformance_server.py")}
    write_config(home, {"permissions": {"ask": ["mcp__conf__greet"]}, "mcp_servers": servers})
    with serving_http(home, tmp_path / "serve.log") as (url, token):
        async with _client(url, token) as client:
            call = {"name": "mcp__conf__greet", "arguments": {"name": "Ada"}}
            asked = await client.request("tools/call", call)
            assert asked["resultType"] == "input_required", asked
            (key,) = asked["inputRequests"]
            declined = await client.request("tools/call", {**call, "requestState": asked["requestState"],
                                                           "inputResponses": {key: {"action": "decline"}}})
            assert declined["isError"] is True and "did not accept" in declined["content"][0]["text"], declined

