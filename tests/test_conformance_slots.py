"""The conformance clients take turns: with two slots, a third client waits in the kernel until one
of the first two exits, and a client killed while holding a slot frees it."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
from pathlib import Path

from conformance import slots

from tests.support import PATIENCE, wait_for

ROOT = Path(__file__).resolve().parent.parent
# Takes a slot, says so, and holds it until its standard input closes (or it is killed).
HOLDER = ("import sys; sys.path.insert(0, sys.argv[1]); from conformance.slots import slot\n"
          "with slot():\n    print('holding', flush=True); sys.stdin.read()\n")


def _holder(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)


def _said(process: subprocess.Popen[str]) -> str:
    """The process's next line, or "" when none comes within the suite's patience (never a hang)."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        return process.stdout.readline() if selector.select(PATIENCE) else ""


def _waiting_for_a_lock(pid: int) -> bool:
    """Whether the kernel keeps a lock request of `pid` waiting (a `->` line of /proc/locks naming it)."""
    return any("->" in line and line.split("->", 1)[1].split()[3] == str(pid)
               for line in Path("/proc/locks").read_text().splitlines())


def test_a_third_client_waits_for_a_slot_and_a_killed_holder_frees_its_own(tmp_path: Path) -> None:
    env = {**os.environ, **slots.prepare(tmp_path / "slots", 2)}
    holders: list[subprocess.Popen[str]] = []
    try:
        # One after the other, so that each takes the next number: 0 and 1, then 2 (the first one's slot).
        for _ in range(2):
            holders.append(_holder(env))
            assert _said(holders[-1]) == "holding\n"
        first, second = holders
        third = _holder(env)
        holders.append(third)
        assert wait_for(lambda: _waiting_for_a_lock(third.pid))  # the third waits for a slot
        first.kill()  # killed while holding: the kernel frees its lock
        assert _said(third) == "holding\n"
        assert second.poll() is None  # the other slot is still held
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
