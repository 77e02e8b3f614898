"""`hermes demo`: the built-in example, offline, in a temporary HERMES_HOME.

It walks the main job step by step with real parts: add the bundled example stdio server to a
fresh config, start a session, show the tool surface and call two tools. Exit 0 only if every step
behaved as described.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import anyio

from hermes.cli.output import say
from hermes.config.edit import add_server
from hermes.config.store import ConfigStore
from hermes.home import Home


def _step(number: int, text: str) -> None:
    say(f"\n{number}. {text}")


async def _walk(home: Home) -> bool:
    from hermes.session import Session

    _step(1, "Add the bundled example server (stdio) to a fresh config.")
    with ConfigStore(home).edit() as doc:
        add_server(doc, "example", {"command": sys.executable, "args": ["-m", "hermes.examples.echo_server"]},
                   replace=True)
    say(f"   {home.config} now configures server 'example'.")

    _step(2, "Start a session: every configured server connects in parallel.")
    async with Session(home) as session:
        connection = session.connections()["example"]
        if not connection.connected:
            say(f"   FAILED: the example server did not connect: {connection.reason}")
            return False
        say(f"   'example' connected in {(connection.connect_seconds or 0) * 1000:.0f} ms "
            f"(pid {connection.pid}), offering {len(connection.tools)} tools.")

        _step(3, "The tool surface, as a model sees it:")
        names = sorted(session.surface().tools)
        for name in names:
            say(f"   {name}")
        if "mcp__example__word_count" not in names:
            say("   FAILED: the hyphenated tool 'word-count' should register as mcp__example__word_count.")
            return False

        _step(4, "Call mcp__example__echo with {\"text\": \"hello from hermes\"}.")
        echo = await session.call("mcp__example__echo", {"text": "hello from hermes"})
        say(f"   -> {echo.text}")
        _step(5, "Call mcp__example__add with {\"a\": 2, \"b\": 40}.")
        added = await session.call("mcp__example__add", {"a": 2, "b": 40})
        say(f"   -> {added.text}")
        _step(6, "Call a tool of a server that does not exist: the answer says why.")
        missing = await session.call("mcp__nowhere__tool", {})
        say(f"   -> {json.dumps(missing.to_json())}")
        ok = echo.text == "hello from hermes" and added.text in ("42", "42.0") and missing.is_error
    _step(7, "Session closed; the example server process has exited.")
    return ok


def run_demo(home_dir: str | None = None) -> int:
    with tempfile.TemporaryDirectory(prefix="hermes-demo-") as scratch:
        root = Path(home_dir) if home_dir else Path(scratch)
        home = Home(root)
        home.ensure()
        os.environ.setdefault("NO_COLOR", "1") if not sys.stdout.isatty() else None
        say(f"hermes demo (HERMES_HOME={root})")
        ok = anyio.run(_walk, home)
    say("\nDemo finished: every step behaved as described." if ok else "\nDemo FAILED.")
    return 0 if ok else 1
