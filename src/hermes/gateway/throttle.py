"""Saying the same thing to the same place at most once per interval, in bounded memory.

A flood (a thousand messages to a busy room, a stranger writing over and over) must not become a
flood of the bot's own answers: platforms rate-limit a bot that does that, and the rooms that
matter would wait behind it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Hashable

MAX_KEYS = 10_000  # the oldest are forgotten first (at worst, one more answer to them)


class Throttle:
    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._last: OrderedDict[Hashable, float] = OrderedDict()

    def allows(self, key: Hashable) -> bool:
        """True (and remembered) when nothing was said to `key` within the interval."""
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._seconds:
            return False
        self._last[key] = now
        self._last.move_to_end(key)
        while len(self._last) > MAX_KEYS:
            self._last.popitem(last=False)
        return True
