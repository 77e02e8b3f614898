"""`hermes mcp serve` for a client of MCP 2026-07-28 in its default mode (no back-channel).

The official SDK `Client` in its default mode negotiates 2026-07-28 with `serve`. What an upstream
server asks during a call (a form, the client's model) reaches that client as input-required rounds
of the call, answered by its own callbacks; over HTTP two clients calling the same upstream at once
never get each other's questions. Both upstream eras: the test server answers in the era it is
spoken to.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from hermes.home import Home
from tests.npm_tools import NpmTools
from tests.support import (
    PATIENCE,
    PYTHON,
    START_WAIT,
    sdk_client_over_http,
    serve_params,
    serving_http,
    stdio_entry,
    write_config,
)

pytestmark = pytest.mark.anyio


def _serve(home: Home) -> StdioServerParameters:
    return serve_params(home, "--only", "conf", "--no-prefix")


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(scope="module")
def shared_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Connect]:
    """One `serve --http` before the conformance server, for the tests of this module that need
    nothing else: each connects its own client (the SDK's, with that test's callbacks and era), as
    clients of a shared gateway do, and leaves. Each `serve` with its upstream costs two seconds of
    CPU to start; what a test proves is in its client's exchange, not in a process of its own."""
    home = Home(tmp_path_factory.mktemp("serve-eras"))
    with _serving_http(home, {"conf": stdio_entry("conformance_server.py")}) as connect:
        yield connect


@contextlib.contextmanager
def _serving_http(home: Home, servers: dict[str, Any]) -> Iterator[Connect]:
    """`serve --http --only conf --no-prefix` for `servers`; a way to connect an SDK client to it."""
    write_config(home, {"mcp_servers": servers})
    with serving_http(home, home.root / "serve.log", "--only", "conf", "--no-prefix") as (url, token):
        yield functools.partial(sdk_client_over_http, url, token)


def _callbacks(name: str) -> dict[str, Any]:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": name, "email": f"{name}@example.org"})

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", model="stand-in",
                                         content=types.TextContent(type="text", text=f"{name}'s model"))

    return {"elicitation_callback": elicit, "sampling_callback": sample}


@pytest.mark.parametrize("upstream", ["auto", "legacy"])
async def test_a_default_mode_sdk_client_gets_the_upstream_s_questions_as_rounds(request: pytest.FixtureRequest,
                                                                                 home: Home, upstream: str) -> None:
    """Over HTTP (the module's shared serve) before an upstream of today's era; over stdio (a serve
    of its own) before a handshake-era one: both of serve's transports carry the rounds."""
    if upstream == "auto":
        client_of_serve = request.getfixturevalue("shared_serve")(**_callbacks("ada"))
    else:
        write_config(home, {"mcp_servers": {"conf": stdio_entry("conformance_server.py", protocol=upstream)}})
        client_of_serve = Client(_serve(home), **_callbacks("ada"))
    async with client_of_serve as client:
        assert client.protocol_version == "2026-07-28"
        asked = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert not asked.is_error and "ada@example.org" in asked.content[0].text, asked  # type: ignore[union-attr]
        sampled = await client.call_tool("test_sampling", {"prompt": "6x7?"})
        assert sampled.content[0].text == "LLM response: ada's model", sampled  # type: ignore[union-attr]


async def _two_clients_elicit(connect: Connect, mode: str,
                              callbacks: Callable[[str], dict[str, Any]]) -> dict[str, str]:
    """'ada' and 'grace' call the upstream's elicitation tool at once through `serve --http`, each
    with its own callbacks; what each call answered."""
    answers: dict[str, str] = {}

    async def one(name: str) -> None:
        async with connect(mode=mode, **callbacks(name)) as client:
            result = await client.call_tool("test_elicitation", {"message": f"for {name}"})
            answers[name] = result.content[0].text  # type: ignore[union-attr]

    async with anyio.create_task_group() as tasks:
        for name in ("ada", "grace"):
            tasks.start_soon(one, name)
    return answers


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_two_http_clients_never_get_each_other_s_questions(shared_serve: Connect, mode: str) -> None:
    answers = await _two_clients_elicit(shared_serve, mode, _callbacks)
    assert "ada@example.org" in answers["ada"] and "grace" not in answers["ada"], answers
    assert "grace@example.org" in answers["grace"] and "ada" not in answers["grace"], answers


async def test_a_question_nobody_can_place_is_refused_not_misrouted(home: Home) -> None:
    """A handshake-era upstream's question says nothing of its call: with two calls of that server in
    flight, hermes cannot tell whose it is, and refuses it; neither client is asked the other's."""
    asked: list[str] = []

    def recording(name: str) -> dict[str, Any]:
        async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(f"{name}: {params.message}")
            return types.ElicitResult(action="accept", content={"username": name, "email": "x@example.org"})

        return {"elicitation_callback": elicit}

    with _serving_http(home, {"conf": stdio_entry("conformance_server.py", protocol="legacy")}) as connect:
        results = await _two_clients_elicit(connect, "legacy", recording)
    assert all(entry.split(": ")[1] == f"for {entry.split(':')[0]}" for entry in asked), asked
    # Each call ended with its own answer, or with the refusal: never with the other client's.
    assert set(results) == {"ada", "grace"}
    for name, text in results.items():
        other = "grace" if name == "ada" else "ada"
        assert other not in text, results


async def test_a_server_s_sampling_bounds_hold_behind_serve(home: Home, tmp_path: Path) -> None:
    seen: list[int] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(params.max_tokens)
        return types.CreateMessageResult(role="assistant", model="m", content=types.TextContent(type="text", text="ok"))

    write_config(home, {"mcp_servers": {
        "capped": stdio_entry("conformance_server.py", sampling={"max_tokens_cap": 7}),
        "off": stdio_entry("conformance_server.py", sampling={"enabled": False})}})
    with serving_http(home, tmp_path / "serve.log") as (url, token):
        async with sdk_client_over_http(url, token, sampling_callback=sample) as client:
            sampled = await client.call_tool("mcp__capped__test_sampling", {"prompt": "long answer please"})
            assert sampled.content[0].text == "LLM response: ok" and seen == [7], (sampled, seen)  # type: ignore[union-attr]
            refused = await client.call_tool("mcp__off__test_sampling", {"prompt": "x"})
    assert seen == [7] and "sampling.enabled: false" in refused.content[0].text, refused  # type: ignore[union-attr]


async def test_a_2026_client_without_the_capability_a_tool_needs_gets_32021(shared_serve: Connect) -> None:
    """Sampling has no answer hermes could give for the client: the call fails with -32021 naming
    it. A form the client cannot show is declined for it, and the server finishes its call."""
    from mcp.shared.exceptions import MCPError

    async with shared_serve() as client:  # no callbacks: neither sampling nor elicitation is declared
        with pytest.raises(MCPError) as caught:
            await client.call_tool("test_sampling", {"prompt": "hello"})
        declined = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert caught.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert caught.value.error.data == {"requiredCapabilities": {"sampling": {}}}, caught.value.error.data
    assert declined.content[0].text == "User decline", declined  # type: ignore[union-attr]


async def test_answers_a_2026_client_sends_with_its_first_request_answer_the_upstream(shared_serve: Connect) -> None:
    """SEP-2322 lets a client send answers before it is asked: they reach the upstream's question
    of the same key, and answers nobody asked for are ignored."""
    given = {"user_name": types.ElicitResult(action="accept", content={"name": "Alice"}),
             "unasked": types.ElicitResult(action="accept", content={"x": "y"})}
    async def never(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        raise AssertionError("the answer was given with the request; nobody should be asked")

    async with shared_serve(elicitation_callback=never) as client:
        result = await client.session.call_tool("test_input_required_result_elicitation", {},
                                                input_responses=given, allow_input_required=True)
    assert isinstance(result, types.CallToolResult) and result.content[0].text == "Hello, Alice!", result  # type: ignore[union-attr]


async def test_a_retry_that_leaves_a_question_unanswered_gets_it_again_at_once(shared_serve: Connect) -> None:
    """No wait for an answer that is not coming: the unanswered question comes back in the next
    round, and answering it then finishes the call."""
    async with shared_serve(**_callbacks("ada")) as client:
        session = client.session
        first = await session.call_tool("test_input_required_result_elicitation", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        with anyio.fail_after(PATIENCE / 4):
            again = await session.call_tool("test_input_required_result_elicitation", {}, input_responses={},
                                            request_state=first.request_state, allow_input_required=True)
        assert isinstance(again, types.InputRequiredResult) and list(again.input_requests) == ["user_name"], again
        answer = {"user_name": types.ElicitResult(action="accept", content={"name": "Ada"})}
        done = await session.call_tool("test_input_required_result_elicitation", {}, input_responses=answer,
                                       request_state=again.request_state, allow_input_required=True)
    assert isinstance(done, types.CallToolResult) and done.content[0].text == "Hello, Ada!", done  # type: ignore[union-attr]


async def test_a_prompt_that_asks_first_comes_through_serve_in_rounds(shared_serve: Connect) -> None:
    """An upstream prompt answered in input-required rounds reaches a 2026-07-28 client as rounds of
    its own; the retry of a prompt's round cannot finish a tool call."""
    from mcp.shared.exceptions import MCPError

    async with shared_serve(**_callbacks("ada")) as client:
        first = await client.session.get_prompt("test_input_required_result_prompt", allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and list(first.input_requests) == ["user_context"], first
        with pytest.raises(MCPError):
            await client.session.call_tool("test_simple_text", {}, request_state=first.request_state,
                                           input_responses={}, allow_input_required=True)
        answer = {"user_context": types.ElicitResult(action="accept", content={"context": "tea"})}
        done = await client.session.get_prompt("test_input_required_result_prompt", input_responses=answer,
                                               request_state=first.request_state, allow_input_required=True)
    assert isinstance(done, types.GetPromptResult), done
    assert "tea" in done.messages[0].content.text, done  # type: ignore[union-attr]


def test_a_default_mode_fastmcp_client_gets_sampling_elicitation_and_roots_through_serve(home: Home,
                                                                                         tmp_path: Path) -> None:
    """fastmcp (its own venv, its default `mode="auto"`, so 2026-07-28): the upstream's questions
    reach fastmcp's own handlers, and roots are fastmcp's, never hermes's folder."""
    import json
    import subprocess

    from tests.bridge_tools import install_pinned

    python = install_pinned("fastmcp") / "python"
    root = tmp_path / "fastmcp-root"
    root.mkdir()
    write_config(home, {"mcp_servers": {"conf": stdio_entry("conformance_server.py")}})
    with serving_http(home, tmp_path / "serve.log") as (url, token):
        ran = subprocess.run([str(python), str(Path(__file__).parent.parent / "clients" / "fastmcp_call.py"), url,
                              token, root.as_uri(), "mcp__conf__"], capture_output=True, text=True,
                             timeout=PATIENCE, stdin=subprocess.DEVNULL)
    assert ran.returncode == 0, ran.stderr[-3000:]
    answer = json.loads(ran.stdout.splitlines()[-1])
    texts = answer["texts"]
    assert texts["test_sampling"] == "LLM response: fastmcp's model says hi", answer
    assert "'username': 'fast'" in texts["test_elicitation"], answer
    assert texts["test_input_required_result_list_roots"] == f"Roots: {root.as_uri()}", answer
    assert answer["asked"] == ["sampling", "elicitation: Who are you?"], answer


def test_the_typescript_sdk_calls_a_task_tool_with_plain_call_tool(home: Home, npm: Any) -> None:
    """server-everything's task-only tool, through serve: hermes runs the task, the TypeScript client
    (which refuses a tool that needs `tasks` it does not have) sees an ordinary tool and calls it."""
    import json
    import shutil
    import subprocess

    write_config(home, {"mcp_servers": {"everything": {"command": npm.everything[0], "args": npm.everything[1:]}}})
    script = npm.root / "ts_call.mjs"  # beside node_modules, where Node resolves the SDK from
    shutil.copy(Path(__file__).parents[1] / "clients" / "ts_call.mjs", script)
    ran = subprocess.run([npm.node, str(script), "mcp__everything__simulate_research_query", '{"topic": "tea"}',
                          "--", PYTHON, "-m", "hermes", "mcp", "serve", *START_WAIT], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "HERMES_HOME": str(home.root), "NO_COLOR": "1"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["listed"] is not None and "execution" not in seen["listed"], seen["listed"]
    assert not seen["result"].get("isError") and "Research Report" in seen["result"]["content"][0]["text"]


async def test_an_upstream_prompt_change_reaches_clients_of_both_eras(home: Home, tmp_path: Path) -> None:
    """One upstream change, two clients of one `serve --http` at once: a 2026-07-28 client hears it
    on its subscription, a 2025-11-25 client as a notification on its stream."""
    write_config(home, {"mcp_servers": {"m": stdio_entry("modern_only.py")}})
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            heard.set()

    async def prompts(client: Client) -> set[str]:
        return {p.name for p in (await client.list_prompts()).prompts}

    with serving_http(home, tmp_path / "serve.log") as (url, token):
        async with sdk_client_over_http(url, token, mode="legacy", message_handler=on_message) as old, \
                sdk_client_over_http(url, token) as new:
            assert old.protocol_version == "2025-11-25" and new.protocol_version == "2026-07-28"
            assert "mcp__m__farewell" not in await prompts(old) | await prompts(new)
            with anyio.fail_after(PATIENCE):  # a bound on a failure, not a wait for time
                async with new.listen(prompts_list_changed=True) as subscription:
                    await new.call_tool("mcp__m__grow_prompt", {})
                    async for event in subscription:
                        assert type(event).__name__ == "PromptsListChanged"
                        break
                await heard.wait()
            assert "mcp__m__farewell" in await prompts(old) and "mcp__m__farewell" in await prompts(new)


async def test_an_upstream_round_of_three_questions_comes_through_whole(shared_serve: Connect,
                                                                        tmp_path: Path) -> None:
    """A 2026 upstream asks a form, the model and the roots in one round; a 2026 client of serve gets
    them under the upstream's own keys, answers them, and the upstream's state survives the trip."""
    keys: list[str] = []

    async def roots(context: Any) -> types.ListRootsResult:
        keys.append(str(context.request_id))
        return types.ListRootsResult(roots=[types.Root(uri=tmp_path.as_uri(), name="work")])  # type: ignore[arg-type]

    callbacks = _callbacks("ada")
    async with shared_serve(list_roots_callback=roots, **callbacks) as client:
        result = await client.call_tool("test_input_required_result_multiple_inputs", {})
        text = result.content[0].text  # type: ignore[union-attr]
        assert "user_name: {'username': 'ada'" in text and "greeting: ada's model" in text, text
        assert f"client_roots: {tmp_path.as_uri()}" in text, text
        assert keys == ["client_roots"]  # the upstream's key, not one of hermes's
        state = await client.call_tool("test_input_required_result_request_state", {})
        assert state.content[0].text == "state-ok", state  # type: ignore[union-attr]


async def test_a_2026_client_hears_the_upstream_s_log_lines_during_its_call(shared_serve: Connect) -> None:
    logs: list[object] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async with shared_serve(logging_callback=on_log, log_level="info") as client:
        assert client.protocol_version == "2026-07-28"
        logged = await client.call_tool("test_tool_with_logging", {})
        assert not logged.is_error, logged
    assert [str(line) for line in logs] == ["Tool execution started", "Tool processing data",
                                            "Tool execution completed"], logs


async def test_a_url_question_of_a_2026_upstream_reaches_a_2025_client_with_the_id_it_requires(
        shared_serve: Connect) -> None:
    asked: list[types.ElicitRequestURLParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        asked.append(params)
        return types.ElicitResult(action="accept")

    async with shared_serve(mode="legacy", elicitation_callback=elicit) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("test_url_elicitation", {})
    assert not result.is_error and result.content[0].text == "User accept", result  # type: ignore[union-attr]
    assert asked[0].url == "https://auth.example.org/start?session=abc" and asked[0].elicitation_id


async def test_a_late_2026_http_client_s_roots_reach_a_server_that_asked_before_it_came(
        home: Home, npm: NpmTools, tmp_path: Path) -> None:
    """server-filesystem (npm) asks its client's roots when it starts, before any client has
    connected to `serve --http`; a 2026-07-28 client sends no `initialized`, so its first call is
    where the question is put to it (an input-required round), and the server then works in the
    client's folder. The sandbox is off: a client's folder is not among what it shares."""
    root = tmp_path / "work"
    root.mkdir()
    write_config(home, {"mcp": {"sandbox": "off"},
                        "mcp_servers": {"files": {"command": npm.filesystem[0], "args": npm.filesystem[1:]}}})
    asked: list[str] = []

    async def roots(context: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri(), name="work")])  # type: ignore[arg-type]

    with serving_http(home, tmp_path / "serve.log") as (url, token):
        async with sdk_client_over_http(url, token, list_roots_callback=roots) as client:
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("mcp__files__list_allowed_directories", {})
            assert asked, "the client was never asked its roots"
            with anyio.fail_after(PATIENCE):  # the server takes them in on its own time
                while str(root) not in (listed := (await client.call_tool(
                        "mcp__files__list_allowed_directories", {})).content[0].text):  # type: ignore[union-attr]
                    await anyio.sleep(0.05)
    assert str(root) in listed
