"""`hermes gateway` on a real Synapse: people in rooms, the agent's MCP tools, questions answered there.

The gateway is the real one with its Matrix platform (matrix-nio) signed in from config.yaml with
a token kept in `.env`; the model is the suite's scripted stand-in; the servers are real processes;
the people are matrix-nio clients of their own.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import nio
import pytest
from ruamel.yaml import YAML

from hermes.gateway.rooms import Rooms
from hermes.gateway.run import run_gateway
from hermes.home import Home
from platforms.conftest import Account, Homeserver, Person, person
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.blender import StandIn, plugin_repo
from tests.support import fast_entry, hermes, needs_sandbox, stdio_entry, write_config

# The rooms' file and terminal tools run only in the sandbox: without it the gateway does not start.
pytestmark = [pytest.mark.anyio, needs_sandbox]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # matrix-nio is built on asyncio (aiohttp)


def configure(home: Home, synapse: Homeserver, bot: Account, *allowed: Account, **extra: Any) -> None:
    data = YAML().load(home.config.read_text()) if home.config.exists() else {}
    data = dict(data or {})
    data.update(extra)
    data["gateway"] = {"matrix": {"homeserver": synapse.url, "user_id": bot.user_id,
                                  "access_token": "${MATRIX_TOKEN}", "allowed_users": [a.user_id for a in allowed]}}
    write_config(home, data)
    home.dotenv.write_text(f"MATRIX_TOKEN={bot.token}\n")
    os.chmod(home.dotenv, 0o600)


@asynccontextmanager
async def serving(home: Home) -> AsyncIterator[Rooms]:
    async with anyio.create_task_group() as tasks:
        rooms = await tasks.start(run_gateway, home)
        yield rooms
        tasks.cancel_scope.cancel()


async def test_a_question_in_a_room_is_answered_with_an_mcp_tool_and_an_ask_tool_is_approved_there(
        home: Home, tmp_path: Path, synapse: Homeserver, scripted_model: Any) -> None:  # noqa: F811
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__get_weather", "arguments": {"city": "Lisboa"}}]},
                            {"answer_from_tool": True, "prefix": "Weather: "},
                            {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "old.txt"}}]},
                            {"answer_from_tool": True, "prefix": "Done: "}])
    configure(home, synapse, bot, alice, model=model_config(model),
              mcp_servers={"fast": fast_entry("--calls", str(tmp_path))})
    async with serving(home), person(synapse, alice) as someone:
        room = await someone.room_with(bot.user_id)
        mark = await someone.say(room, "Wie ist das Wetter in Lissabon?")
        answered = await someone.reply(room, after=mark, containing="Weather: ")
        assert "Lisboa" in answered

        mark = await someone.say(room, "delete old.txt")
        asked = await someone.reply(room, after=mark, containing="Run mcp__fast__delete?")
        assert "Reply once, always or deny" in asked
        assert (tmp_path / "calls.txt").read_text().split() == ["get-weather"]  # not yet
        mark = await someone.say(room, "once")
        done = await someone.reply(room, after=mark, containing="Done: ")
        assert "deleted old.txt" in done
        assert (tmp_path / "calls.txt").read_text().split() == ["get-weather", "delete"]
    everything = "\n".join(text for _, _, text in someone.received)
    assert bot.token not in everything


async def test_a_closed_blender_is_said_in_the_room(
        home: Home, tmp_path: Path, synapse: Homeserver, bridge_bin: Path, blender: StandIn,
        scripted_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    monkeypatch.setenv("PATH", f"{bridge_bin}{os.pathsep}{os.environ['PATH']}")
    blender.install()  # installed, not running
    installed = hermes("plugins", "install", str(plugin_repo(tmp_path, title="Blender")), "--enable", "--no-warm",
                       home=home)
    assert installed.returncode == 0, installed.stderr
    model = scripted_model([{"tool_calls": [{"name": "mcp__blender__get_scene_info"}]},
                            {"content": "Blender is closed; start it and ask again."}])
    configure(home, synapse, bot, alice, model=model_config(model))
    async with serving(home), person(synapse, alice) as someone:
        room = await someone.room_with(bot.user_id)
        mark = await someone.say(room, "Quais objetos há na minha cena?")
        told = await someone.reply(room, after=mark, containing="Blender is not running")
        assert "Start Blender, then try again." in told
        assert "start it and ask again" in await someone.reply(room, after=mark, containing="ask again")
        status = await someone.reply(room, after=await someone.say(room, "/status"), containing="blender")
        assert "Blender is not running" in status


async def test_a_second_room_never_sees_the_first_rooms_results_or_questions(
        home: Home, tmp_path: Path, synapse: Homeserver, scripted_model: Any) -> None:  # noqa: F811
    bot, alice, bob = synapse.account("hermes"), synapse.account("alice"), synapse.account("bob")
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__echo", "arguments": {"text": "canary-51d2"}}]},
                            {"answer_from_tool": True},
                            {"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "a.txt"}}]},
                            {"content": "Bob's answer"},  # asked while room one's question waits
                            {"answer_from_tool": True}])
    configure(home, synapse, bot, alice, bob, model=model_config(model), mcp_servers={"fast": fast_entry()})
    async with serving(home), person(synapse, alice) as first, person(synapse, bob) as second:
        one = await first.room_with(bot.user_id)
        two = await second.room_with(bot.user_id)
        assert "canary-51d2" in await first.reply(one, after=await first.say(one, "echo"), containing="canary")
        mark = await first.say(one, "delete a.txt")
        await first.reply(one, after=mark, containing="Run mcp__fast__delete?")  # a question waits in room one
        answered = await second.reply(two, after=await second.say(two, "hello"), containing="Bob")
        assert answered == "Bob's answer"
        await first.say(one, "deny")
        await first.reply(one, after=mark, containing="declined")
    seen_by_bob = [text for room, _, text in second.received if room == two]
    assert seen_by_bob == ["Bob's answer"]  # no result, no question, nothing else of room one


async def test_a_stranger_is_given_a_pairing_code_and_let_in_by_the_owner(
        home: Home, synapse: Homeserver, scripted_model: Any) -> None:  # noqa: F811
    bot, alice, carol = synapse.account("hermes"), synapse.account("alice"), synapse.account("carol")
    model = scripted_model([{"content": "Olá, Carol"}])
    configure(home, synapse, bot, alice, model=model_config(model))
    async with serving(home), person(synapse, carol) as stranger:
        room = await stranger.room_with(bot.user_id, direct=True)
        coded = await stranger.reply(room, after=await stranger.say(room, "oi"), containing="pairing code")
        code = coded.split("pairing code is ")[1].split(":")[0]
        assert model.requests() == []  # the model never heard a stranger
        paired = await anyio.to_thread.run_sync(lambda: hermes("gateway", "pair", code, home=home))
        assert paired.returncode == 0 and carol.user_id in paired.stdout
        assert await stranger.reply(room, after=await stranger.say(room, "oi de novo"), containing="Carol") == \
            "Olá, Carol"


async def test_a_rooms_history_is_not_answered_and_a_strangers_group_room_is_not_joined(
        home: Home, synapse: Homeserver, scripted_model: Any) -> None:  # noqa: F811
    bot, alice, mallory = synapse.account("hermes"), synapse.account("alice"), synapse.account("mallory")
    model = scripted_model([{"content": "answering the new one"}])
    configure(home, synapse, bot, alice, model=model_config(model))
    async with serving(home), person(synapse, alice) as someone, person(synapse, mallory) as stranger:
        theirs = await stranger.client.room_create(invite=[bot.user_id])  # a group room: not joined
        made = await someone.client.room_create()
        await someone.say(made.room_id, "an old question, before hermes was here")
        await someone.client.room_invite(made.room_id, bot.user_id)
        await someone.until(lambda: bot.user_id in someone._members(made.room_id))
        mark = await someone.say(made.room_id, "a new question")
        assert await someone.reply(made.room_id, after=mark) == "answering the new one"
        members = await stranger.client.joined_members(theirs.room_id)
    assert bot.user_id not in [member.user_id for member in members.members]  # its invite came first
    prompts = [m["content"] for r in model.bodies() for m in r["messages"] if m["role"] == "user"]
    assert prompts == ["a new question"]


async def test_a_servers_form_is_asked_in_the_room(home: Home, synapse: Homeserver,
                                                   scripted_model: Any) -> None:  # noqa: F811
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"tool_calls": [{"name": "mcp__forms__test_elicitation",
                                             "arguments": {"message": "Wer bist du?"}}]},
                            {"answer_from_tool": True}])
    configure(home, synapse, bot, alice, model=model_config(model),
              mcp_servers={"forms": stdio_entry("conformance_server.py", approval="never")})
    async with serving(home), person(synapse, alice) as someone:
        room = await someone.room_with(bot.user_id)
        mark = await someone.say(room, "frag mich")
        await someone.reply(room, after=mark, containing="Wer bist du?")
        await someone.reply(room, after=mark, containing="username")
        mark = await someone.say(room, "ada")
        await someone.reply(room, after=mark, containing="mail")
        mark = await someone.say(room, "ada@example.com")
        assert "ada@example.com" in await someone.reply(room, after=mark, containing="ada@example.com")


async def test_what_came_while_the_bot_looked_away_after_its_join_is_answered(
        home: Home, synapse: Homeserver, scripted_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """More events between the bot's join and its next sync than a sync's batch holds: the batch no
    longer holds the join, and what it holds (and what came between, read back) is new, not history."""
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"content": "one answered"}, {"content": "two answered"}])
    configure(home, synapse, bot, alice, model=model_config(model))
    joined, looking = anyio.Event(), anyio.Event()
    real_join = nio.AsyncClient.join

    async def join(client: Any, room_id: str, *args: Any, **kwargs: Any) -> Any:
        joined.set()  # a look from now on comes too early
        return await real_join(client, room_id, *args, **kwargs)

    monkeypatch.setattr(nio.AsyncClient, "join", join)
    _looks_late(monkeypatch, bot, once=joined, until=looking)
    async with serving(home), person(synapse, alice) as someone:
        room = await someone.room_with(bot.user_id)
        await _more_than_a_batch_holds(someone, room, looking)
    assert [text for _, _, text in someone.received].count("one answered") == 1


def _looks_late(monkeypatch: pytest.MonkeyPatch, bot: Account, *, once: anyio.Event, until: anyio.Event) -> None:
    """The bot's syncs answered after `once` and before `until` are made again at `until`, from the
    same place: as if the bot had been busy meanwhile."""
    real_sync = nio.AsyncClient.sync

    async def sync(client: Any, *args: Any, **kwargs: Any) -> Any:
        answer = await real_sync(client, *args, **kwargs)
        if client.user_id == bot.user_id and once.is_set() and not until.is_set():
            await until.wait()
            # Asked a little differently: Synapse would hand back the answer it keeps for the same question.
            answer = await real_sync(client, *args, **{**kwargs, "timeout": kwargs.get("timeout", 0) + 1})
        return answer

    monkeypatch.setattr(nio.AsyncClient, "sync", sync)


async def _more_than_a_batch_holds(someone: Person, room: str, looking: anyio.Event) -> None:
    """Two questions with more events between them than a sync's batch holds (Synapse's holds the
    room's latest 10), sent while the bot does not look; both are answered once it looks again."""
    first = await someone.say(room, "question one")  # only reading back finds it: the batch is past it
    for note in range(12):
        notice = {"msgtype": "m.notice", "body": f"note {note}"}
        assert isinstance(await someone.client.room_send(room, "m.room.message", notice), nio.RoomSendResponse)
    await someone.say(room, "question two")
    looking.set()
    await someone.reply(room, after=first, containing="one answered")
    await someone.reply(room, after=first, containing="two answered")


def _asked(model: Any) -> list[str]:
    """The person's message each of the model's turns answered."""
    return [[m["content"] for m in body["messages"] if m["role"] == "user"][-1] for body in model.bodies()]


async def test_a_restart_answers_nothing_twice_and_a_room_it_was_put_out_of_is_history(
        home: Home, synapse: Homeserver, scripted_model: Any) -> None:  # noqa: F811
    """Synapse keeps a sync's answer for two minutes: a restart asking what the last start asked got
    that run's place, and answered its messages again. A bot put out of a room and invited back has
    its older join in its first batch: what came after that one is history too."""
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"content": f"answer {turn}"} for turn in range(1, 4)])
    configure(home, synapse, bot, alice, model=model_config(model))
    async with person(synapse, alice) as someone:
        async with serving(home):
            room = await someone.room_with(bot.user_id)
            await someone.reply(room, after=await someone.say(room, "question one"), containing="answer 1")
        async with serving(home):
            await someone.reply(room, after=await someone.say(room, "question two"), containing="answer 2")
        assert isinstance(await someone.client.room_kick(room, bot.user_id), nio.RoomKickResponse)
        await someone.say(room, "said while the bot was out")
        assert isinstance(await someone.client.room_invite(room, bot.user_id), nio.RoomInviteResponse)
        async with serving(home):
            await someone.until(lambda: bot.user_id in someone._members(room))
            await someone.reply(room, after=await someone.say(room, "question three"), containing="answer 3")
    assert _asked(model) == ["question one", "question two", "question three"]


async def test_a_bot_put_out_of_a_room_takes_the_invite_back(
        home: Home, synapse: Homeserver, scripted_model: Any) -> None:  # noqa: F811
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"content": "back"}])
    configure(home, synapse, bot, alice, model=model_config(model))
    async with serving(home), person(synapse, alice) as someone:
        room = await someone.room_with(bot.user_id)
        assert isinstance(await someone.client.room_kick(room, bot.user_id), nio.RoomKickResponse)
        await someone.until(lambda: bot.user_id not in someone._members(room))
        assert isinstance(await someone.client.room_invite(room, bot.user_id), nio.RoomInviteResponse)
        await someone.until(lambda: bot.user_id in someone._members(room))
        assert await someone.reply(room, after=await someone.say(room, "are you there?")) == "back"
    assert _asked(model) == ["are you there?"]


async def test_a_join_that_takes_long_holds_no_other_room(
        home: Home, synapse: Homeserver, scripted_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Joining a large room over federation can take minutes (and nio tries a timed-out request
    again for ever): meanwhile another room is joined and answered."""
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"content": "from the quick room"}, {"content": "from the slow room"}])
    configure(home, synapse, bot, alice, model=model_config(model))
    slow_room: list[str] = []
    slow_join_may_go = anyio.Event()
    real_join = nio.AsyncClient.join

    async def join(client: Any, room_id: str, *args: Any, **kwargs: Any) -> Any:
        if room_id in slow_room:
            await slow_join_may_go.wait()
        return await real_join(client, room_id, *args, **kwargs)

    monkeypatch.setattr(nio.AsyncClient, "join", join)
    async with serving(home), person(synapse, alice) as someone:
        made = await someone.client.room_create(invite=[], is_direct=False)
        assert isinstance(made, nio.RoomCreateResponse), made
        slow_room.append(made.room_id)
        assert isinstance(await someone.client.room_invite(made.room_id, bot.user_id), nio.RoomInviteResponse)
        quick = await someone.room_with(bot.user_id)
        assert await someone.reply(quick, after=await someone.say(quick, "quick?")) == "from the quick room"
        slow_join_may_go.set()
        await someone.until(lambda: bot.user_id in someone._members(made.room_id))
        slow = str(made.room_id)
        assert await someone.reply(slow, after=await someone.say(slow, "slow?")) == "from the slow room"


async def test_a_sync_that_left_messages_out_is_read_back_to_where_the_last_one_ended(
        home: Home, synapse: Homeserver, scripted_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """More came in a room the bot is in between two of its syncs than a batch holds."""
    bot, alice = synapse.account("hermes"), synapse.account("alice")
    model = scripted_model([{"content": "hello"}, {"content": "one answered"}, {"content": "two answered"}])
    configure(home, synapse, bot, alice, model=model_config(model))
    holding, looking = anyio.Event(), anyio.Event()
    _looks_late(monkeypatch, bot, once=holding, until=looking)
    async with serving(home), person(synapse, alice) as someone:
        room = await someone.room_with(bot.user_id)
        assert await someone.reply(room, after=await someone.say(room, "hi")) == "hello"  # the join is behind it
        holding.set()
        await _more_than_a_batch_holds(someone, room, looking)
    assert _asked(model) == ["hi", "question one", "question two"]
