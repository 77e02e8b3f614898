"""Ctrl-C at any step of `hermes mcp install` leaves config.yaml and .env byte for byte as they were.

Each test drives the real command in a pty (a person at a terminal), stops it at one step with
Ctrl-C, and compares both files with what they held before: the secret must not stay in `.env`,
and the entry must not stay in config.yaml, enabled or not.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest

from hermes.home import Home
from tests.support import CANARY, PYTHON, SERVERS, browser_env

BEFORE_CONFIG = "# my settings, kept as written\nmcp_servers:\n  mine:\n    command: my-server   # mine\n"
BEFORE_DOTENV = "OTHER_TOKEN=keep-this-one\n"


@pytest.fixture
def prepared(home: Home) -> Home:
    home.ensure()
    home.config.write_text(BEFORE_CONFIG)
    home.dotenv.write_text(BEFORE_DOTENV)
    home.dotenv.chmod(0o600)
    return home


def _entry(home: Home, **overrides: Any) -> None:
    home.mcp_catalog.mkdir(exist_ok=True)
    entry = {"schema": 1, "name": "box", "title": "Box", "description": "Test tools.",
             "transport": {"type": "stdio", "command": PYTHON, "args": [str(SERVERS / "fast.py")],
                           "env": {"FAKE_API_KEY": "${BOX_KEY}"}},
             "auth": {"type": "api_key", "settings": [
                 {"name": "BOX_KEY", "prompt": "API key", "secret": True},
                 {"name": "BOX_REGION", "prompt": "Region", "secret": False, "default": "eu"}]}}
    entry.update(overrides)
    (home.mcp_catalog / "box.json").write_text(json.dumps(entry))


def _install(home: Home, env: dict[str, str] | None = None) -> pexpect.spawn:
    return pexpect.spawn(PYTHON, ["-m", "hermes", "mcp", "install", "box"], encoding="utf-8", timeout=60,
                         dimensions=(50, 160),
                         env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", **(env or {})})


def _interrupt_and_check(home: Home, child: pexpect.spawn, *, terminate: bool = False) -> None:
    if terminate:
        child.kill(signal.SIGTERM)
    else:
        child.sendintr()
    child.expect(pexpect.EOF)
    # The terminal closes a moment before the process has exited; `close()` alone would then hang
    # it up (SIGHUP) on a loaded machine and report no exit status at all.
    child.wait()
    child.close()
    # Interrupted: exit 130, or (when the Ctrl-C lands while the probe's own signal handling is
    # still being set up, about 1 run in 4 on a loaded machine) ended by the SIGINT itself.
    if terminate:  # SIGTERM unwinds as Ctrl-C does (the undo runs), where it used to kill mid-change
        assert child.exitstatus == 143, (child.exitstatus, child.signalstatus, child.before)
    else:
        assert child.exitstatus == 130 or child.signalstatus == signal.SIGINT, child.before
    assert home.config.read_text() == BEFORE_CONFIG
    assert home.dotenv.read_text() == BEFORE_DOTENV
    assert CANARY not in home.dotenv.read_text()


def _secret_given(child: pexpect.spawn) -> None:
    child.expect("API key")
    child.sendline(CANARY)



def test_ctrl_c_at_the_secret_prompt(prepared: Home) -> None:
    _entry(prepared)
    child = _install(prepared)
    child.expect("API key")
    _interrupt_and_check(prepared, child)


def test_ctrl_c_at_the_next_prompt_after_the_secret(prepared: Home) -> None:
    _entry(prepared)
    child = _install(prepared)
    _secret_given(child)
    child.expect("Region")
    _interrupt_and_check(prepared, child)


def test_ctrl_c_while_the_server_is_probed(prepared: Home) -> None:
    _entry(prepared, transport={"type": "stdio", "command": PYTHON, "env": {"FAKE_API_KEY": "${BOX_KEY}"},
                                "args": [str(SERVERS / "fast.py"), "--ready-delay", "600"]})
    child = _install(prepared)
    _secret_given(child)
    child.expect("Region")
    child.sendline("")
    child.expect("to list its tools")
    # The secret is in .env and the entry in config.yaml while the probe runs: both must go.
    assert CANARY in prepared.dotenv.read_text() and "box" in prepared.config.read_text()
    _interrupt_and_check(prepared, child)


@pytest.mark.parametrize("terminate", [False, True], ids=["ctrl-c", "sigterm"])
def test_stopped_at_the_tool_checklist(prepared: Home, terminate: bool) -> None:
    _entry(prepared)
    child = _install(prepared)
    _secret_given(child)
    child.expect("Region")
    child.sendline("")
    child.expect("Tools to offer")
    assert CANARY in prepared.dotenv.read_text()
    _interrupt_and_check(prepared, child, terminate=terminate)


def test_ctrl_c_at_keep_it_disabled(prepared: Home) -> None:
    _entry(prepared, transport={"type": "stdio", "command": PYTHON, "env": {"FAKE_API_KEY": "${BOX_KEY}"},
                                "args": [str(SERVERS / "fast.py"), "--exit-at-start", "3"]})
    child = _install(prepared)
    _secret_given(child)
    child.expect("Region")
    child.sendline("")
    child.expect("Save it anyway")
    _interrupt_and_check(prepared, child)


def test_ctrl_c_while_the_oauth_login_waits_for_the_browser(prepared: Home, tmp_path: Path,
                                                            oauth_server: Callable[..., str]) -> None:
    url = oauth_server()
    _entry(prepared, transport={"type": "http", "url": url}, auth={"type": "oauth"})
    child = _install(prepared, env=browser_env(tmp_path, "never"))
    child.expect("authorize it in your browser")
    child.expect("Waiting")
    _interrupt_and_check(prepared, child)
