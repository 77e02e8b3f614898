"""The team gateway as its users meet it: a real `hermes mcp serve --http --team` process with its
SQLite store, upstream stdio servers per user, and the official SDK client in both protocol eras.

Two users with different credentials never see each other's tools, credentials, questions or
results; the policy decides what each may use and how often; every call is in the audit record
without its arguments; secrets appear nowhere.
"""

from __future__ import annotations

import hashlib
import signal
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from hermes.home import Home
from tests.support import PATIENCE, fast_entry, sdk_client_over_http, stdio_entry, wait_until, write_config
from tests.team.gateway import Gateway, Team, team_config

pytestmark = pytest.mark.anyio

ALICE_SECRET = "ghp_ALICEcanary0123456789abcdefTEAM"
BOB_SECRET = "sk-BOBcanary-9876543210zyxwvuTEAM"
ARGUMENT_CANARY = "argument-canary-7Hq2Lw"
ADMIN_SECRET = "ghp_ADMINhostCanary0123456789abcdef"
FINN_PLAIN = "plain finn credential value 7Q2Lm"  # no token shape: only a registration would hide it


def _config(home: Home, **team_settings: Any) -> str:
    """The team's config with its key in `.env`, as a user keeps it; the key."""
    return team_config(home, {"box": fast_entry("--env-digest", env={"API_TOKEN": "${API_TOKEN}"}),
                              "conf": stdio_entry("conformance_server.py"), "ops": fast_entry()}, **team_settings)


def _read_config(home: Home) -> dict[str, Any]:
    from ruamel.yaml import YAML

    return dict(YAML(typ="safe").load(home.config.read_text()))


def _client(url: str, key: str, mode: str = "auto", name: str = "") -> AbstractAsyncContextManager[Client]:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": name, "email": f"{name}@example.org"})

    return sdk_client_over_http(url, key, mode=mode, elicitation_callback=elicit)


def _text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent), result
    return first.text


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


async def test_two_users_get_their_own_servers_credentials_questions_and_policy(home: Home, tmp_path: Path) -> None:
    secret_key = _config(home)
    async with Team(home) as setup:
        alice = await setup.user("alice", "dev")
        bob = await setup.user("bob", "dev")
        await setup.rule("group:dev", "box", "conf")
        await setup.rule("user:bob", "box", deny=("mcp__box__echo",), calls_per_minute=4)
        await setup.credential("alice", "API_TOKEN", ALICE_SECRET)
        await setup.credential("bob", "API_TOKEN", BOB_SECRET)
    gateway = Gateway(home, tmp_path / "gateway.log")
    seen: dict[str, Any] = {}
    try:
        async def one(name: str, key: str, mode: str) -> None:
            async with _client(gateway.url, key, mode, name) as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                digest = _text(await client.call_tool("mcp__box__env_digest", {"name": "API_TOKEN"}))
                asked = _text(await client.call_tool("mcp__conf__test_elicitation", {"message": f"who, {name}?"}))
                echoed = await client.call_tool("mcp__box__echo", {"text": ARGUMENT_CANARY})
                seen[name] = {"tools": tools, "digest": digest, "asked": asked, "echo": echoed,
                              "era": client.protocol_version}

        async with anyio.create_task_group() as tasks:  # at once: each question must reach its own caller
            tasks.start_soon(one, "alice", alice, "auto")
            tasks.start_soon(one, "bob", bob, "legacy")
        async with _client(gateway.url, bob, "legacy") as client:
            limited = [await client.call_tool("mcp__box__whoami", {}) for _ in range(3)]
    finally:
        assert gateway.stop() == 0

    assert seen["alice"]["era"] == "2026-07-28" and seen["bob"]["era"] == "2025-11-25"
    assert seen["alice"]["digest"] == _digest(ALICE_SECRET) and seen["bob"]["digest"] == _digest(BOB_SECRET)
    assert "alice@example.org" in seen["alice"]["asked"] and "bob@example.org" in seen["bob"]["asked"]
    assert "mcp__box__echo" in seen["alice"]["tools"] and "mcp__box__echo" not in seen["bob"]["tools"]
    assert not any(name.startswith("mcp__ops__") for who in seen.values() for name in who["tools"])
    assert _text(seen["alice"]["echo"]) == ARGUMENT_CANARY
    assert seen["bob"]["echo"].is_error and "denied by the team's policy.deny" in _text(seen["bob"]["echo"])
    # Bob's four calls a minute: env_digest, the question, the denied echo, then one more; then refused.
    assert [r.is_error for r in limited] == [False, True, True] and "4 calls a minute" in _text(limited[-1])

    async with Team(home) as check:
        records = await check.audit()
    by_user = {(r.user, r.tool, r.outcome.value) for r in records}
    assert ("alice", "mcp__box__echo", "ok") in by_user and ("bob", "mcp__box__echo", "denied") in by_user
    assert ("bob", "mcp__box__whoami", "rate_limited") in by_user
    assert ("alice", "mcp__conf__test_elicitation", "ok") in by_user
    assert ARGUMENT_CANARY not in str(records)

    # No secret anywhere the gateway wrote, except sealed in its database.
    written = [gateway.log, *(p for p in home.root.rglob("*")
                              if p.is_file() and not p.name.startswith("team.db") and p != home.dotenv)]
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        for secret in (ALICE_SECRET, BOB_SECRET, alice, bob, secret_key):
            assert secret not in text, f"{secret[:6]}… in {path}"
    database = b"".join(p.read_bytes() for p in home.root.glob("team.db*"))
    for secret in (ALICE_SECRET, BOB_SECRET, alice, bob, ARGUMENT_CANARY):
        assert secret.encode() not in database


async def test_who_may_not_come_in_is_told_why(home: Home, tmp_path: Path) -> None:
    _config(home, public_url="https://mcp.example.org/mcp",
            oauth={"issuer": "https://id.example.org", "audience": "https://mcp.example.org/mcp"})
    async with Team(home) as setup:
        nobody = await setup.user("nobody")  # no rule names them
    gateway = Gateway(home, tmp_path / "gateway.log")
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}}
        for headers in ({}, {"Authorization": "Bearer hmk_wrong"}, {"Authorization": "Basic abc"},
                        {"Authorization": "Bearer " + "x" * 9000}):
            answer = httpx2.post(gateway.url, json=initialize, headers=headers, timeout=PATIENCE)
            assert answer.status_code == 401, headers
            assert answer.headers["www-authenticate"].startswith("Bearer ")
            assert 'resource_metadata="https://mcp.example.org/.well-known/oauth-protected-resource/mcp"' in \
                answer.headers["www-authenticate"]
        refused = httpx2.post(gateway.url, json=initialize, headers={"Authorization": f"Bearer {nobody}"},
                              timeout=PATIENCE)
        assert refused.status_code == 403 and "nobody" in refused.json()["error"]["message"]
        metadata = gateway.get("/.well-known/oauth-protected-resource/mcp").json()
        assert metadata["resource"] == "https://mcp.example.org/mcp"
        assert metadata["authorization_servers"] == ["https://id.example.org"]
        assert gateway.get("/healthz").status_code == 200
        assert gateway.get("/nowhere").status_code == 404
        metrics = gateway.get("/metrics").text
        assert 'hermes_team_http_requests_total{status="4xx"} 5.0' in metrics
    finally:
        assert gateway.stop() == 0


async def test_on_sigterm_a_replica_stops_being_ready_and_finishes_the_call_in_flight(home: Home,
                                                                                      tmp_path: Path) -> None:
    _config(home, drain_seconds=300)
    async with Team(home) as setup:
        alice = await setup.user("alice")
        await setup.rule("*", "box")
        await setup.credential("alice", "API_TOKEN", ALICE_SECRET)
    gateway = Gateway(home, tmp_path / "gateway.log")
    answers: list[str] = []
    async with _client(gateway.url, alice) as client:
        await client.list_tools()  # the SDK lists before it checks a result: not after the replica is gone
        async with anyio.create_task_group() as tasks:
            async def slow() -> None:
                answers.append(_text(await client.call_tool("mcp__box__slow", {"seconds": 2})))

            tasks.start_soon(slow)
            await wait_until(lambda: gateway.get("/readyz").json().get("in_flight", 0) >= 1)
            gateway.process.send_signal(signal.SIGTERM)
            await wait_until(lambda: gateway.get("/readyz").status_code == 503)
    assert answers == ["done"]
    assert gateway.stop() == 0
    assert "draining" in gateway.log.read_text()


async def test_a_user_without_a_credential_never_gets_the_host_s_and_shared_variables_reach_everyone(
        home: Home, tmp_path: Path) -> None:
    _config(home, shared_variables=["TEAM_REGION"])
    with home.dotenv.open("a") as dotenv:
        dotenv.write(f"API_TOKEN={ADMIN_SECRET}\nTEAM_REGION=eu-west\n")
    write_config(home, {**_read_config(home), "mcp_servers": {
        "box": fast_entry("--env-digest", env={"API_TOKEN": "${API_TOKEN}"}),
        "region": fast_entry("--env-digest", env={"REGION": "${TEAM_REGION}"})}})
    async with Team(home) as setup:
        carol = await setup.user("carol")
        await setup.rule("*", "box", "region")
    gateway = Gateway(home, tmp_path / "gateway.log")
    try:
        async with _client(gateway.url, carol) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            denied = await client.call_tool("mcp__box__env_digest", {"name": "API_TOKEN"})
            region = _text(await client.call_tool("mcp__region__env_digest", {"name": "REGION"}))
    finally:
        assert gateway.stop() == 0
    assert not any(name.startswith("mcp__box__") for name in tools)  # box could not start for carol
    assert denied.is_error and "hermes team credential set carol API_TOKEN" in _text(denied)
    assert _digest(ADMIN_SECRET) not in _text(denied) and "HERMES_HOME:" not in _text(denied)
    assert region == _digest("eu-west")
    assert ADMIN_SECRET not in gateway.log.read_text()


async def test_a_config_broken_after_start_answers_503_with_the_sentence(home: Home, tmp_path: Path) -> None:
    _config(home)
    async with Team(home) as setup:
        dora = await setup.user("dora")
        await setup.rule("*", "box")
    gateway = Gateway(home, tmp_path / "gateway.log")
    try:
        with home.config.open("a") as config:
            config.write("  bad: [unclosed\n")
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}}
        headers = {"Authorization": f"Bearer {dora}", "Accept": "application/json, text/event-stream"}
        answer = httpx2.post(gateway.url, json=initialize, timeout=PATIENCE, headers=headers)
    finally:
        assert gateway.stop() == 0
    assert answer.status_code == 503 and "config.yaml" in answer.json()["error"]["message"], answer.text
    assert "Traceback" not in gateway.log.read_text()


async def test_a_user_s_pins_hold_on_every_replica_and_are_theirs_alone(home: Home, tmp_path: Path) -> None:
    """Alice uses a server on one replica; on another (the same database), the server now offers
    other tools in place of hers: they are held back for her, while bob, who never pinned it, gets them."""
    from tests.support import fast_entry

    _config(home)
    config = _read_config(home)
    write_config(home, {**config, "mcp_servers": {"quick": fast_entry()}})
    async with Team(home) as setup:
        keys = {"alice": await setup.user("alice"), "bob": await setup.user("bob")}
        await setup.rule("*", "quick")
    first = Gateway(home, tmp_path / "first.log")
    try:
        async with _client(first.url, keys["alice"]) as client:
            seen_first = {tool.name for tool in (await client.list_tools()).tools}
    finally:
        assert first.stop() == 0
    async with Team(home) as check:
        assert '"quick"' in (await check.store.pins("alice") or "") and await check.store.pins("bob") is None
    write_config(home, {**config, "mcp_servers": {"quick": fast_entry("--lean")}})
    second = Gateway(home, tmp_path / "second.log")
    try:
        async with _client(second.url, keys["alice"]) as client:
            alices = {tool.name for tool in (await client.list_tools()).tools}
        async with _client(second.url, keys["bob"]) as client:
            bobs = {tool.name for tool in (await client.list_tools()).tools}
    finally:
        assert second.stop() == 0
    assert "mcp__quick__echo" in seen_first
    assert "mcp__quick__ping" in bobs and "mcp__quick__ping" not in alices  # held back until she accepts it
    assert not list(home.root.rglob("tool-pins.json"))


async def test_a_credential_set_while_the_user_s_servers_run_reaches_them_and_secrets_stay_each_user_s(
        home: Home, tmp_path: Path) -> None:
    _config(home, refresh_seconds=1)
    async with Team(home) as setup:
        keys = {"erin": await setup.user("erin"), "finn": await setup.user("finn")}
        await setup.rule("*", "box")
        await setup.credential("finn", "API_TOKEN", FINN_PLAIN)
    gateway = Gateway(home, tmp_path / "gateway.log")
    try:
        async with _client(gateway.url, keys["erin"]) as client:
            before = {tool.name for tool in (await client.list_tools()).tools}
            async with Team(home) as admin:
                await admin.credential("erin", "API_TOKEN", ALICE_SECRET)
            with anyio.fail_after(PATIENCE):  # the replica looks at users' records every few seconds
                while "mcp__box__env_digest" not in {tool.name for tool in (await client.list_tools()).tools}:
                    await anyio.sleep(0.2)
            digest = _text(await client.call_tool("mcp__box__env_digest", {"name": "API_TOKEN"}))
            guessed = _text(await client.call_tool("mcp__box__echo", {"text": f"finn has {FINN_PLAIN}"}))
    finally:
        assert gateway.stop() == 0
    assert "mcp__box__env_digest" not in before and digest == _digest(ALICE_SECRET)
    assert guessed == f"finn has {FINN_PLAIN}"  # erin cannot test guesses at finn's secret by its hiding
