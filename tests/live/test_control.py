"""Finding running sessions: a runtime file is trusted only while its own process is alive."""

from __future__ import annotations

import json
import os

import psutil

from hermes.apps.runtimefile import write_runtime_file
from hermes.home import Home
from tests.support import fast_entry, free_port, hermes, write_config


def test_a_stale_session_file_whose_pid_was_reused_is_ignored_and_removed(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    stale = home.run / "session-1.json"
    # This test's own process is alive but is not the session that wrote the file (pid reuse).
    write_runtime_file(stale, pid=os.getpid(), url=f"http://127.0.0.1:{free_port()}", token="t" * 20, kind="session",
                       started=12345.0)
    legacy = home.run / "session-2.json"
    write_runtime_file(legacy, pid=os.getpid(), url=f"http://127.0.0.1:{free_port()}", token="u" * 20)
    status = hermes("mcp", "status", "--json", home=home)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["sessions"][0]["session_pid"] is None  # a fresh connection instead
    reload = hermes("mcp", "reload", home=home)
    assert reload.returncode == 0 and "No running hermes session" in reload.stdout
    assert not stale.exists() and not legacy.exists()


def test_a_session_that_does_not_answer_is_reported_not_a_traceback(home: Home) -> None:
    write_config(home, {"mcp_servers": {}})
    silent = home.run / "session-3.json"
    write_runtime_file(silent, pid=os.getpid(), url=f"http://127.0.0.1:{free_port()}", token="v" * 20,
                       kind="session", started=psutil.Process().create_time())
    reload = hermes("mcp", "reload", home=home)
    assert reload.returncode == 1 and "did not answer" in reload.stderr and "Traceback" not in reload.stderr
    assert silent.exists()  # it may be a live session that is busy: never removed on a missed answer
