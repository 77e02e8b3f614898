"""The gateway's own small records (`access.json`, `rooms.json`): read whole, written only whole.

A record that is there but cannot be read (damaged, too large, a FIFO, a directory) or is a
symbolic link is never written over: what it holds (paired users) would be lost, and a link's
target (any file of the user's) would be replaced. The reader says so in one sentence naming the
file; the lock beside it keeps the gateway and `hermes gateway pair` from writing at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes.errors import HermesError
from hermes.files import atomic_write, file_lock, read_json_object


def read_record(path: Path, limit: int) -> dict[str, Any]:
    """The record's object ({} when there is none yet); `HermesError` when it must be left alone."""
    if path.is_symlink():
        raise HermesError(f"{path} is a symbolic link; hermes neither follows nor replaces it there: remove it.")
    if not path.exists():
        return {}
    data = read_json_object(path, limit, follow_symlinks=False)
    if data is None:
        raise HermesError(f"{path} cannot be read (damaged, over {limit} bytes, or not a file); hermes leaves it "
                          f"as it is: fix it or remove it.")
    return data


@contextmanager
def locked_record(path: Path, limit: int) -> Iterator[dict[str, Any]]:
    """The record under its lock, written back whole when the block ends without an error."""
    lock = file_lock(path)
    try:
        lock.acquire()
    except OSError as exc:  # the lock's place taken by a directory, a full disk, …
        raise HermesError(f"{lock.lock_file}: {exc.strerror or exc}; the gateway's records cannot be changed "
                          f"now.") from None
    try:
        data = read_record(path, limit)
        yield data
        atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1))
    finally:
        lock.release()
