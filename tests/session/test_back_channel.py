"""An SDK server that asks its client the handshake-era way (on the session) cannot on a 2026-07-28
connection: the call's error says what to set, and with it set the question is asked."""

from __future__ import annotations

import pytest

from hermes.home import Home
from hermes.session.core import Session
from hermes.tools.call_result import Ok, ToolError
from tests.support import stdio_entry, write_config

pytestmark = pytest.mark.anyio


async def test_a_server_asking_the_old_way_is_told_to_use_the_legacy_protocol_and_then_works(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": stdio_entry()}})
    async with Session(home) as session:
        assert session.snapshots()["box"].protocol == "2026-07-28"
        failed = await session.call("mcp__box__ask_old_way", {})
    assert isinstance(failed, ToolError) and "set `protocol: legacy` for 'box'" in failed.text, failed
    write_config(home, {"mcp_servers": {"box": stdio_entry(protocol="legacy")}})
    async with Session(home) as session:
        asked = await session.call("mcp__box__ask_old_way", {})
    assert isinstance(asked, Ok) and asked.text.startswith("answered: "), asked  # no one to ask here: declined
