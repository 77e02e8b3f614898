"""A real Session against real servers: stdio and HTTP, filters, redaction, failures and reasons."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hermes.errors import ConfigError
from hermes.home import Home
from hermes.session.core import Session, SessionSettings
from tests.support import CANARY, fast_entry, stdio_entry, unavailable, write_config

pytestmark = pytest.mark.anyio



async def test_stdio_tools_call_and_hyphenated_name(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": stdio_entry()}})
    async with Session(home) as session:
        names = set(session.surface().tools)
        assert {"mcp__box__echo", "mcp__box__get_weather", "mcp__box__list_resources",
                "mcp__box__read_resource", "mcp__box__list_prompts", "mcp__box__get_prompt"} <= names
        outcome = await session.call("mcp__box__get_weather", {"city": "Lisbon"})
        assert not outcome.is_error and outcome.text == "sunny in Lisbon"
        resource = await session.call("mcp__box__read_resource", {"uri": "test://hello"})
        assert resource.text == "hello resource"
        prompt = await session.call("mcp__box__get_prompt", {"name": "greet", "arguments": {"who": "Ana"}})
        assert "Say hello to Ana." in prompt.text


async def test_environment_is_only_the_allowlist_plus_env_block(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/tmp/xdg-test")
    write_config(home, {"mcp_servers": {"box": fast_entry(env={"OWN_SETTING": "v1"})}})
    async with Session(home) as session:
        outcome = await session.call("mcp__box__env_report", {"name": "OWN_SETTING"})
        report = outcome.structured
        assert report is not None
        names = set(report["result"]["names"]) if "result" in report else set(report["names"])
    # PWD: bubblewrap names the working folder it changed into (sandboxed servers).
    allowed = {"PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR", "OWN_SETTING",
               "XDG_CONFIG_HOME", "PWD"}
    assert "OPENAI_API_KEY" not in names and "HTTPS_PROXY" not in names
    assert "XDG_CONFIG_HOME" in names and "OWN_SETTING" in names
    # The interpreter may add a handful of its own (for example LC_CTYPE); nothing else from us.
    assert names - allowed <= {"LC_CTYPE"}, names - allowed


async def test_filters_on_original_names_enforced_at_call_time(home: Home) -> None:
    write_config(home, {"mcp_servers": {
        "inc": fast_entry(tools={"include": ["get-*", "echo"]}),
        # The SDK server: it offers resources and prompts, whose utility tools the filters must drop too.
        "exc": stdio_entry(tools={"exclude": ["get-weather"], "resources": False, "prompts": False}),
        "none": stdio_entry(tools={"include": []}),
    }})
    async with Session(home) as session:
        surface = session.surface()
        assert {t.original for t in surface.for_server("inc") if t.kind == "tool"} == {"get-weather", "echo"}
        exc = {t.original for t in surface.for_server("exc")}
        assert "get-weather" not in exc and "echo" in exc
        assert not any(t.kind != "tool" for t in surface.for_server("exc"))
        assert surface.for_server("none") == []  # include: [] registers nothing, utilities included
        assert {t.original for t in surface.for_server("inc")} == {"get-weather", "echo"}
        refused = await session.call("mcp__exc__get_weather", {"city": "x"})
        assert refused.is_error and "filtered out" in refused.text


async def test_a_filtered_tool_with_a_clamped_name_says_filtered_out(home: Home) -> None:
    from hermes.tools.naming import registered_name

    long_name = "a-tool-whose-name-is-far-too-long-to-be-registered-without-being-cut-short"
    write_config(home, {"mcp_servers": {"box": fast_entry("--long", tools={"exclude": [long_name]})}})
    async with Session(home) as session:
        clamped = registered_name("box", long_name)
        assert len(clamped) == 64 and clamped not in session.surface().tools
        refused = await session.call(clamped, {})
        assert refused.is_error and "is filtered out by tools.include/exclude" in refused.text
        assert long_name in refused.text


async def test_capability_gating_and_collisions_reported(home: Home) -> None:
    write_config(home, {"mcp_servers": {"lean": fast_entry("--lean")}})
    async with Session(home) as session:
        surface = session.surface()
        assert set(surface.tools) == {"mcp__lean__ping"}
        skipped = {(s.original, s.name) for s in surface.skipped}
        assert skipped == {("a.b", "mcp__lean__a_b"), ("a-b", "mcp__lean__a_b")}
        assert all("collision" in s.why for s in surface.skipped)
        answer = await session.call("mcp__lean__a_b", {})
        assert answer.is_error and "skipped" in answer.text


async def test_error_text_is_redacted(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOX_TOKEN", CANARY)
    write_config(home, {"mcp_servers": {"box": fast_entry(env={"FAKE_API_KEY": "${BOX_TOKEN}"})}})
    async with Session(home) as session:
        outcome = await session.call("mcp__box__fail", {"text": f"{CANARY} and ghp_abcdefghijklmnopqrstuvwx"})
        assert outcome.is_error
        assert CANARY not in outcome.text and "ghp_abcdefghijklmnop" not in outcome.text
        assert "[REDACTED]" in outcome.text


async def test_stderr_goes_to_redacted_log(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOX_TOKEN", CANARY)
    write_config(home, {"mcp_servers": {"box": fast_entry("--stderr-secret",
                                                          env={"FAKE_API_KEY": "${BOX_TOKEN}"})}})
    async with Session(home) as session:
        assert session.snapshots()["box"].connected
    log = home.server_log("box").read_text()
    assert "fast server starting" in log
    assert "starting with key [REDACTED]" in log
    assert CANARY not in log


async def test_result_cap_and_image_saved(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": stdio_entry()}})
    async with Session(home) as session:
        big = await session.call("mcp__box__big", {"size": 2_100_000})
        assert len(big.text) == 2_000_000
        assert "aaaa" in big.text[:100] and big.text.endswith("bbbb") and "characters omitted" in big.text
        image = await session.call("mcp__box__picture", {})
        saved = Path(image.text.split(" saved to ")[1].rstrip("]"))
        assert saved.parent == home.cache and saved.read_bytes().startswith(b"\x89PNG")


async def test_reload_applies_only_the_difference(home: Home) -> None:
    write_config(home, {"mcp_servers": {"keep": fast_entry(), "change": fast_entry(), "drop": fast_entry()}})
    async with Session(home) as session:
        keep_pid = session.snapshots()["keep"].pid
        change_pid = session.snapshots()["change"].pid
        drop_pid = session.snapshots()["drop"].pid
        write_config(home, {"mcp_servers": {"keep": fast_entry(), "change": fast_entry(timeout=99),
                                            "new": fast_entry()}})
        report = await session.reload()
        assert report.to_json() == {"added": ["new"], "removed": ["drop"], "restarted": ["change"],
                                    "unchanged": ["keep"], "revived": []}
        connections = session.snapshots()
        assert connections["keep"].pid == keep_pid
        assert connections["change"].pid != change_pid and connections["change"].connected
        assert "mcp__new__echo" in session.surface().tools and "mcp__drop__echo" not in session.surface().tools
        assert drop_pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(drop_pid, 0)


async def test_disabled_and_global_switches(home: Home) -> None:
    write_config(home, {"mcp_servers": {"off": fast_entry(enabled=False), "on": fast_entry()},
                        "mcp": {"stdio_servers": False}})
    async with Session(home) as session:
        states = {n: c.state.value for n, c in session.snapshots().items()}
        assert states == {"off": "disabled", "on": "disabled"}
        payload = unavailable(await session.call("mcp__on__echo", {"text": "x"}))
        assert payload is not None and "mcp.stdio_servers: false" in payload["reason"]
        assert "enabled: false" in (await session.call("mcp__off__echo", {})).text


async def test_platform_toolsets_as_the_documents_write_them(home: Home) -> None:
    # The user's documents (seed 002), word for word, plus a server no platform names.
    write_config(home, {"mcp_servers": {"github": fast_entry("--lean"), "linear": fast_entry("--lean"),
                                        "other": fast_entry("--lean")},
                        "platform_toolsets": {"cli": ["hermes-cli", "file", "terminal", "mcp-github", "mcp-linear"],
                                              "telegram": ["hermes-gateway", "mcp-github"],
                                              "discord": ["hermes-gateway"]}})
    own = {"builtin:file", "builtin:terminal"}
    # `discord: [hermes-gateway]` means no GitHub tools on Discord; slack is not listed: every server.
    expected = {"cli": {"github", "linear", *own}, "telegram": {"github", *own}, "discord": own,
                "slack": {"github", "linear", "other", *own}, None: {"github", "linear", "other"}}
    for platform, servers in expected.items():
        async with Session(home, SessionSettings(platform=platform)) as session:
            tools = session.surface().tools.values()
            assert {t.server for t in tools} == servers, platform
            if own <= servers:
                assert {"file_read", "file_edit", "terminal_run"} <= {t.name for t in tools}


async def test_a_misspelt_toolset_is_refused_with_a_suggestion(home: Home) -> None:
    write_config(home, {"mcp_servers": {"github": fast_entry("--lean")},
                        "platform_toolsets": {"cli": ["hermes-cli", "mcp-githb"]}})
    with pytest.raises(ConfigError, match=r"platform_toolsets\.cli: unknown toolset 'mcp-githb' \(did you mean "
                                          r"'mcp-github'\?\)"):
        async with Session(home, SessionSettings(platform="cli")):
            pass


async def test_http_with_bearer_header_and_token_redacted(home: Home, http_server: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    url = http_server("--require-bearer", CANARY)
    monkeypatch.setenv("BOX_TOKEN", CANARY)
    write_config(home, {"mcp_servers": {
        "web": {"url": url, "headers": {"Authorization": "Bearer ${BOX_TOKEN}"}},
        "nokey": {"url": url},
    }})
    async with Session(home) as session:
        connections = session.snapshots()
        assert connections["web"].connected
        assert connections["nokey"].state == "failed" and "401" in connections["nokey"].reason
        outcome = await session.call("mcp__web__fail", {"text": CANARY})
        assert outcome.is_error and CANARY not in outcome.text
        assert CANARY not in json.dumps([s.to_json() for s in session.status()])
        assert (await session.call("mcp__web__echo", {"text": "over http"})).text == "over http"


async def test_a_result_larger_than_one_sse_event_arrives_over_http(home: Home, http_server: Any) -> None:
    write_config(home, {"mcp_servers": {"web": {"url": http_server()}}})
    async with Session(home) as session:
        big = await session.call("mcp__web__big", {"size": 5_000_000})
    assert not big.is_error, big.text
    assert len(big.text) == 2_000_000 and "aaaa" in big.text[:100] and big.text.endswith("bbbb")


async def test_sse_transport(home: Home, http_server: Any) -> None:
    url = http_server("--sse", "--require-bearer", CANARY).replace("/mcp", "/sse")
    write_config(home, {"mcp_servers": {"old": {"url": url, "transport": "sse",
                                                "headers": {"Authorization": f"Bearer {CANARY}"}}}})
    async with Session(home) as session:
        assert session.snapshots()["old"].connected, session.snapshots()["old"].reason
        assert (await session.call("mcp__old__echo", {"text": "via sse"})).text == "via sse"


async def test_authorization_never_crosses_origins_on_redirect(home: Home) -> None:
    import http.server
    import threading

    seen: list[dict[str, str]] = []

    class Target(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(dict(self.headers))
            self.send_response(500)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Target)
    target_port = target.server_address[1]

    class Redirector(Target):
        def do_POST(self) -> None:
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{target_port}/mcp")
            self.send_header("Content-Length", "0")
            self.end_headers()

    redirector = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirector)
    for server in (target, redirector):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        write_config(home, {"mcp_servers": {"r": {
            "url": f"http://127.0.0.1:{redirector.server_address[1]}/mcp", "connect_timeout": 10,
            "headers": {"Authorization": f"Bearer {CANARY}"}}}})
        async with Session(home) as session:
            assert session.snapshots()["r"].state == "failed"
            assert CANARY not in session.snapshots()["r"].reason
    finally:
        target.shutdown()
        redirector.shutdown()
    assert all("Authorization" not in headers and CANARY not in str(headers) for headers in seen)


