"""`hermes mcp configure` driven through a real pseudo-terminal, as a person would use it."""

from __future__ import annotations

import os
import re

import pexpect

from hermes.config.store import ConfigStore
from hermes.home import Home
from tests.support import PYTHON, fast_entry, write_config

DOWN = "\x1b[B"


def _configure(home: Home) -> pexpect.spawn:
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "mcp", "configure", "box"], encoding="utf-8", timeout=60,
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm"}, dimensions=(40, 120))
    child.expect("Tools of 'box'")
    return child


def test_checklist_writes_include_and_all_checked_removes_filter(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    offered = ["echo", "get-weather", "fail", "crash", "slow", "whoami", "env-report", "log", "endless-task",
               "rendezvous", "unreadable", "reveal", "add", "delete"]

    child = _configure(home)
    child.send(" ")          # uncheck the first tool (echo)
    child.send(DOWN * 3)
    child.send(" ")          # uncheck crash
    child.send("\r")
    child.expect("Selected 12 of 14 tools")
    child.expect(pexpect.EOF)
    child.wait()  # the terminal closes a moment before the process exits
    child.close()
    assert child.exitstatus == 0
    include = ConfigStore(home).load().mcp_servers["box"].tools.include
    assert include == tuple(t for t in offered if t not in ("echo", "crash"))

    child = _configure(home)
    child.send(" ")          # echo back on; crash stays off
    child.send("\r")
    child.expect("Selected 13 of 14 tools")
    child.expect(pexpect.EOF)
    assert ConfigStore(home).load().mcp_servers["box"].tools.include == tuple(t for t in offered if t != "crash")

    child = _configure(home)
    child.send(DOWN * 3 + " \r")
    child.expect("All 14 tools of 'box' selected")
    child.expect(pexpect.EOF)
    assert ConfigStore(home).load().mcp_servers["box"].tools.include is None
    assert "include" not in home.config.read_text()


def test_checklist_without_a_terminal_says_so(home: Home) -> None:
    from tests.support import hermes

    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    result = hermes("mcp", "configure", "box", home=home)
    assert result.returncode == 2 and "needs a terminal" in result.stderr
    # Said before anything heavy loads: the MCP SDK's import alone takes seconds on a loaded machine.
    from tests.support import hermes_process

    ran = hermes_process("mcp", "configure", "box", home=home, input="", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert ran.returncode == 2 and "needs a terminal" in ran.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in ran.stderr.splitlines() if line.startswith("import time:")}
    assert "mcp" not in imported and "questionary" not in imported, sorted(imported)[:20]


def test_the_picker_fits_the_terminal_and_ctrl_c_leaves_it_interrupted(home: Home) -> None:
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "mcp"], encoding="utf-8", timeout=60,
                          env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm"}, dimensions=(30, 70))
    child.expect("MCP servers")
    child.expect("Quit")
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before).replace("\r", "")
    shown = [line for line in plain.split("\n") if "available" in line]
    assert shown and all(len(line.strip()) <= 70 for line in shown), shown
    child.sendintr()
    child.expect(pexpect.EOF)
    child.wait()
    child.close()
    assert child.exitstatus == 130
