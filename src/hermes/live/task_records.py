"""The records of the tasks `serve` runs for its clients (the Tasks extension, 2026-07-28), and where
they are kept.

A record is what `tasks/get` answers: the task's status, and once it has one, its questions
(`input_required`), its result (`completed`) or its error (`failed`). The process running a task
writes its record at each change; any process sharing the records answers `tasks/get` from it, and
hands a `tasks/update` (answers) or `tasks/cancel` to the process running the task through it.

`TaskRecords` is the seam: `MemoryTaskRecords` keeps them for one process (`serve` for one user,
and the fake of the seam); the team gateway keeps each user's in its database, so that any replica
answers for a task another one runs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, Protocol

import mcp_types as types


class TaskStatus(StrEnum):
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class TaskRecord:
    task_id: str
    status: TaskStatus
    created_at: float  # seconds since the epoch
    updated_at: float
    ttl_ms: int
    poll_interval_ms: int
    status_message: str | None = None
    result: dict[str, Any] | None = None  # the tool's result, as its client reads it (completed)
    error: dict[str, Any] | None = None  # a JSON-RPC error object (failed)
    input_requests: dict[str, Any] | None = None  # the questions waiting for answers (input_required)

    @property
    def expires_at(self) -> float:
        """`ttl_ms` after its last change: a task that runs long keeps its record, and its result
        stays readable for the whole ttl after it ended."""
        return self.updated_at + self.ttl_ms / 1000

    def changed(self, status: TaskStatus, *, at: float, message: str | None = None,
                result: dict[str, Any] | None = None, error: dict[str, Any] | None = None,
                input_requests: dict[str, Any] | None = None) -> TaskRecord:
        return replace(self, status=status, updated_at=at, status_message=message, result=result, error=error,
                       input_requests=input_requests)

    def task(self) -> dict[str, Any]:
        """The fields every shape of a task carries (the `Task` of the extension), on the wire."""
        shown: dict[str, Any] = {"taskId": self.task_id, "status": self.status.value,
                                 "createdAt": _iso(self.created_at), "lastUpdatedAt": _iso(self.updated_at),
                                 "ttlMs": self.ttl_ms, "pollIntervalMs": self.poll_interval_ms}
        if self.status_message and not self.status.terminal:
            shown["statusMessage"] = self.status_message
        return shown

    def detailed(self) -> dict[str, Any]:
        """What `tasks/get` answers: the task, and what its status carries."""
        shown = self.task()
        if self.status is TaskStatus.COMPLETED and self.result is not None:
            shown["result"] = self.result
        elif self.status is TaskStatus.FAILED and self.error is not None:
            shown["error"] = self.error
        elif self.status is TaskStatus.INPUT_REQUIRED and self.input_requests:
            shown["inputRequests"] = self.input_requests
        return shown

    def to_json(self) -> dict[str, Any]:
        """Everything but the id, status and times, for a database's one column."""
        return {"ttl_ms": self.ttl_ms, "poll_interval_ms": self.poll_interval_ms, "message": self.status_message,
                "result": self.result, "error": self.error, "input_requests": self.input_requests}

    @classmethod
    def from_json(cls, task_id: str, status: str, created_at: float, updated_at: float,
                  data: dict[str, Any]) -> TaskRecord:
        def mapping(key: str) -> dict[str, Any] | None:
            value = data.get(key)
            return value if isinstance(value, dict) else None

        message = data.get("message")
        return cls(task_id, TaskStatus(status), created_at, updated_at, int(data.get("ttl_ms") or 0),
                   int(data.get("poll_interval_ms") or 0), message if isinstance(message, str) else None,
                   mapping("result"), mapping("error"), mapping("input_requests"))


class TaskCreated(types.Result):
    """A `tools/call` answered with a task (`CreateTaskResult`: a flat `Result & Task`)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int
    poll_interval_ms: int
    status_message: str | None = None

    @classmethod
    def of(cls, record: TaskRecord) -> TaskCreated:
        return cls.model_validate(record.task())


@dataclass(frozen=True)
class Pending:
    """What other processes handed to the one running a task: answers to its questions, a cancel."""

    responses: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False


class TaskRecords(Protocol):
    @property
    def shared(self) -> bool:
        """Whether other processes read these records (and hand answers and cancels through them)."""
        ...

    async def create(self, record: TaskRecord) -> None:
        """Keep a new task's record; once this returns, `get` finds it (from any process sharing them)."""
        ...

    async def save(self, record: TaskRecord) -> TaskRecord | None:
        """Write the running task's new state; the record as written (a store may keep less: a result
        too large to share becomes an error), None when its record is already terminal (cancelled
        from elsewhere) or gone: nothing was written."""
        ...

    async def get(self, task_id: str) -> tuple[TaskRecord, float] | None:
        """The record and when its process last said it runs it; None when unknown or expired."""
        ...

    async def cancel(self, task_id: str, at: float) -> TaskRecord | None:
        """Mark a task cancelled (a terminal one stays as it is); its record, None when unknown."""
        ...

    async def answer(self, task_id: str, responses: dict[str, Any]) -> bool:
        """Hand answers to the process running the task; False when unknown."""
        ...

    async def pending(self, task_ids: Sequence[str], alive_at: float) -> dict[str, Pending]:
        """Take what was handed to these tasks (answers, cancels); say that this process still runs them."""
        ...


MAX_KEPT = 1024  # records one process keeps in memory; past that the longest-ended go first
MAX_KEPT_BYTES = 64 * 1024 * 1024  # and what their results and errors weigh, at most


class MemoryTaskRecords:
    """The records of one process's tasks, in memory: nothing else reads them. At most `MAX_KEPT`,
    weighing at most `MAX_KEPT_BYTES` (a client that starts task after task, each with a large
    result, cannot grow them without bound): past that, ended tasks are forgotten, longest-ended
    first. A running task's record is never forgotten."""

    shared = False

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._records: dict[str, TaskRecord] = {}
        self._weights: dict[str, int] = {}
        self._alive: dict[str, float] = {}
        self._responses: dict[str, dict[str, Any]] = {}
        self._cancelled: set[str] = set()

    def _drop(self, task_id: str) -> None:
        self._records.pop(task_id, None)
        self._weights.pop(task_id, None)
        self._alive.pop(task_id, None)
        self._responses.pop(task_id, None)
        self._cancelled.discard(task_id)

    def _make_room(self) -> None:
        """Forget what expired, then ended tasks (longest-ended first) while over a bound."""
        now = self._clock()
        ended = sorted((r for r in self._records.values() if r.status.terminal), key=lambda r: r.updated_at)
        weight = sum(self._weights.values())
        for record in ended:
            if record.expires_at > now and len(self._records) < MAX_KEPT and weight <= MAX_KEPT_BYTES:
                break
            weight -= self._weights.get(record.task_id, 0)
            self._drop(record.task_id)

    async def create(self, record: TaskRecord) -> None:
        self._make_room()
        self._records[record.task_id] = record
        self._alive[record.task_id] = record.created_at

    async def save(self, record: TaskRecord) -> TaskRecord | None:
        stored = self._records.get(record.task_id)
        if stored is None or stored.status.terminal:
            return None
        self._records[record.task_id] = record
        if record.status.terminal:
            self._weights[record.task_id] = len(json.dumps([record.result, record.error]))
            self._make_room()
        return record

    async def get(self, task_id: str) -> tuple[TaskRecord, float] | None:
        record = self._records.get(task_id)
        if record is None or (record.status.terminal and record.expires_at <= self._clock()):
            return None
        return record, self._alive.get(task_id, record.created_at)

    async def cancel(self, task_id: str, at: float) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is None or record.status.terminal:
            return record
        self._cancelled.add(task_id)
        self._records[task_id] = record = record.changed(TaskStatus.CANCELLED, at=at)
        return record

    async def answer(self, task_id: str, responses: dict[str, Any]) -> bool:
        if task_id not in self._records:
            return False
        self._responses.setdefault(task_id, {}).update(responses)
        return True

    async def pending(self, task_ids: Sequence[str], alive_at: float) -> dict[str, Pending]:
        found = {}
        for task_id in task_ids:
            self._alive[task_id] = alive_at
            responses = self._responses.pop(task_id, {})
            if responses or task_id in self._cancelled:
                found[task_id] = Pending(responses, task_id in self._cancelled)
        return found
