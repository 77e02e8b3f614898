"""A team user signs in to an OAuth server through the gateway, as themselves: the SDK client opens
the page it is asked to (a URL-mode elicitation), the loopback authorization server (the SDK's own
server auth) approves and sends the browser back to the gateway, and the server starts for that user
alone, with a token kept sealed in the team database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest

from hermes.home import Home
from tests.support import PATIENCE, free_port, sdk_client_over_http
from tests.team.gateway import Gateway, Team, team_config

pytestmark = pytest.mark.anyio


def _text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent), result
    return first.text


async def test_a_user_signs_in_through_the_gateway_and_only_they_get_the_server(
        home: Home, tmp_path: Path, oauth_server: Any) -> None:
    url = oauth_server(fresh=True)
    port = free_port()
    team_config(home, {"secure": {"url": url, "auth": "oauth"}}, public_url=f"http://127.0.0.1:{port}/mcp")
    async with Team(home) as setup:
        keys = {"alice": await setup.user("alice"), "bob": await setup.user("bob")}
        await setup.rule("*", "secure")
    gateway = Gateway(home, tmp_path / "gateway.log", port=port)
    pages: list[str] = []

    async def open_page(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        async with httpx2.AsyncClient(follow_redirects=True, timeout=PATIENCE) as browser:
            page = await browser.get(params.url)
        pages.append(page.text)
        return types.ElicitResult(action="accept" if page.status_code == 200 else "decline")

    try:
        async with sdk_client_over_http(gateway.url, keys["alice"], elicitation_callback=open_page) as alice:
            before = {tool.name for tool in (await alice.list_tools()).tools}
            signed = await alice.call_tool("hermes_sign_in", {"server": "secure"})
            after = {tool.name for tool in (await alice.list_tools()).tools}
            answered = await alice.call_tool("mcp__secure__whoami", {})
        async with sdk_client_over_http(gateway.url, keys["bob"], mode="legacy") as bob:
            bobs = {tool.name for tool in (await bob.list_tools()).tools}
        replayed = gateway.get("/oauth/callback?state=made-up&code=x")
    finally:
        assert gateway.stop() == 0

    assert before == {"hermes_sign_in"} and not signed.is_error, _text(signed)
    assert "Signed in to 'secure'" in _text(signed) and "hermes is finishing the sign-in" in pages[0]
    assert "mcp__secure__whoami" in after and "hermes_sign_in" not in after
    assert _text(answered) == "an authorized client"
    assert bobs == {"hermes_sign_in"}  # bob has no token of his own: alice's is never his
    assert replayed.status_code == 400
    database = b"".join(p.read_bytes() for p in home.root.glob("team.db*"))
    assert b"access_token" not in database and b"refresh_token" not in database  # sealed
    assert not list(home.root.rglob("secure.json"))  # no token file anywhere on the replica
    assert "Traceback" not in gateway.log.read_text()  # the SDK's OAuth trouble goes to the redacted log
    async with Team(home) as check:
        assert ("alice", "hermes_sign_in", "ok") in {(r.user, r.tool, r.outcome.value) for r in await check.audit()}
