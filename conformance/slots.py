"""At most as many clients under test at once as the machine has cores.

The suite starts every client scenario of a run at once. `run.py` makes a folder of slot files,
one per core, and names it in HERMES_CONFORMANCE_SLOTS; each `client.py` takes the next number
from a counter and waits, in the kernel, for the lock on slot `number % slots`. The kernel
releases a lock when its holder exits, however it exits, so a client the suite kills for its
timeout never keeps a slot. Nothing is retried: a waiting client simply starts later.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

SLOTS_VARIABLE = "HERMES_CONFORMANCE_SLOTS"


def prepare(folder: Path, count: int) -> dict[str, str]:
    """Make `count` slots in `folder`; the environment entry that hands them to the clients."""
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        (folder / f"slot-{number}").touch()
    (folder / "counter").touch()
    return {SLOTS_VARIABLE: str(folder)}


def _next_number(folder: Path) -> int:
    """A number no other client got: one byte appended under the counter's lock; the size before it."""
    with (folder / "counter").open("ab") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)
        number = os.fstat(counter.fileno()).st_size
        counter.write(b".")
        return number


@contextlib.contextmanager
def slot() -> Iterator[None]:
    """Hold one slot for the duration (no slots named: run at once, as the suite alone would)."""
    named = os.environ.get(SLOTS_VARIABLE)
    if not named:
        yield
        return
    folder = Path(named)
    slots = sorted(folder.glob("slot-*"))
    with (slots[_next_number(folder) % len(slots)]).open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # blocks until the client before us in this slot has exited
        yield
