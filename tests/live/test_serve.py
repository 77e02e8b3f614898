"""`hermes mcp serve` driven by a real MCP client (the SDK's `Client`), and reload through it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import psutil
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage

from hermes.home import Home
from tests.support import (
    PATIENCE,
    PYTHON,
    fast_entry,
    hermes,
    hermes_process,
    sdk_client_over_http,
    serve_params,
    start_serve_http,
    wait_for,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.anyio


async def test_client_drives_serve_end_to_end_with_reload(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    changes: list[str] = []

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.append(message.method)

    async with Client(serve_params(home), mode="legacy", message_handler=on_message) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__box__echo" in names and "mcp__box__get_weather" in names
        result = await client.call_tool("mcp__box__echo", {"text": "through hermes"})
        assert not result.is_error and result.content[0].text == "through hermes"  # type: ignore[union-attr]

        missing = await client.call_tool("mcp__ghost__echo", {})
        assert missing.is_error

        write_config(home, {"mcp_servers": {"box": fast_entry(), "more": fast_entry("--lean")}})
        reload = await anyio.to_thread.run_sync(lambda: hermes_process("mcp", "reload", "--json", home=home))
        assert reload.returncode == 0, reload.stderr
        assert '"added": [\n' in reload.stdout and '"more"' in reload.stdout
        await wait_until(lambda: bool(changes))
        names = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__more__ping" in names
        pong = await client.call_tool("mcp__more__ping", {})
        assert pong.content[0].text == "pong"  # type: ignore[union-attr]
    assert wait_for(lambda: not list(home.run.glob("session-*.json")))


async def test_unavailable_tool_answers_structured_through_serve(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry(), "dead": {"command": "no-such-command-here"}}})
    async with Client(serve_params(home), mode="legacy") as client:
        result = await client.call_tool("mcp__dead__anything", {})
        assert result.is_error
        payload: dict[str, Any] = result.structured_content or {}
        assert payload["state"] == "failed" and payload["retry"] == "after_user_action"
        assert "no-such-command-here" in payload["reason"]


def test_serve_http_requires_the_printed_token(home: Home, tmp_path: Path) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    process, url, token = start_serve_http(home, tmp_path / "serve.err")
    try:
        assert httpx2.post(url, json={}).status_code == 401
        assert httpx2.post(url, json={}, headers={"Authorization": "Bearer wrong"}).status_code == 401

        async def use() -> str:
            async with sdk_client_over_http(url, token, mode="legacy") as client:
                result = await client.call_tool("mcp__box__echo", {"text": "over http"})
                return str(result.content[0].text)  # type: ignore[union-attr]

        assert anyio.run(use) == "over http"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    assert not list(home.run.glob("session-*.json"))


def _servers(host: psutil.Process) -> list[psutil.Process]:
    """The session's server processes."""
    def line(process: psutil.Process) -> str:
        try:
            return " ".join(process.cmdline())
        except psutil.Error:  # gone, or a zombie already
            return ""

    # The test servers' own processes: not the watchdog shell, not the sandbox's one-off preflight.
    return [p for p in host.children() if "/tests/servers/" in line(p)]


def test_sigkilled_serve_leaves_no_children(home: Home, tmp_path: Path) -> None:
    write_config(home, {"mcp_servers": {"a": fast_entry(), "b": fast_entry(), "c": fast_entry("--lean")}})
    process = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "serve"],
                               env={**os.environ, "HERMES_HOME": str(home.root)},
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        host = psutil.Process(process.pid)
        assert wait_for(lambda: len(_servers(host)) == 3 and bool(list(home.run.glob("session-*.json"))))
        children = host.children(recursive=True)
        assert len(children) >= 3
        process.kill()
        process.wait(timeout=10)
        _, alive = psutil.wait_procs(children, timeout=10)
        assert alive == [], [p.cmdline() for p in alive]
    finally:
        if process.poll() is None:
            process.kill()
    # A killed session leaves its runtime file; the next reader sees the dead pid and cleans up.
    result = hermes("mcp", "reload", home=home)
    assert result.returncode == 0 and "No running hermes session" in result.stdout
    assert not list(home.run.glob("session-*.json"))


def test_serve_sigterm_stops_children_cleanly(home: Home) -> None:
    write_config(home, {"mcp_servers": {"a": fast_entry()}})
    process = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "serve"],
                               env={**os.environ, "HERMES_HOME": str(home.root)},
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    host = psutil.Process(process.pid)
    assert wait_for(lambda: len(_servers(host)) == 1)
    child = _servers(host)[0]
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=PATIENCE) == 0
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE


async def test_modern_client_hears_changes_through_subscriptions_listen(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry("--lean")}})
    async with Client(serve_params(home), mode="auto") as client:
        assert client.protocol_version >= "2026"
        assert {t.name for t in (await client.list_tools()).tools} == {"mcp__box__ping"}
        async with client.listen(tools_list_changed=True) as subscription:
            write_config(home, {"mcp_servers": {"box": fast_entry("--lean"),
                                                "more": fast_entry("--lean")}})
            reload = await anyio.to_thread.run_sync(lambda: hermes_process("mcp", "reload", home=home))
            assert reload.returncode == 0
            with anyio.fail_after(PATIENCE):
                async for _event in subscription:
                    break
        names = {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}
        assert "mcp__more__ping" in names
