"""One signal policy for every command: the first Ctrl-C stops the work and its servers, exit 130.

Real processes, because the process is the point: a pty for a person's Ctrl-C, a plain SIGINT for
a script, a second SIGINT during the cleanup, SIGTERM. Each waits for a server to be starting (its
process exists) before the signal, so the signal lands while hermes is waiting for it.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import click
import pexpect
import psutil

from hermes.cli.main import cli
from hermes.home import Home
from tests.support import PATIENCE, PYTHON, fast_entry, hermes, wait_for, write_config


def _command_line(process: psutil.Process) -> str:
    # A short-lived child (the sandbox's preflight, a finished helper) may be gone or a zombie by now.
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _server_of(pid: int) -> psutil.Process:
    me = psutil.Process(pid)
    assert wait_for(lambda: any("fast.py" in _command_line(p) for p in me.children(recursive=True)))
    return next(p for p in me.children(recursive=True) if "fast.py" in _command_line(p))


def _gone(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _slow_server(home: Home) -> None:
    write_config(home, {"mcp_servers": {"slow": fast_entry("--ready-delay", "600")}})


def test_one_ctrl_c_stops_a_listing_that_waits_for_a_slow_server(home: Home) -> None:
    _slow_server(home)
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "tools", "list", "--wait", "600"], encoding="utf-8",
                          timeout=PATIENCE, env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm"})
    server = _server_of(child.pid)
    child.sendintr()
    child.expect("Interrupted")
    child.expect(pexpect.EOF)
    child.wait()  # the terminal closes a moment before the process exits
    child.close()
    assert child.exitstatus == 130
    assert wait_for(lambda: _gone(server))


def _run(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PYTHON, "-m", "hermes", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "HERMES_HOME": str(home.root)})


def test_sigint_to_a_process_without_a_terminal_is_130_too(home: Home) -> None:
    _slow_server(home)
    process = _run(home, "mcp", "status", "--wait", "600")
    server = _server_of(process.pid)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 130 and "Interrupted" in err and "Traceback" not in err
    assert wait_for(lambda: _gone(server))


def test_a_second_sigint_during_the_cleanup_never_prints_a_traceback(home: Home) -> None:
    _slow_server(home)
    process = _run(home, "tools", "call", "mcp__slow__echo", "--args", '{"text": "x"}')
    server = _server_of(process.pid)
    for _ in range(3):
        process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "Interrupted.", err
    assert wait_for(lambda: _gone(server))


def test_sigterm_stops_a_command_and_its_servers(home: Home, tmp_path: Path) -> None:
    _slow_server(home)
    process = _run(home, "tools", "list", "--wait", "600")
    server = _server_of(process.pid)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 143 and "Traceback" not in err
    assert wait_for(lambda: _gone(server))


def test_an_interrupted_call_is_cancelled_on_its_server_before_the_command_ends(home: Home, tmp_path: Path) -> None:
    """The call stops on the signal while the session still runs, so its cancellation reaches the
    server (`tasks/cancel` here), which an HTTP server's task would otherwise outlive hermes."""
    marker = tmp_path / "task-cancelled"
    write_config(home, {"mcp_servers": {"box": fast_entry(timeout=600, sandbox={"write": [str(tmp_path)]})}})
    child = pexpect.spawn(PYTHON, ["-m", "hermes", "tools", "call", "mcp__box__endless_task", "--args",
                                   f'{{"marker": "{marker}"}}'], env={**os.environ, "HERMES_HOME": str(home.root)},
                          encoding="utf-8", timeout=PATIENCE)
    child.expect("still going")  # the task runs on the server
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130, child.before
    assert marker.read_text() == "cancelled"


def test_an_error_raised_while_a_ctrl_c_unwinds_is_an_interruption_not_a_bug(home: Home) -> None:
    @click.command("half-imported")
    def half_imported() -> None:
        # What a Ctrl-C during an import can leave: a library's own error, raised while it unwound.
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("a module half imported") from interrupt

    cli.add_command(half_imported)
    try:
        ran = hermes("half-imported", home=home)
    finally:
        cli.commands.pop("half-imported", None)
    assert (ran.returncode, ran.stderr.strip()) == (130, "Interrupted.")
    assert "report" not in ran.stderr
