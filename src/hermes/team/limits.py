"""Calls per minute, per user, on one replica: a token bucket on a clock the caller gives.

Each replica keeps its own buckets; a coarse limit across replicas belongs at the proxy in front
(HAProxy's stick tables), which sees every request. The clock is passed in, so the rule is tested
without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimits:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, user: str, per_minute: int) -> float | None:
        """None when `user` may call now (one call is counted); else the seconds until they may."""
        now = self._clock()
        bucket = self._buckets.get(user)
        if bucket is None:
            bucket = self._buckets[user] = _Bucket(float(per_minute), now)
        rate = per_minute / 60.0
        bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.at) * rate)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        return (1.0 - bucket.tokens) / rate

    def forget(self, user: str) -> None:
        self._buckets.pop(user, None)
