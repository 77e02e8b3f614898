"""The gateway's rooms: one conversation each, questions to the person who asked, strangers kept out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes.agent.transcripts import recent
from hermes.gateway.access import pair
from hermes.gateway.fake import FakePlatform
from hermes.gateway.rooms import room_folder
from hermes.home import Home
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.gateway.conftest import answer, gateway, said
from tests.support import fast_entry, needs_sandbox, stdio_entry, write_config

# The rooms' file and terminal tools run only in the sandbox: without it the gateway does not start.
pytestmark = [pytest.mark.anyio, needs_sandbox]

ALICE, BOB, MALLORY = "@alice:test", "@bob:test", "@mallory:test"


def allowed(*users: str, platform: str = "matrix") -> dict[str, Any]:
    return {platform: {"homeserver": "http://127.0.0.1:9", "user_id": "@hermes:test", "access_token": "t",
                       "allowed_users": list(users)}}


async def test_an_ask_tool_is_approved_in_the_room_by_the_person_who_asked(
        home: Home, tmp_path: Path, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "old.txt"}}]},
                            {"answer_from_tool": True, "prefix": "Done: "}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE, BOB),
                        "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        asked = await said(matrix, "!one", ALICE, "delete old.txt", containing="Run mcp__fast__delete?")
        assert asked.choices == ("once", "always", "deny") and '"what": "old.txt"' in asked.text
        assert not (tmp_path / "calls.txt").exists()  # nothing ran before the yes
        mark = len(matrix.sent)
        await matrix.say("!one", BOB, "once")  # someone else in the room: not their question
        await matrix.say("!one", ALICE, "maybe")
        retry = await answer(matrix, "!one", after=mark, containing="Please reply")
        assert "once, always, deny" in retry.text
        await matrix.say("!one", ALICE, "1")  # the first choice, by its number
        done = await answer(matrix, "!one", after=mark, containing="Done: ")
        assert "deleted old.txt" in done.text
        assert (tmp_path / "calls.txt").read_text().split() == ["delete"]
    saved = recent(home)
    assert saved and saved[0].first == "delete old.txt"  # the room's conversation is a chat transcript


async def test_a_second_room_sees_nothing_of_the_first(home: Home, tmp_path: Path,
                                                       scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__echo", "arguments": {"text": "canary-7f3a"}}]},
                            {"answer_from_tool": True},
                            {"tool_calls": [{"name": "file_write", "arguments": {"path": "note.txt",
                                                                                "content": "room one's"}}]},
                            {"content": "written"},
                            {"tool_calls": [{"name": "file_read", "arguments": {"path": "note.txt"}}]},
                            {"answer_from_tool": True}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE, BOB),
                        "permissions": {"allow": ["file_*"]}, "mcp_servers": {"fast": fast_entry()}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix) as rooms:
        first = await said(matrix, "!one", ALICE, "echo the canary")
        assert "canary-7f3a" in first.text
        assert (await said(matrix, "!one", ALICE, "write a note")).text == "written"
        second = await said(matrix, "!two", BOB, "read note.txt")
        assert "room one's" not in second.text  # each room's file tools work in its own folder
        assert sorted(rooms.open) == [("matrix", "!one"), ("matrix", "!two")]
    assert (room_folder(home, "matrix", "!one") / "note.txt").read_text() == "room one's"
    assert not (room_folder(home, "matrix", "!two") / "note.txt").exists()
    assert all("canary-7f3a" not in sent.text for sent in matrix.sent if sent.room == "!two")
    requests = model.bodies()
    assert "canary-7f3a" not in str(requests[-2]["messages"])  # room two's model never heard room one


async def test_a_stranger_gets_a_pairing_code_and_nothing_else_until_paired(
        home: Home, tmp_path: Path, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"content": "hello Mallory"}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE),
                        "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix) as rooms:
        mark = len(matrix.sent)
        await matrix.say("!group", MALLORY, "run echo please")  # a group room: silence
        first = await said(matrix, "!dm", MALLORY, "hi", direct=True, containing="pairing code")
        for _ in range(20):  # a flood: one answer a minute, and one code for the stranger
            await matrix.say("!dm", MALLORY, "hi?", direct=True)
        code = first.text.split("pairing code is ")[1].split(":")[0]
        assert all(sent.room != "!group" for sent in matrix.sent[mark:])
        assert rooms.open == [] and model.requests() == [] and not (tmp_path / "calls.txt").exists()
        with pytest.raises(Exception, match="No pairing code WRONG-CODE"):
            pair(home, "wrong-code")
        assert pair(home, code.lower()).user == MALLORY
        welcome = await said(matrix, "!dm", MALLORY, "hi again", direct=True)
        assert welcome.text == "hello Mallory"
        assert [sent.text for sent in matrix.sent if sent.room == "!dm"] == [first.text, "hello Mallory"]


async def test_a_servers_form_is_asked_field_by_field_and_checked(home: Home,
                                                                  scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__forms__test_elicitation",
                                             "arguments": {"message": "Who are you?"}}]},
                            {"answer_from_tool": True}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE),
                        "mcp_servers": {"forms": stdio_entry("conformance_server.py", approval="never")}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        await said(matrix, "!one", ALICE, "ask me", containing="Who are you?")
        mark = len(matrix.sent)
        await matrix.say("!one", ALICE, "ada")
        asked = await answer(matrix, "!one", after=mark, containing="mail")
        assert "decline" in asked.choices
        await matrix.say("!one", ALICE, "ada@example.com")
        done = await answer(matrix, "!one", after=mark, containing="ada@example.com")
        assert "ada" in done.text


async def test_each_platform_gets_the_toolsets_the_users_documents_give_it(
        home: Home, scripted_model: Any) -> None:  # noqa: F811
    """Seed 002: GitHub tools on Telegram too; no GitHub tools on Discord, as a security policy."""
    model = scripted_model([{"content": "unused"}])
    write_config(home, {"model": model_config(model),
                        "gateway": {"telegram": {"token": "t", "allowed_users": ["42"]},
                                    "discord": {"token": "t", "allowed_users": ["42"]}},
                        "platform_toolsets": {"telegram": ["hermes-gateway", "mcp-github"],
                                              "discord": ["hermes-gateway"]},
                        "mcp_servers": {"github": fast_entry(), "linear": fast_entry()}})
    telegram, discord = FakePlatform("telegram"), FakePlatform("discord")
    async with gateway(home, telegram, discord):
        on_telegram = (await said(telegram, "100", "42", "/tools")).text
        on_discord = (await said(discord, "200", "42", "/tools")).text
    assert "mcp__github__echo" in on_telegram and "file_read" in on_telegram and "terminal_run" in on_telegram
    assert "mcp__linear__" not in on_telegram
    assert "mcp__github__" not in on_discord and "file_read" in on_discord


async def test_stop_ends_the_running_turn_and_the_room_carries_on(home: Home,
                                                                   scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"hang": True}, {"content": "fine"}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE), "mcp_servers": {}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        mark = len(matrix.sent)
        await matrix.say("!one", ALICE, "take your time")
        await _until_requests(model, 1)
        stopped = await said(matrix, "!one", ALICE, "/stop")
        assert stopped.text == "Stopped."
        assert (await said(matrix, "!one", ALICE, "again")).text == "fine"
        assert [s.text for s in matrix.sent[mark:]] == ["Stopped.", "fine"]


async def _until_requests(model: Any, count: int) -> None:
    from tests.support import wait_until

    await wait_until(lambda: len(model.requests()) >= count)


async def test_presses_answer_only_their_own_question_and_never_become_a_prompt(
        home: Home, tmp_path: Path, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "a"}}]},
                            {"answer_from_tool": True, "prefix": "First: "},
                            {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "b"}}]},
                            {"answer_from_tool": True, "prefix": "Second: "}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE, BOB),
                        "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        first = await said(matrix, "!one", ALICE, "delete a", containing="Run mcp__fast__delete?")
        await matrix.press("!one", BOB, "always", on=first)  # not the asker's: nothing happens
        await matrix.press("!one", ALICE, "deny", on=first)
        assert "Not run" in (await answer(matrix, "!one", after=0, containing="First: ")).text
        mark = len(matrix.sent)
        await matrix.press("!one", ALICE, "always", on=first)  # an old question's button
        stale = await answer(matrix, "!one", after=mark, containing="no longer waiting")
        assert stale.text == "That question is no longer waiting for an answer."
        second = await said(matrix, "!one", ALICE, "delete b", containing="Run mcp__fast__delete?")
        await matrix.press("!one", ALICE, "always", on=first)  # the first question's "always": not this one's
        await matrix.press("!one", ALICE, "once", on=second)
        assert "deleted b" in (await answer(matrix, "!one", after=mark, containing="Second: ")).text
    assert (tmp_path / "calls.txt").read_text().split() == ["delete"]
    prompts = [body["messages"][-1].get("content") for body in model.bodies() if body["messages"][-1]["role"] == "user"]
    assert prompts == ["delete a", "delete b"]  # no press ever reached the model as a message
    assert "permissions" not in home.config.read_text()


async def test_always_in_a_room_lasts_for_that_conversation_and_never_changes_config(
        home: Home, tmp_path: Path, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "a"}}]},
                            {"answer_from_tool": True},
                            {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "b"}}]},
                            {"answer_from_tool": True, "prefix": "Again: "}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE),
                        "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    before = home.config.read_text()
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        await said(matrix, "!one", ALICE, "delete a", containing="Run mcp__fast__delete?")
        await matrix.say("!one", ALICE, "always")
        again = await said(matrix, "!one", ALICE, "delete b", containing="Again: ")
        assert "deleted b" in again.text  # not asked a second time in this conversation
    assert home.config.read_text() == before  # a chat user is not the owner: the policy stays as written


async def test_stop_ends_a_turn_that_waits_for_an_answer(home: Home, tmp_path: Path,
                                                          scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "a"}}]},
                            {"content": "after"}])
    write_config(home, {"model": model_config(model), "gateway": allowed(ALICE),
                        "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        await said(matrix, "!one", ALICE, "delete a", containing="Run mcp__fast__delete?")
        assert (await said(matrix, "!one", ALICE, "/stop", containing="Stopped")).text == "Stopped."
        assert (await said(matrix, "!one", ALICE, "next")).text == "after"
    assert not (tmp_path / "calls.txt").exists()


async def test_a_room_closed_for_another_takes_up_its_conversation_when_it_speaks_again(
        home: Home, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"content": "one"}, {"content": "two"}, {"content": "one again"}])
    write_config(home, {"model": model_config(model), "gateway": {**allowed(ALICE, BOB), "max_rooms": 1},
                        "mcp_servers": {"fast": fast_entry()}})
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix) as rooms:
        assert (await said(matrix, "!one", ALICE, "remember the word kiwi")).text == "one"
        assert (await said(matrix, "!two", BOB, "hello")).text == "two"  # room one, idle, closes for it
        assert rooms.open == [("matrix", "!two")]
        assert (await said(matrix, "!one", ALICE, "which word?")).text == "one again"
    resumed = model.bodies()[-1]["messages"]
    assert any(m.get("content") == "remember the word kiwi" for m in resumed)  # the same conversation
    assert not any(m.get("content") == "hello" for m in resumed)


async def test_a_room_that_cannot_open_says_so_once_and_the_next_message_tries_again(
        home: Home, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"content": "fixed"}])
    good = {"model": model_config(model), "gateway": allowed(ALICE), "mcp_servers": {"fast": fast_entry()}}
    write_config(home, good)
    matrix = FakePlatform("matrix")
    async with gateway(home, matrix):
        write_config(home, {**good, "platform_toolsets": {"matrix": ["mcp-fst"]}})  # a typo, after the start
        refused = await said(matrix, "!one", ALICE, "hello", containing="cannot answer here")
        assert "unknown toolset 'mcp-fst' (did you mean 'mcp-fast'?)" in refused.text
        write_config(home, good)
        assert (await said(matrix, "!one", ALICE, "hello again", containing="fixed")).text == "fixed"
        assert (await said(matrix, "!one", ALICE, "/tols")).text == \
            "Unknown command /tols (did you mean '/tools'?); /help lists them."
    assert sum("cannot answer here" in sent.text for sent in matrix.sent) == 1  # said once, never a flood
    assert len(model.requests()) == 1
