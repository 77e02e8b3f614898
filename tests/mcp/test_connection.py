"""The supervisor: parallel starts, exact failure reasons, crash budget, parking, revival, reconnects.

Driven through a real Session with real processes; servers that only need to start, crash and
answer use `fast.py` (no SDK import), so restarts cost milliseconds instead of seconds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from hermes.home import Home
from hermes.mcp.connection import RestartPolicy
from hermes.mcp.states import ConnectionState
from hermes.session.core import Session, SessionSettings
from tests.support import (
    SERVERS,
    fast_entry,
    free_port,
    start_portfile_server,
    stdio_entry,
    unavailable,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.anyio

def _up(session: Session, name: str, *, restarts: int) -> bool:
    snapshot = session.snapshots()[name]
    return snapshot.connected and snapshot.restarts == restarts


QUICK = SessionSettings(policy=RestartPolicy(attempts=3, base_delay=0.05, max_delay=0.2, healthy_after=60))


async def test_parallel_start_one_failing_does_not_block(home: Home) -> None:
    write_config(home, {"mcp_servers": {
        "good": fast_entry(),
        "slow": fast_entry("--ready-delay", "1"),
        "missing": {"command": "definitely-not-a-command-xyz"},
        "hang": stdio_entry("silent.py", connect_timeout=1.5),
        "unset": fast_entry(env={"K": "${NOT_SET_ANYWHERE_123}"}),
        "dies": fast_entry("--exit-at-start", "4"),
    }})
    async with Session(home) as session:
        connections = session.snapshots()
        assert connections["good"].connected and connections["slow"].connected
        assert connections["missing"].state is ConnectionState.FAILED
        assert "command 'definitely-not-a-command-xyz' was not found" in connections["missing"].reason
        assert connections["hang"].state is ConnectionState.FAILED
        assert "did not finish starting within 1.5 s" in connections["hang"].reason
        assert "silent server starting" in connections["hang"].stderr_tail
        assert "NOT_SET_ANYWHERE_123" in connections["unset"].reason and "'unset'" in connections["unset"].reason
        assert "exit code 4" in connections["dies"].reason and "fast server starting" in connections["dies"].stderr_tail
        payload = unavailable(await session.call("mcp__hang__echo", {"text": "x"}))
        assert payload is not None and payload["state"] == "failed" and payload["server"] == "hang"
        assert payload["retry"] == "after_user_action" and "silent server starting" in payload["stderr_tail"]


async def test_crash_restart_then_park_then_revive(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    async with Session(home, QUICK) as session:
        pids = {session.snapshots()["box"].pid}
        for expected_restarts in (1, 2, 3):
            await session.call("mcp__box__crash", {})
            await wait_until(lambda n=expected_restarts: _up(session, "box", restarts=n))
            pids.add(session.snapshots()["box"].pid)
        assert len(pids) == 4
        await session.call("mcp__box__crash", {})
        await wait_until(lambda: session.snapshots()["box"].state is ConnectionState.PARKED)
        assert "mcp__box__echo" not in session.surface().tools
        payload = unavailable(await session.call("mcp__box__echo", {"text": "x"}))
        assert payload is not None and payload["state"] == "parked"
        assert "crashed 4 times in a row" in payload["reason"] and "exit code 3" in payload["reason"]
        assert "fast server starting" in payload["stderr_tail"]
        report = await session.reload()
        assert report.revived == ["box"] and report.unchanged == ["box"]
        assert session.snapshots()["box"].connected
        assert (await session.call("mcp__box__echo", {"text": "back"})).text == "back"


async def test_a_successful_call_restores_the_restart_budget(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    async with Session(home, QUICK) as session:
        for round_number in range(1, 6):
            assert (await session.call("mcp__box__echo", {"text": "ok"})).text == "ok"
            await session.call("mcp__box__crash", {})
            await wait_until(lambda n=round_number: _up(session, "box", restarts=n))
        assert session.snapshots()["box"].state is ConnectionState.CONNECTED


async def test_call_timeout_cancels_on_the_server(home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    # The marker's folder is named at call time only: the sandbox is told it may be written.
    write_config(home, {"mcp_servers": {"box": fast_entry(timeout=0.5, sandbox={"write": [str(tmp_path)]})}})
    async with Session(home) as session:
        outcome = await session.call("mcp__box__slow", {"seconds": 60, "marker": str(marker)})
        assert outcome.is_error and "timed out after 0.5 s" in outcome.text
        await wait_until(marker.exists)
        assert marker.read_text() == "cancelled"
        assert (await session.call("mcp__box__echo", {"text": "still fine"})).text == "still fine"


async def test_a_task_that_outlives_its_timeout_is_cancelled_on_the_server(home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "task-cancelled"
    write_config(home, {"mcp_servers": {"box": fast_entry(timeout=0.5, sandbox={"write": [str(tmp_path)]})}})
    steps: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        steps.append(message)

    async with Session(home) as session:
        outcome = await session.call("mcp__box__endless_task", {"marker": str(marker)}, on_progress=on_progress)
        assert outcome.is_error and "timed out after 0.5 s" in outcome.text, outcome.text
        await wait_until(marker.exists)
        assert marker.read_text() == "cancelled" and "still going" in steps
        assert (await session.call("mcp__box__echo", {"text": "still fine"})).text == "still fine"


async def test_list_changed_refreshes_tools(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": stdio_entry()}})
    async with Session(home) as session:
        changes: list[int] = []
        session.tools.listen(lambda: changes.append(1))
        assert "mcp__box__fresh" not in session.surface().tools
        await session.call("mcp__box__add_tool", {})
        await wait_until(lambda: "mcp__box__fresh" in session.surface().tools)
        assert (await session.call("mcp__box__fresh", {})).text == "fresh result"
        assert changes


async def test_an_http_connection_that_drops_is_reconnected(home: Home, tmp_path: Path) -> None:
    port = free_port()

    def start(index: int) -> subprocess.Popen[bytes]:
        portfile = tmp_path / f"port-{index}"
        return start_portfile_server([sys.executable, str(SERVERS / "toolbox.py"), "--http", str(portfile),
                                      "--port", str(port)], portfile)[0]

    server = start(0)
    write_config(home, {"mcp_servers": {"web": {"url": f"http://127.0.0.1:{port}/mcp"}}})
    # A budget that outlasts the server's restart however slow the machine is.
    patient = SessionSettings(policy=RestartPolicy(attempts=10_000, base_delay=0.05, max_delay=0.2))
    try:
        async with Session(home, patient) as session:
            assert (await session.call("mcp__web__echo", {"text": "before"})).text == "before"
            server.kill()
            server.wait()
            dropped = await session.call("mcp__web__echo", {"text": "during"})
            assert dropped.is_error
            server = await anyio.to_thread.run_sync(start, 1)
            await wait_until(lambda: session.snapshots()["web"].connected)
            assert (await session.call("mcp__web__echo", {"text": "after"})).text == "after"
            assert session.snapshots()["web"].restarts >= 1
    finally:
        server.kill()
        server.wait()


async def test_leaving_a_session_stops_every_server(home: Home) -> None:
    """Stopping is parallel (bench/bench_lifecycle.py measures it); here: nothing is left running."""
    write_config(home, {"mcp_servers": {f"s{i}": fast_entry() for i in range(10)}})
    async with Session(home) as session:
        pids = [c.pid for c in session.snapshots().values()]
        assert all(pids) and all(c.connected for c in session.snapshots().values())
    import psutil

    assert not [pid for pid in pids if pid is not None and psutil.pid_exists(pid)
                and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]


async def test_an_answer_that_cannot_be_read_ends_the_call_now_not_at_the_timeout(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry(timeout=600)}})
    async with Session(home) as session:
        outcome = await session.call("mcp__box__unreadable", {})
        assert outcome.is_error and "closed during the call" in outcome.text
        log = home.server_log("box").read_text()
        assert "the server sent a message hermes could not read (nested too deeply)" in log
        # The supervisor starts it again: the next call works.
        await wait_until(lambda: session.snapshots()["box"].connected)
        assert (await session.call("mcp__box__echo", {"text": "back"})).text == "back"


def test_an_http_server_s_401_names_the_authorization_header(home: Home) -> None:
    """A real loopback server that refuses every request with 401 and says nothing more."""
    import http.server
    import threading

    from tests.support import hermes, write_config

    class Refusing(http.server.BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_DELETE = _refuse

        def log_message(self, *_: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        write_config(home, {"mcp_servers": {"remote": {"url": f"http://127.0.0.1:{server.server_port}/mcp"}}})
        tested = hermes("mcp", "test", "remote", home=home)
    finally:
        server.shutdown()
        thread.join()
    said = tested.stdout + tested.stderr
    assert tested.returncode != 0 and "HTTP 401" in said and "Authorization header" in said, said
