"""Each call a team user makes: limited, timed, counted, and written to the audit record.

The audit record says who called which tool of which server, how it ended and how long it took;
never the arguments or the result (they may hold anything). A call's answer waits until its record
is written (group commit: the records of calls ending together go in one statement), so a replica
killed right after answering loses no record of a call it acknowledged. A database that is away
for longer than `DURABLE_WAIT` no longer holds answers back: their records stay queued (bounded:
the oldest are dropped first, and counted) and are written once it is back.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from hermes.team.limits import RateLimits
from hermes.team.metrics import Metrics
from hermes.team.records import AuditRecord, Outcome
from hermes.team.store import TeamStore, TeamStoreError
from hermes.team.wakeups import Wakeups
from hermes.tools.call_result import CallResult, Declined, Shown
from hermes.tools.call_result import Outcome as CallOutcome

_OUTCOMES = {CallOutcome.OK: Outcome.OK, CallOutcome.DECLINED: Outcome.DENIED}
_QUEUE_LIMIT = 100_000
_BATCH = 500
DURABLE_WAIT = 5.0
_NAME_LIMIT = 256


class AuditWriter:
    def __init__(self, store: TeamStore, metrics: Metrics, *, retry_after: float = 1.0) -> None:
        self._store = store
        self._metrics = metrics
        self._queue: deque[tuple[AuditRecord, anyio.Event]] = deque()
        self._wakeups = Wakeups(self.flush)
        self.run = self._wakeups.run
        self._retry_after = retry_after

    async def add(self, record: AuditRecord) -> None:
        """Queue `record`; return once it is written, or after `DURABLE_WAIT` with it still queued."""
        if len(self._queue) >= _QUEUE_LIMIT:
            self._queue.popleft()[1].set()
            self._metrics.audit_dropped.inc()
        written = anyio.Event()
        self._queue.append((record, written))
        self._metrics.audit_pending.set(len(self._queue))
        self._wakeups.wake()
        with anyio.move_on_after(DURABLE_WAIT):
            await written.wait()

    async def flush(self) -> None:
        while self._queue:
            batch = [self._queue[i] for i in range(min(_BATCH, len(self._queue)))]
            try:
                await self._store.record([record for record, _ in batch])
            except TeamStoreError:
                await anyio.sleep(self._retry_after)  # the database is away: try again shortly
                continue
            for _ in batch:
                self._queue.popleft()[1].set()
            self._metrics.audit_pending.set(len(self._queue))


@dataclass
class CallRecorder:
    """One user's calls on this replica (a `live.forwarding.CallRecorder`)."""

    user: str
    per_minute: int
    limits: RateLimits
    writer: AuditWriter
    metrics: Metrics
    replica: str

    async def call(self, tool: str, server: str | None, run: Callable[[], Awaitable[CallResult]]) -> CallResult:
        wait = self.limits.take(self.user, self.per_minute)
        if wait is not None:
            await self._record(tool, server, Outcome.LIMITED, 0.0)
            return Declined(Shown(f"Not run: {self.user} may make {self.per_minute} calls a minute here; "
                                  f"try again in {max(1, round(wait))} s."))
        started = time.perf_counter()
        try:
            result = await run()
        except BaseException:
            with anyio.CancelScope(shield=True), anyio.move_on_after(DURABLE_WAIT):
                await self._record(tool, server, Outcome.ERROR, (time.perf_counter() - started) * 1000)
            raise
        await self._record(tool, server, _OUTCOMES.get(result.outcome, Outcome.ERROR),
                           (time.perf_counter() - started) * 1000)
        return result

    async def _record(self, tool: str, server: str | None, outcome: Outcome, duration_ms: float) -> None:
        self.metrics.calls.labels(outcome=outcome.value).inc()
        if outcome is not Outcome.LIMITED:
            self.metrics.call_seconds.observe(duration_ms / 1000)
        # A caller names the tool: a name no tool has is recorded too, but never at any length.
        await self.writer.add(AuditRecord(time.time(), self.user, tool[:_NAME_LIMIT], server, outcome,
                                          round(duration_ms, 3), self.replica))

