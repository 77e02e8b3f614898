"""What each server offered when it was last connected, kept between sessions (a small cache).

Read by hidden-server lines (how many tools a server that is down would bring) and by shell
completion (tool names, without starting any server). No SDK import: completion runs on every Tab.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from hermes.files import atomic_write, read_json_object


class KnownToolCounts:
    """What each server offered when it was last connected: how many tools (for hidden-server lines)
    and their registered names (for shell completion, which must not start servers to know them)."""

    LIMIT = 4 * 1024 * 1024  # a cache: past this it is ignored, never read whole

    def __init__(self, path: Path) -> None:
        self.path = path
        self.counts: dict[str, int] = {}
        self.names: dict[str, list[str]] = {}
        for server, value in (read_json_object(path, self.LIMIT, follow_symlinks=False) or {}).items():
            if type(value) is int and value >= 0:  # the older shape: a count alone
                self.counts[server] = value
            elif isinstance(value, list) and all(isinstance(n, str) for n in value):
                self.counts[server] = len(value)
                self.names[server] = value

    def remember(self, server: str, names: list[str]) -> None:
        if self.names.get(server) == names:
            return
        self.counts[server] = len(names)
        self.names[server] = names
        data = {s: self.names.get(s, count) for s, count in self.counts.items()}
        with contextlib.suppress(OSError):  # a cache: losing it only loses a count in a hidden-server line
            atomic_write(self.path, json.dumps(data, sort_keys=True) + "\n")


