"""The gateway on Discord, through discord.py, tested at the library's seams (see `discord_api.py`).

The library's own HTTP client signs in and sends to a stand-in REST API on loopback, and the
events a Discord gateway would push are handed to the library's own parser. Only the websocket
connection is not exercised: `OnlyRest` below signs in and skips it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskStatus

from hermes.config.gateway_settings import PlatformSettings
from hermes.errors import HermesError
from hermes.gateway.discord_platform import DiscordPlatform
from hermes.gateway.platform import Deliver, closing
from hermes.gateway.run import run_gateway
from hermes.home import Home
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.gateway.discord_api import DiscordApi, discord_api
from tests.support import fast_entry, needs_sandbox, write_config

# The rooms' file and terminal tools run only in the sandbox: without it the gateway does not start.
pytestmark = [pytest.mark.anyio, needs_sandbox]
TOKEN = "canary-discord-token-MTIzNDU2"
ALICE, STRANGER = 42, 77


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # discord.py is built on asyncio


class OnlyRest(DiscordPlatform):
    """The real adapter and client, signed in over REST; events come from the test, not a websocket."""

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        client = self.make_client(deliver)
        try:
            await client.login(TOKEN)
            task_status.started()
            await anyio.sleep_forever()
        finally:
            await closing(client.close, "Discord")

    def push(self, event: str, payload: dict[str, Any]) -> None:
        getattr(self.client._connection, f"parse_{event}")(payload)


@pytest.fixture
async def api(monkeypatch: pytest.MonkeyPatch) -> Any:
    import discord.http

    async with discord_api(TOKEN) as stand_in:
        monkeypatch.setattr(discord.http.Route, "BASE", stand_in.base)
        yield stand_in


def platform() -> OnlyRest:
    return OnlyRest(PlatformSettings("discord", {"token": TOKEN}, (str(ALICE),)))


async def test_a_tool_that_asks_is_approved_with_a_button_and_nobody_is_pinged(
        home: Home, tmp_path: Path, api: DiscordApi, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "@everyone"}}]},
                            {"answer_from_tool": True, "prefix": "Done: "}])
    write_config(home, {"model": model_config(model), "gateway": {"discord": {"token": "x",
                                                                              "allowed_users": [str(ALICE)]}},
                        "mcp_servers": {"fast": fast_entry("--calls", str(tmp_path))}})
    discord = platform()
    async with anyio.create_task_group() as tasks:
        await tasks.start(run_gateway, home, [discord], [TOKEN])
        discord.push("message_create", api.message(200, ALICE, "delete it"))
        asked = await api.reply(200, containing="Run mcp__fast__delete?")
        buttons = [c["label"] for row in asked["components"] for c in row["components"]]
        assert buttons == ["once", "always", "deny"]
        discord.push("interaction_create", api.press(200, ALICE, "always"))
        done = await api.reply(200, containing="Done: ")
        tasks.cancel_scope.cancel()
    assert "deleted @everyone" in done["content"] and api.deferred
    assert all(sent["allowed_mentions"] == {"parse": []} for sent in api.sent)  # the model pings nobody
    assert all(TOKEN not in sent["content"] for sent in api.sent)


async def test_the_documents_toolsets_on_discord_no_github(home: Home, api: DiscordApi,
                                                           scripted_model: Any) -> None:  # noqa: F811
    """Seed 002: `discord: [hermes-gateway]`, no GitHub tools on Discord (a security policy)."""
    write_config(home, {"model": model_config(scripted_model([{"content": "unused"}])),
                        "gateway": {"discord": {"token": "x", "allowed_users": [str(ALICE)]}},
                        "platform_toolsets": {"telegram": ["hermes-gateway", "mcp-github"],
                                              "discord": ["hermes-gateway"]},
                        "mcp_servers": {"github": fast_entry()}})
    discord = platform()
    async with anyio.create_task_group() as tasks:
        await tasks.start(run_gateway, home, [discord], [TOKEN])
        discord.push("message_create", api.message(300, ALICE, "/tools"))
        tools = (await api.reply(300, containing="Tools here"))["content"]
        discord.push("message_create", api.message(400, STRANGER, "hi"))
        code = (await api.reply(400, containing="pairing code"))["content"]
        tasks.cancel_scope.cancel()
    assert "file_read" in tools and "terminal_run" in tools and "mcp__github__" not in tools
    assert "hermes gateway pair" in code


async def test_a_wrong_token_stops_the_start_with_one_sentence(home: Home, api: DiscordApi,
                                                               scripted_model: Any) -> None:  # noqa: F811
    write_config(home, {"model": model_config(scripted_model([{"content": "unused"}])),
                        "gateway": {"discord": {"token": "wrong-token"}}})
    with pytest.raises(HermesError, match=r"Discord refused the bot token \(gateway.discord.token\)"):
        await run_gateway(home)
