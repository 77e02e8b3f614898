"""allow / ask / deny on every path a tool call takes: a model in chat (directly and through the
deferred catalog's `call_tool`), `hermes tools call`, an MCP client through `hermes mcp serve`, and a
server's own tools in a sampling round. The server records every call that reaches it, so "never
called" is read from the server's side, not from hermes's word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from ruamel.yaml import YAML

from hermes.home import Home
from tests.agent.conftest import model_config
from tests.support import START_WAIT, fast_entry, hermes, sdk_client_over_http, serving_http, stdio_entry, write_config

pytestmark = pytest.mark.anyio

# delete is denied by a top-level rule, crash by the server's own; echo asks wherever a model,
# a person or a client calls it; add runs (a rule allows it).
RULES = {"deny": ["mcp__box__delete"], "ask": ["echo"], "allow": ["mcp__box__add"]}


def _box(home: Home, trace: Path, model: Any = None, **extra: Any) -> None:
    trace.parent.mkdir(exist_ok=True)
    data: dict[str, Any] = {"permissions": RULES,
                            "mcp_servers": {"box": fast_entry("--calls", str(trace.parent),
                                                              approval={"deny": ["crash"]})},
                            **extra}
    if model is not None:
        data["model"] = model_config(model)
    write_config(home, data)


def _reached(trace: Path) -> list[str]:
    return trace.read_text().split() if trace.exists() else []


def _turn(home: Home, *args: str) -> dict[str, Any]:
    ran = hermes("chat", "-q", "go", "--json", *START_WAIT, *args, home=home)
    assert ran.returncode == 0, ran.stderr
    return dict(json.loads(ran.stdout))


def test_a_model_s_calls_follow_the_rules_directly_and_through_call_tool(home: Home, tmp_path: Path,
                                                                           scripted_model: Any) -> None:
    trace = tmp_path / "trace" / "calls.txt"
    calls = {"tool_calls": [{"name": "mcp__box__delete", "arguments": {"what": "everything"}},
                            {"name": "mcp__box__crash"},
                            {"name": "mcp__box__echo", "arguments": {"text": "hi"}},
                            {"name": "mcp__box__add", "arguments": {"a": 1, "b": 2}}]}
    _box(home, trace, scripted_model([calls, {"content": "done"}]))
    turn = _turn(home)
    assert [r["status"] for r in turn["tool_calls"]] == ["denied", "denied", "denied", "ok"]
    assert "permissions.deny: mcp__box__delete" in turn["tool_calls"][0]["result"]
    assert "mcp_servers.box.approval.deny: crash" in turn["tool_calls"][1]["result"]
    assert "asks first (permissions.ask: echo)" in turn["tool_calls"][2]["result"]
    assert _reached(trace) == ["add"]

    # --yes is the one-shot run's yes: echo runs, and nothing makes a denied tool run.
    _box(home, trace, scripted_model([calls, {"content": "done"}]))
    turn = _turn(home, "--yes")
    assert [r["status"] for r in turn["tool_calls"]] == ["denied", "denied", "ok", "ok"]
    # The turn's two allowed calls run at once: either may reach the server first.
    reached = _reached(trace)
    assert reached[:1] == ["add"] and sorted(reached[1:]) == ["add", "echo"]

    deferred = {"tool_calls": [{"name": "call_tool", "arguments": {"name": "mcp__box__delete",
                                                                   "arguments": {"what": "x"}}},
                               {"name": "call_tool", "arguments": {"name": "mcp__box__echo",
                                                                  "arguments": {"text": "x"}}}]}
    _box(home, trace, scripted_model([deferred, {"content": "done"}]))
    turn = _turn(home, "--deferred")
    assert [r["status"] for r in turn["tool_calls"]] == ["denied", "denied"]
    assert _reached(trace) == reached


def test_tools_call_never_runs_a_denied_tool_and_asks_for_a_yes(home: Home, tmp_path: Path) -> None:
    trace = tmp_path / "trace" / "calls.txt"
    _box(home, trace)
    denied = hermes("tools", "call", "mcp__box__delete", "--args", '{"what": "x"}', "--yes", home=home)
    assert denied.returncode == 1 and "denied by permissions.deny: mcp__box__delete" in denied.stderr
    unasked = hermes("tools", "call", "mcp__box__echo", "--args", '{"text": "hi"}', home=home)
    assert unasked.returncode == 1 and "asks first" in unasked.stderr and "--yes" in unasked.stderr
    assert _reached(trace) == []
    # A person's own call of a tool no rule asks for runs (the annotation default is for models).
    assert hermes("tools", "call", "mcp__box__fail", "--args", '{"text": "x"}', home=home).returncode == 1
    said_yes = hermes("tools", "call", "mcp__box__echo", "--args", '{"text": "hi"}', "--yes", home=home)
    assert said_yes.returncode == 0 and said_yes.stdout.strip() == "hi"
    assert _reached(trace) == ["fail", "echo"]


def test_tools_list_shows_each_tool_s_permission_and_why_and_tools_permit_changes_it(home: Home) -> None:
    write_config(home, {"permissions": RULES, "mcp_servers": {"box": fast_entry()}})

    def listed() -> dict[str, Any]:
        return dict(json.loads(hermes("tools", "list", "--json", *START_WAIT, home=home).stdout))

    permissions = {t["name"]: (t["permission"], t["because"]) for t in listed()["tools"]}
    assert permissions["mcp__box__echo"] == ("ask", "permissions.ask: echo")
    assert permissions["mcp__box__add"] == ("allow", "permissions.allow: mcp__box__add")
    assert permissions["mcp__box__crash"] == ("ask", "it does not say it only reads (no readOnlyHint)")
    assert permissions["mcp__box__get_weather"] == ("allow", "it says it only reads")
    assert "mcp__box__delete" not in permissions
    assert [(s["name"], s["why"]) for s in listed()["skipped"] if s["denied"]] == \
        [("mcp__box__delete", "denied by permissions.deny: mcp__box__delete")]
    table = hermes("tools", "list", *START_WAIT, home=home).stdout
    assert "PERMISSION" in table and "denied: delete (box)" in table

    def config() -> Any:
        return YAML(typ="safe").load(home.config.read_text())

    before = config()
    assert hermes("tools", "permit", "mcp-box", "deny", home=home).returncode == 0
    assert config()["permissions"]["deny"] == ["mcp__box__delete", "mcp-box"]
    assert not [t for t in listed()["tools"] if t["server"] == "box"]  # the whole toolset
    assert hermes("tools", "permit", "mcp-box", "default", home=home).returncode == 0
    assert config() == before
    text = home.config.read_text()
    refused = hermes("tools", "permit", "", "deny", home=home)
    assert refused.returncode != 0 and home.config.read_text() == text


async def test_serve_hides_denied_tools_resources_and_prompts_and_asks_its_client(home: Home,
                                                                                tmp_path: Path) -> None:
    trace = tmp_path / "trace" / "calls.txt"
    _box(home, trace)
    # Beside the box: a server denied whole (its toolset), and one whose resource reader is denied.
    data = YAML(typ="safe").load(home.config.read_text())
    data["mcp_servers"] |= {"tb": stdio_entry(), "tr": stdio_entry()}
    data["permissions"]["deny"] += ["mcp-tb", "mcp__tr__read_resource"]
    write_config(home, data)
    answers: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams) and "mcp__box__echo" in params.message
        return types.ElicitResult(action=answers.pop(0))

    # One serve for its three clients (each era, and one that cannot be asked): what each may see
    # and call is decided per client, and a serve with its three upstreams costs four seconds of CPU.
    with serving_http(home, tmp_path / "serve.log") as (url, token):
        for mode in ("legacy", "2026-07-28"):
            async with sdk_client_over_http(url, token, mode=mode, elicitation_callback=answer) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert "mcp__box__echo" in names and "mcp__tr__echo" in names
                assert not {"mcp__box__delete", "mcp__box__crash"} & names and not [n for n in names if "__tb__" in n]
                denied = await client.call_tool("mcp__box__delete", {"what": "x"})
                assert denied.is_error and "denied by permissions.deny" in json.dumps(denied.model_dump(mode="json"))
                answers[:] = ["decline", "accept"]
                declined = await client.call_tool("mcp__box__echo", {"text": "no"})
                assert declined.is_error and "did not accept" in declined.content[0].text  # type: ignore[union-attr]
                accepted = await client.call_tool("mcp__box__echo", {"text": "yes"})
                assert not accepted.is_error and accepted.content[0].text == "yes"  # type: ignore[union-attr]
                if mode == "legacy":
                    # Resources and prompts follow the rules of the tools that read them.
                    assert (await client.list_resources()).resources == []
                    with pytest.raises(Exception, match="No MCP server behind hermes offers the resource"):
                        await client.read_resource("test://hello")
                    prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
                    assert prompts and all("__tr__" in name for name in prompts), prompts
        # A client that cannot be asked gets no yes either.
        async with sdk_client_over_http(url, token, mode="legacy") as client:
            unasked = await client.call_tool("mcp__box__echo", {"text": "nobody"})
            assert unasked.is_error
    assert _reached(trace) == ["echo", "echo"]


def test_a_sampling_round_never_offers_a_denied_tool_and_never_hands_back_an_unapproved_one(
        home: Home, scripted_model: Any) -> None:
    rounds = stdio_entry("tool_rounds.py", protocol="legacy", approval="never",
                         sampling={"auto_approve": True})
    steps = [{"tool_calls": [{"name": "mcp__rounds__pick", "arguments": {"task": "tidy up"}}]},
             {"tool_calls": [{"name": "send_mail", "arguments": {"to": "x"}}]},  # the sampling round's pick
             {"answer_from_tool": True}]
    model = scripted_model(steps)
    write_config(home, {"model": model_config(model), "mcp_servers": {"rounds": rounds},
                        "permissions": {"deny": ["wipe_disk"], "ask": ["mcp__rounds__send_mail"]}})
    turn = _turn(home)
    offered = [tool["function"]["name"] for tool in model.bodies()[1]["tools"]]
    assert offered == ["read_note", "send_mail"]
    assert turn["answer"].startswith("refused: ")
    assert "asks first (permissions.ask: mcp__rounds__send_mail)" in turn["answer"]
    # A tool no rule stops goes back to the server.
    allowed = scripted_model([steps[0], {"tool_calls": [{"name": "read_note", "arguments": {}}]},
                              {"answer_from_tool": True}])
    write_config(home, {"model": model_config(allowed), "mcp_servers": {"rounds": rounds},
                        "permissions": {"deny": ["wipe_disk"], "ask": ["mcp__rounds__send_mail"]}})
    assert "picked: read_note" in _turn(home)["answer"]


def test_a_rule_that_matches_nothing_but_resembles_a_tool_warns_and_bad_rules_are_refused(home: Home) -> None:
    write_config(home, {"mcp_servers": {"my-box": fast_entry(approval={"deny": ["get_weather"]})},
                        "permissions": {"deny": ["mcp__my-box__delete", "mcp__elsewhere__x"]}})
    listed = hermes("tools", "list", *START_WAIT, home=home)
    assert "permissions.deny names 'mcp__my-box__delete', which matches no tool (did you mean " \
           "'mcp__my_box__delete'?)" in listed.stderr
    assert "mcp_servers.my-box.approval.deny names 'get_weather', which matches none of its tools (did you mean " \
           "'get-weather'?)" in listed.stderr
    assert "mcp__elsewhere__x" not in listed.stderr  # a rule for a server not here is not news
    write_config(home, {"permissions": {"deny": [f"tool_{n}" for n in range(1001)]}})
    too_many = hermes("tools", "list", home=home)
    assert too_many.returncode == 2 and "permissions.deny" in too_many.stderr and "at most 1000" in too_many.stderr
    home.config.write_text("permissions:\n  deny: mcp__box__delete   # meant as a list\n")
    before = home.config.read_text()
    refused = hermes("tools", "permit", "mcp__box__crash", "deny", home=home)
    assert refused.returncode != 0 and "permissions.deny must be a list" in refused.stderr
    assert home.config.read_text() == before
