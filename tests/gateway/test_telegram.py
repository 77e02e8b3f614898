"""The gateway on Telegram, through python-telegram-bot, tested at the library's seam.

Telegram's servers cannot be reached from here: the library talks HTTP to a stand-in Bot API on
loopback (`bot_api.py`), the way a self-hosted Bot API server is used (`gateway.telegram.api_url`).
Everything above that HTTP is the real library and the real gateway.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes.errors import HermesError
from hermes.gateway.run import run_gateway
from hermes.home import Home
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.gateway.bot_api import BotApi, bot_api
from tests.support import fast_entry, needs_sandbox, write_config

# The rooms' file and terminal tools run only in the sandbox: without it the gateway does not start.
pytestmark = [pytest.mark.anyio, needs_sandbox]
TOKEN = "123456:canary-telegram-token-9c1e"
ALICE, STRANGER = 42, 77


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # python-telegram-bot is built on asyncio


def configure(home: Home, api: BotApi, **extra: Any) -> None:
    write_config(home, {"gateway": {"telegram": {"token": "${TELEGRAM_BOT_TOKEN}", "api_url": api.url,
                                                 "allowed_users": [str(ALICE)]}}, **extra})
    home.dotenv.write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")
    os.chmod(home.dotenv, 0o600)


async def test_a_tool_that_asks_is_approved_with_a_button(home: Home, tmp_path: Path,
                                                          scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"tool_calls": [{"name": "mcp__fast__delete", "arguments": {"what": "old.txt"}}]},
                            {"answer_from_tool": True, "prefix": "Done: "}])
    async with bot_api(TOKEN) as api:
        configure(home, api, model=model_config(model), mcp_servers={"fast": fast_entry("--calls", str(tmp_path))})
        api.message(ALICE, ALICE, "sent before the gateway started")  # skipped: never answered
        async with anyio.create_task_group() as tasks:
            await tasks.start(run_gateway, home)
            api.message(ALICE, ALICE, "delete old.txt")
            asked = await api.reply(ALICE, containing="Run mcp__fast__delete?")
            buttons = [b["text"] for row in asked["reply_markup"]["inline_keyboard"] for b in row]
            assert buttons == ["once", "always", "deny"]
            api.press(ALICE, ALICE, "once")
            done = await api.reply(ALICE, containing="Done: ")
            assert "deleted old.txt" in done["text"] and api.answered_presses
            tasks.cancel_scope.cancel()
    assert model.requests()[0]["body"]["messages"][-1]["content"] == "delete old.txt"  # not the old one
    assert all(TOKEN not in sent["text"] for sent in api.sent)


async def test_the_documents_toolsets_on_telegram_and_a_strangers_pairing_code(
        home: Home, scripted_model: Any) -> None:  # noqa: F811
    """Seed 002: `telegram: [hermes-gateway, mcp-github]` (GitHub tools on Telegram too)."""
    model = scripted_model([{"content": "unused"}])
    async with bot_api(TOKEN) as api:
        configure(home, api, model=model_config(model),
                  platform_toolsets={"telegram": ["hermes-gateway", "mcp-github"], "discord": ["hermes-gateway"]},
                  mcp_servers={"github": fast_entry(), "linear": fast_entry()})
        async with anyio.create_task_group() as tasks:
            await tasks.start(run_gateway, home)
            api.message(ALICE, ALICE, "/tools")
            tools = (await api.reply(ALICE, containing="Tools here"))["text"]
            api.message(STRANGER, STRANGER, "hi")
            code = (await api.reply(STRANGER, containing="pairing code"))["text"]
            tasks.cancel_scope.cancel()
    assert "mcp__github__echo" in tools and "file_read" in tools and "mcp__linear__" not in tools
    assert "hermes gateway pair" in code and model.requests() == []


async def test_a_wrong_token_stops_the_start_with_one_sentence(home: Home, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"content": "unused"}])
    async with bot_api("another:token") as api:
        configure(home, api, model=model_config(model))
        with pytest.raises(HermesError, match=r"Telegram refused the bot token \(gateway.telegram.token\)") as caught:
            await run_gateway(home)
    assert TOKEN not in str(caught.value)


async def test_an_error_that_quotes_the_token_is_said_without_it(home: Home, scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"content": "unused"}])
    async with bot_api(TOKEN) as api:
        api.broken = True
        configure(home, api, model=model_config(model))
        with pytest.raises(HermesError, match="signing in failed") as caught:
            await run_gateway(home)
    assert TOKEN not in str(caught.value) and "[REDACTED]" in str(caught.value)
