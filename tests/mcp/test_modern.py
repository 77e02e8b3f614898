"""hermes as a client of a server that speaks only MCP 2026-07-28 (it refuses `initialize`).

End to end, over stdio and over loopback HTTP: the tools, a resource and a prompt; a tool that
needs the user, the model and the roots gets them through one input-required round (SEP-2322),
answered by the same handlers the handshake era's requests reach; a tool added at run time
arrives on `subscriptions/listen`. Pinning the handshake era names the server's own refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from hermes.config.agent_settings import SamplingSettings
from hermes.home import Home
from hermes.mcp.handlers import ClientHandlers
from hermes.session.core import Session
from tests.support import (
    PYTHON,
    SERVERS,
    ServerPool,
    fast_entry,
    hermes,
    stdio_entry,
    wait_for,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.anyio
SERVER = SERVERS / "modern_only.py"


@pytest.fixture
def modern_http(tmp_path: Path) -> Iterator[str]:
    pool = ServerPool(tmp_path, "modern")
    port = pool.start(lambda portfile: [PYTHON, str(SERVER), "--http", str(portfile)])
    yield f"http://127.0.0.1:{port}/mcp"
    pool.close()


async def _elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert params.message == "Who is asking?"
    return types.ElicitResult(action="accept", content={"name": "Grace"})


async def _sample(server: str, settings: SamplingSettings, params: types.CreateMessageRequestParams
                  ) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", model="stand-in",
                                     content=types.TextContent(type="text", text="42"))


async def _everything_works(home: Home, entry: dict[str, Any], tmp_path: Path) -> None:
    write_config(home, {"mcp_servers": {"m": {**entry, "roots": [str(tmp_path)]}}})
    async with Session(home, handlers=ClientHandlers(sampling=_sample, elicitation=_elicit)) as session:
        snapshot = session.snapshots()["m"]
        assert snapshot.connected and snapshot.protocol == "2026-07-28", snapshot.reason
        assert (await session.call("mcp__m__echo", {"text": "plain"})).text == "plain"
        asked = await session.call("mcp__m__ask", {})
        assert asked.text == "name=Grace model=42 roots=1 state=round-1", asked.text
        note = await session.call("mcp__m__read_resource", {"uri": "note://first"})
        assert "the first note" in note.text
        prompt = await session.call("mcp__m__get_prompt", {"name": "greet", "arguments": {"name": "Ada"}})
        assert "Say hello to Ada." in prompt.text
        assert "mcp__m__grown" not in session.surface().tools
        assert (await session.call("mcp__m__grow", {})).text == "grown"
        await wait_until(lambda: "mcp__m__grown" in session.surface().tools)
        assert (await session.call("mcp__m__grown", {})).text == "grown result"


async def test_a_2026_only_http_server_too_slow_for_the_probe_is_spoken_to_in_its_era(
        home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's `auto` mode falls back to the handshake when `server/discover` times out, and a
    2026-only server over HTTP refuses it ("Missing MCP-Protocol-Version header"): hermes then
    speaks 2026-07-28 to it instead of reporting it failed."""
    import mcp.client.session

    monkeypatch.setattr(mcp.client.session, "DISCOVER_TIMEOUT_SECONDS", 0.5)
    pool = ServerPool(tmp_path, "slow-modern")
    port = pool.start(lambda portfile: [PYTHON, str(SERVER), "--http", str(portfile), "--never-discover"])
    try:
        write_config(home, {"mcp_servers": {"m": {"url": f"http://127.0.0.1:{port}/mcp"}}})
        async with Session(home) as session:
            snapshot = session.snapshots()["m"]
            assert snapshot.connected and snapshot.protocol == "2026-07-28", snapshot.reason
            assert (await session.call("mcp__m__echo", {"text": "slow"})).text == "slow"
    finally:
        pool.close()


async def test_a_2026_only_server_over_stdio_works_end_to_end(home: Home, tmp_path: Path) -> None:
    await _everything_works(home, stdio_entry("modern_only.py"), tmp_path)


async def test_a_2026_only_server_over_http_works_end_to_end(home: Home, tmp_path: Path, modern_http: str) -> None:
    await _everything_works(home, {"url": modern_http}, tmp_path)


def test_mcp_test_names_the_protocol_and_a_pinned_handshake_names_the_refusal(home: Home, modern_http: str) -> None:
    write_config(home, {"mcp_servers": {"m": {"url": modern_http}, "old": {"url": modern_http, "protocol": "legacy"},
                                        "pipe": stdio_entry("modern_only.py", protocol="legacy")}})
    tested = hermes("mcp", "test", "m", home=home)
    assert tested.returncode == 0 and "(http, MCP 2026-07-28)" in tested.stdout, tested.stdout
    for name in ("old", "pipe"):
        refused = hermes("mcp", "test", name, home=home)
        assert refused.returncode == 1, refused.stdout
        assert "this server speaks only MCP 2026-07-28" in refused.stdout, refused.stdout


def test_a_refusal_over_http_keeps_the_server_s_own_words(home: Home, tmp_path: Path) -> None:
    """A strict server answers 400 with a JSON-RPC error; the status alone would drop why."""
    script = tmp_path / "strict.py"
    script.write_text(
        "import http.server, json, sys\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        "        self.rfile.read(int(self.headers.get('content-length', 0)))\n"
        "        body = json.dumps({'jsonrpc': '2.0', 'id': None, 'error': {'code': -32602,\n"
        "            'message': 'missing _meta keys: io.modelcontextprotocol/protocolVersion'}}).encode()\n"
        "        self.send_response(400); self.send_header('content-type', 'application/json')\n"
        "        self.send_header('content-length', str(len(body))); self.end_headers(); self.wfile.write(body)\n"
        "    def log_message(self, *a): pass\n"
        "server = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
        "open(sys.argv[1] + '.tmp', 'w').write(str(server.server_port))\n"
        "import os; os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
        "server.serve_forever()\n")
    pool = ServerPool(tmp_path, "strict")
    try:
        port = pool.start(lambda portfile: [PYTHON, str(script), str(portfile)])
        write_config(home, {"mcp_servers": {"strict": {"url": f"http://127.0.0.1:{port}/mcp"}}})
        tested = hermes("mcp", "test", "strict", home=home)
    finally:
        pool.close()
    assert tested.returncode == 1 and "HTTP 400" in tested.stdout, tested.stdout
    assert "missing _meta keys: io.modelcontextprotocol/protocolVersion" in tested.stdout, tested.stdout


async def test_a_subscribed_resource_is_heard_on_the_listen_stream(home: Home, tmp_path: Path) -> None:
    """No resources/subscribe in 2026-07-28: the URI joins the connection's listen stream."""
    heard: list[str] = []

    async def updated(server: str, uri: str) -> None:
        heard.append(f"{server} {uri}")

    write_config(home, {"mcp_servers": {"m": stdio_entry("modern_only.py")}})
    async with Session(home, handlers=ClientHandlers(resource_updated=updated)) as session:
        await session.upstream.subscribe("m", "note://first", True)
        await session.call("mcp__m__touch", {})
        await wait_until(lambda: heard == ["m note://first"])
        await session.upstream.subscribe("m", "note://first", False)
        await session.call("mcp__m__touch", {})
        # Events come in order on the one stream: once the tool change is heard, an update of the
        # resource left would have been heard before it.
        await session.call("mcp__m__grow", {})
        await wait_until(lambda: "mcp__m__grown" in session.surface().tools)
        assert heard == ["m note://first"]


def test_mcp_get_shows_the_protocol_a_running_session_speaks(home: Home, tmp_path: Path) -> None:
    from tests.support import serving_http

    write_config(home, {"mcp_servers": {"m": stdio_entry("modern_only.py"),
                                        "old": fast_entry("--lean", protocol="legacy")}})
    with serving_http(home, tmp_path / "serve.log"):
        assert wait_for(lambda: "MCP 2026-07-28" in hermes("mcp", "get", "m", home=home).stdout)
        assert wait_for(lambda: "MCP 2025-11-25" in hermes("mcp", "get", "old", home=home).stdout)
