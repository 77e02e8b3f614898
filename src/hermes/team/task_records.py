"""A team user's task records (`TaskRecords`) in the team's database, so that any replica answers
`tasks/get` for a task another one runs, and hands it the answers and cancels it is sent.

What a record says (the tool's result, its questions, its error) is sealed with the team key for
that user and task: the database never holds a user's results in clear. Answers handed to another
replica are sealed the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcp_types import INTERNAL_ERROR

from hermes.live.task_records import Pending, TaskRecord, TaskStatus
from hermes.team.records import StoredTask
from hermes.team.sealing import Sealer
from hermes.team.store import TeamStore

MAX_SHARED_RECORD = 16 * 1_048_576  # what one task's sealed record may weigh in the database


class StoreTaskRecords:
    shared = True

    def __init__(self, store: TeamStore, sealer: Sealer, user: str, *,
                 clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._sealer = sealer
        self._user = user
        self._clock = clock

    def _stored(self, record: TaskRecord, *, alive: float) -> StoredTask:
        sealed = self._sealer.seal(self._user, f"task/{record.task_id}", json.dumps(record.to_json()))
        return StoredTask(record.task_id, record.status.value, record.created_at, record.updated_at,
                          record.expires_at, alive, sealed)

    def _opened(self, task_id: str, sealed: str) -> Any:
        value = self._sealer.open(self._user, f"task/{task_id}", sealed)
        try:
            return json.loads(value) if value is not None else None
        except ValueError:
            return None

    async def create(self, record: TaskRecord) -> None:
        await self._store.create_task(self._user, self._stored(record, alive=record.created_at))

    async def save(self, record: TaskRecord) -> TaskRecord | None:
        stored = self._stored(record, alive=record.updated_at)
        if len(stored.sealed) > MAX_SHARED_RECORD:
            # Every replica must be able to answer with it: a result past the bound is said to be one.
            record = record.changed(TaskStatus.FAILED, at=record.updated_at, error={
                "code": INTERNAL_ERROR, "message": f"the result ({len(stored.sealed) // 1_048_576} MiB sealed) is "
                                                   f"larger than the team gateway keeps for a task "
                                                   f"({MAX_SHARED_RECORD // 1_048_576} MiB)"})
            stored = self._stored(record, alive=record.updated_at)
        return record if await self._store.save_task(self._user, stored) else None

    async def get(self, task_id: str) -> tuple[TaskRecord, float] | None:
        return self._record(await self._store.task(self._user, task_id, self._clock()))

    def _record(self, stored: StoredTask | None) -> tuple[TaskRecord, float] | None:
        if stored is None:
            return None
        data = self._opened(stored.task_id, stored.sealed)
        record = TaskRecord.from_json(stored.task_id, stored.status, stored.created, stored.updated,
                                      data if isinstance(data, dict) else {})
        return record, stored.alive

    async def cancel(self, task_id: str, at: float) -> TaskRecord | None:
        found = self._record(await self._store.cancel_task(self._user, task_id, at))
        return found[0] if found is not None else None

    async def answer(self, task_id: str, responses: dict[str, Any]) -> bool:
        sealed = self._sealer.seal(self._user, f"task/{task_id}", json.dumps(responses))
        return await self._store.answer_task(self._user, task_id, sealed)

    async def pending(self, task_ids: Sequence[str], alive_at: float) -> dict[str, Pending]:
        found = {}
        for task_id, inputs in (await self._store.take_task_inputs(self._user, task_ids, alive_at)).items():
            responses: dict[str, Any] = {}
            for sealed in inputs.sealed_answers:
                opened = self._opened(task_id, sealed)
                if isinstance(opened, dict):
                    responses.update(opened)
            found[task_id] = Pending(responses, inputs.cancelled)
        return found
