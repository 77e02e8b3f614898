"""The stdio transport: linear line splitting, exits as events, bounded shutdown, no orphans ever."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import mcp_types as types
import psutil
import pytest
from mcp import Client

from hermes.home import Home
from hermes.mcp.children import Watchdog
from hermes.mcp.stdio import LineSplitter, MessageTooLarge, StdioProcess
from hermes.security.redact import Redactor
from tests.support import PYTHON, SERVERS, needs_sandbox, stdio_entry, wait_for, write_config

pytestmark = pytest.mark.anyio
ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}


def test_splitter_joins_a_line_across_many_chunks_and_splits_many_lines_in_one() -> None:
    splitter = LineSplitter(limit=1 << 30)
    body = b"x" * (1 << 20)
    lines: list[bytes] = []
    for start in range(0, len(body), 4096):
        lines += splitter.feed(body[start:start + 4096])
    assert lines == []
    assert splitter.feed(b"\na\nb\n\nc") == [body, b"a", b"b", b""]
    assert splitter.feed(b"\n") == [b"c"]


def test_splitter_refuses_a_line_past_its_limit_and_recovers() -> None:
    splitter = LineSplitter(limit=10)
    with pytest.raises(MessageTooLarge):
        splitter.feed(b"0123456789ABC")
    assert splitter.feed(b"ok\n") == [b"ok"]


async def test_exit_is_an_event_with_the_exit_status() -> None:
    process = StdioProcess(PYTHON, [str(SERVERS / "silent.py"), "--exit", "7"], env=ENV, cwd=None,
                           log=io.StringIO(), redact=Redactor())
    async with process:
        with anyio.fail_after(60):
            await process.exited.wait()
        assert process.returncode == 7
    assert list(process.stderr_tail) == ["silent server starting"]


async def test_a_large_result_arrives_whole(home: Home) -> None:
    size = 30_000_000
    async with Client(StdioProcess(PYTHON, [str(SERVERS / "toolbox.py")], env=ENV, cwd=None, log=io.StringIO(),
                                   redact=Redactor()), mode="legacy") as client:
        result = await client.call_tool("big", {"size": size})
    block = result.content[0]
    assert isinstance(block, types.TextContent) and len(block.text) == size


async def test_cancelled_caller_still_stops_the_server_and_its_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "helper.pid"
    script = tmp_path / "stubborn.py"
    script.write_text(textwrap.dedent(f"""
        import signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        helper = subprocess.Popen(["sleep", "600"])
        open({str(pidfile)!r}, "w").write(str(helper.pid))
        print("stubborn", file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    """))
    process = StdioProcess(PYTHON, [str(script)], env=ENV, cwd=None, log=io.StringIO(), redact=Redactor())
    with anyio.CancelScope() as scope:
        async with process:
            await anyio.to_thread.run_sync(lambda: wait_for(pidfile.exists))
            scope.cancel()
    assert process.exited.is_set() and process.returncode == -signal.SIGKILL
    helper = int(pidfile.read_text())
    assert wait_for(lambda: not psutil.pid_exists(helper) or psutil.Process(helper).status() == "zombie")


class _Ready(io.StringIO):
    """A server log that says when the server has written a line."""

    def __init__(self) -> None:
        super().__init__()
        self.event = anyio.Event()

    def write(self, text: str) -> int:
        self.event.set()
        return super().write(text)


# Helpers that left the server's session (no group kill reaches them) and hold its stdout.
_HANDS_OVER = "import os, sys; os.read(int(sys.argv[1]), 1); sys.stdout.buffer.write(b'x' * (1 << 20))"
_HOLDS_ON = "import time; time.sleep(600)"


@pytest.mark.parametrize("helper", [_HANDS_OVER, _HOLDS_ON],
                         ids=["writes 1 MiB once the server is gone", "never lets go"])
def test_a_stop_reads_the_output_to_its_end_so_no_transport_outlives_the_loop(tmp_path: Path, helper: str) -> None:
    """As a sandboxed server's processes outlive bwrap by a moment, a helper here outlives its server.

    One holds stdout until the server is gone, then writes 1 MiB and exits: the stop must read that
    to its end while the loop runs. The other never lets go: the stop must still end (its grace is
    bounded) and close the pipes itself. Otherwise asyncio's transport is still open when the loop
    closes, and its finalizer raises "Event loop is closed" (and a command prints asyncio's "Loop ...
    that handles pid ... is closed").
    """
    pidfile = tmp_path / "helper.pid"
    server = tmp_path / "hands_over.py"
    server.write_text(textwrap.dedent(f"""
        import os, subprocess, sys
        gone, alive = os.pipe()  # the helper's read of `gone` ends when this process (holding `alive`) is gone
        helper = subprocess.Popen([sys.executable, "-c", {helper!r}, str(gone)], pass_fds=(gone,),
                                  start_new_session=True)
        open({str(pidfile)!r}, "w").write(str(helper.pid))
        os.close(gone)
        print("ready", file=sys.stderr, flush=True)
        sys.stdin.read()
    """))
    log = _Ready()

    async def start_and_stop() -> None:
        async with StdioProcess(PYTHON, [str(server)], env=ENV, cwd=None, log=log, redact=Redactor()):
            with anyio.fail_after(60):
                await log.event.wait()

    caught: list[object] = []
    previous, sys.unraisablehook = sys.unraisablehook, caught.append
    try:
        anyio.run(start_and_stop)
        gc.collect()
    finally:
        sys.unraisablehook = previous
        with contextlib.suppress(ProcessLookupError, ValueError, OSError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert caught == [], [getattr(c, "exc_value", c) for c in caught]


def test_the_watchdog_kills_registered_groups_when_its_pipe_closes() -> None:
    victim = subprocess.Popen(["sleep", "600"], start_new_session=True)
    spared = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        watchdog = Watchdog()
        watchdog.watch(victim.pid)
        watchdog.watch(spared.pid)
        watchdog.forget(spared.pid)
        watchdog.close()
        assert victim.wait(timeout=60) == -signal.SIGKILL
        assert spared.poll() is None
    finally:
        for process in (victim, spared):
            process.kill()
            process.wait()


@pytest.mark.parametrize("own_group", [False, True], ids=["same group", "helper in a group of its own"])
def test_a_sigkilled_host_takes_servers_and_their_helpers_with_it(home: Home, tmp_path: Path, own_group: bool) -> None:
    """SIGKILL leaves no time to clean up: the parent-death signal and the watchdog must do it (unsandboxed:
    the helper's pid is the host's; sandboxed, the pid namespace takes everything, see below)."""
    write_config(home, {"mcp_servers": {"spawner": stdio_entry("spawner.py", sandbox="off")}})
    pidfile = tmp_path / "helper.pid"
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import anyio, pathlib
        from hermes.home import Home
        from hermes.session.core import Session

        async def main():
            async with Session(Home(pathlib.Path({str(home.root)!r}))) as session:
                outcome = await session.call("mcp__spawner__spawn_helper", {{"own_group": {own_group!r}}})
                pathlib.Path({str(pidfile)!r}).write_text(outcome.text)
                await anyio.sleep_forever()

        anyio.run(main)
    """))
    host = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: pidfile.exists() and pidfile.read_text().strip().isdigit()), host.stderr
        helper = psutil.Process(int(pidfile.read_text()))
        server = helper.parent()
        assert server is not None and server.pid != host.pid
        host.kill()
        host.wait()
        _gone, alive = psutil.wait_procs([helper, server], timeout=60)
        assert alive == [], [p.cmdline() for p in alive]
    finally:
        if host.poll() is None:
            host.kill()


@pytest.mark.anyio
async def test_leaving_a_session_takes_a_helper_that_moved_to_its_own_group(home: Home) -> None:
    from hermes.session.core import Session

    write_config(home, {"mcp_servers": {"spawner": stdio_entry("spawner.py", sandbox="off")}})
    async with Session(home) as session:
        outcome = await session.call("mcp__spawner__spawn_helper", {"own_group": True})
        helper = psutil.Process(int(outcome.text))
        assert os.getpgid(helper.pid) != os.getpgid(helper.ppid())
    _gone, alive = psutil.wait_procs([helper], timeout=60)
    assert alive == []


@pytest.mark.anyio
async def test_a_server_stopped_alone_takes_its_helper_in_a_group_of_its_own_and_spares_the_others(home: Home
                                                                                                    ) -> None:
    """A reload that removes one server stops it on its own (not with the whole session's stop)."""
    from hermes.session.core import Session

    servers = {name: stdio_entry("spawner.py", sandbox="off") for name in ("leaving", "staying")}
    write_config(home, {"mcp_servers": servers})
    async with Session(home) as session:
        helpers = {name: psutil.Process(int((await session.call(f"mcp__{name}__spawn_helper",
                                                                 {"own_group": True})).text))
                   for name in servers}
        write_config(home, {"mcp_servers": {"staying": servers["staying"]}})
        await session.reload()
        _gone, alive = psutil.wait_procs([helpers["leaving"]], timeout=60)
        assert alive == []
        assert helpers["staying"].is_running() and helpers["staying"].status() != psutil.STATUS_ZOMBIE
    _gone, alive = psutil.wait_procs([helpers["staying"]], timeout=60)
    assert alive == []


@needs_sandbox
def test_a_sigkilled_host_takes_a_sandboxed_server_and_its_helpers_with_it(home: Home, tmp_path: Path) -> None:
    """Inside the sandbox the helper lives in the server's pid namespace: when hermes dies, bubblewrap
    dies with it (--die-with-parent), and with it every process of the namespace."""
    write_config(home, {"mcp_servers": {"spawner": stdio_entry("spawner.py")}})
    ready = tmp_path / "ready"
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""
        import anyio, pathlib
        from hermes.home import Home
        from hermes.session.core import Session

        async def main():
            async with Session(Home(pathlib.Path({str(home.root)!r}))) as session:
                await session.call("mcp__spawner__spawn_helper", {{"own_group": True}})
                pathlib.Path({str(ready)!r}).write_text("ready")
                await anyio.sleep_forever()

        anyio.run(main)
    """))
    host = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(ready.exists), host.stderr
        inside = [p for p in psutil.Process(host.pid).children(recursive=True)
                  if "spawner.py" in " ".join(p.cmdline()) or p.name() in ("bwrap", "sleep", "python3", "python")]
        assert any(p.name() == "bwrap" for p in inside), [p.cmdline() for p in inside]
        assert len(inside) >= 3  # bubblewrap, the server, its helper
        host.kill()
        host.wait()
        _gone, alive = psutil.wait_procs(inside, timeout=60)
        assert alive == [], [p.cmdline() for p in alive]
    finally:
        if host.poll() is None:
            host.kill()
