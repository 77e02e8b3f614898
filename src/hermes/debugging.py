"""Whether this command runs with `hermes --debug` (or HERMES_DEBUG set by hand): its log then
also goes to stderr. An environment variable, so the session's logging and in-process runs read
the same switch, and the command takes it back when it ends."""

from __future__ import annotations

import os

DEBUG_VARIABLE = "HERMES_DEBUG"


def debugging() -> bool:
    return os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")
