"""An in-memory `TeamStore`: the fake beside the seam, for rules that need no database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hermes.team.records import AuditRecord, Rule, StoredTask, TaskInputs, User
from hermes.team.store import TeamStoreError


class MemoryStore:
    def __init__(self) -> None:
        self._users: dict[str, tuple[User, str | None]] = {}
        self._rules: dict[str, Rule] = {}
        self._credentials: dict[tuple[str, str], str] = {}
        self._audit: list[AuditRecord] = []
        self._oauth: dict[tuple[str, str], str] = {}
        self._pins: dict[str, str] = {}
        self._signins: dict[str, tuple[str, str, str | None, str | None]] = {}
        self._tasks: dict[tuple[str, str], StoredTask] = {}
        self._cancelled: set[tuple[str, str]] = set()
        self._inputs: dict[tuple[str, str], list[str]] = {}
        self.reachable = True  # a test turns the database off

    async def migrate(self) -> int:
        return 1

    async def ping(self) -> None:
        if not self.reachable:
            raise TeamStoreError("the team database does not answer")

    async def close(self) -> None:
        return None

    async def add_user(self, user: User, key_hash: str | None) -> None:
        for existing, existing_key in self._users.values():
            if existing.name == user.name or (user.subject and existing.subject == user.subject) or \
                    (key_hash and existing_key == key_hash):
                raise TeamStoreError(f"user '{user.name}' (or their subject or key) is already there")
        for key in [key for key in (*self._oauth, *self._credentials) if key[0] == user.name]:
            self._oauth.pop(key, None)
            self._credentials.pop(key, None)
        self._pins.pop(user.name, None)
        self._forget_tasks(user.name)
        self._users[user.name] = (user, key_hash)

    async def remove_user(self, name: str) -> bool:
        for key in [key for key in self._credentials if key[0] == name]:
            del self._credentials[key]
        for key in [key for key in self._oauth if key[0] == name]:
            del self._oauth[key]
        self._pins.pop(name, None)
        self._forget_tasks(name)
        return self._users.pop(name, None) is not None

    def _forget_tasks(self, user: str) -> None:
        for key in [key for key in self._tasks if key[0] == user]:
            self._tasks.pop(key)
            self._inputs.pop(key, None)
            self._cancelled.discard(key)

    async def users(self) -> list[User]:
        return [user for _, (user, _) in sorted(self._users.items())]

    async def set_groups(self, name: str, groups: tuple[str, ...]) -> bool:
        found = self._users.get(name)
        if found is None:
            return False
        self._users[name] = (User(found[0].name, groups, found[0].subject), found[1])
        return True

    async def user_by_key(self, key_hash: str) -> User | None:
        return next((user for user, key in self._users.values() if key == key_hash), None)

    async def user_by_subject(self, subject: str) -> User | None:
        return next((user for user, _ in self._users.values() if user.subject == subject), None)

    async def set_rule(self, rule: Rule) -> None:
        self._rules[rule.subject] = rule

    async def remove_rule(self, subject: str) -> bool:
        return self._rules.pop(subject, None) is not None

    async def rules(self) -> list[Rule]:
        return [rule for _, rule in sorted(self._rules.items())]

    async def set_credential(self, user: str, name: str, sealed: str) -> None:
        self._credentials[(user, name)] = sealed

    async def remove_credential(self, user: str, name: str) -> bool:
        return self._credentials.pop((user, name), None) is not None

    async def credentials(self, user: str) -> dict[str, str]:
        return {name: sealed for (owner, name), sealed in sorted(self._credentials.items()) if owner == user}

    async def pins(self, user: str) -> str | None:
        return self._pins.get(user)

    async def set_pins(self, user: str, document: str) -> None:
        self._pins[user] = document

    async def oauth_records(self, user: str) -> dict[str, str]:
        return {name: sealed for (owner, name), sealed in sorted(self._oauth.items()) if owner == user}

    async def set_oauth_record(self, user: str, name: str, sealed: str) -> None:
        self._oauth[(user, name)] = sealed

    async def start_signin(self, state: str, user: str, server: str) -> None:
        self._signins[state] = (user, server, None, None)

    async def finish_signin(self, state: str, code: str | None, error: str | None) -> bool:
        found = self._signins.get(state)
        if found is None or found[2] is not None or found[3] is not None:
            return False
        self._signins[state] = (found[0], found[1], code, error)
        return True

    async def signin_result(self, state: str) -> tuple[str | None, str | None] | None:
        found = self._signins.get(state)
        return None if found is None or (found[2] is None and found[3] is None) else (found[2], found[3])

    async def end_signin(self, state: str) -> None:
        self._signins.pop(state, None)

    async def record(self, records: Sequence[AuditRecord]) -> None:
        self._audit.extend(records)

    async def audit(self, user: str | None = None, limit: int = 100) -> list[AuditRecord]:
        found = [r for r in reversed(self._audit) if user is None or r.user == user]
        return found[:limit]

    async def create_task(self, user: str, task: StoredTask) -> None:
        for key in [key for key, found in self._tasks.items() if found.expires < task.created and not found.running]:
            del self._tasks[key]
        self._tasks[(user, task.task_id)] = task

    async def save_task(self, user: str, task: StoredTask) -> bool:
        found = self._tasks.get((user, task.task_id))
        if found is None or not found.running:
            return False
        self._tasks[(user, task.task_id)] = replace(found, status=task.status, sealed=task.sealed,
                                                    updated=task.updated, expires=task.expires)
        return True

    async def task(self, user: str, task_id: str, now: float) -> StoredTask | None:
        found = self._tasks.get((user, task_id))
        return found if found is not None and (found.expires > now or found.running) else None

    async def cancel_task(self, user: str, task_id: str, at: float) -> StoredTask | None:
        key = (user, task_id)
        found = self._tasks.get(key)
        if found is not None and found.running:
            self._cancelled.add(key)
            self._tasks[key] = found = replace(found, status="cancelled", updated=at,
                                               expires=at + (found.expires - found.updated))
        return found

    async def answer_task(self, user: str, task_id: str, sealed_answers: str) -> bool:
        if (user, task_id) not in self._tasks:
            return False
        self._inputs.setdefault((user, task_id), []).append(sealed_answers)
        return True

    async def take_task_inputs(self, user: str, task_ids: Sequence[str], alive: float) -> dict[str, TaskInputs]:
        taken = {}
        for task_id in task_ids:
            key = (user, task_id)
            if key in self._tasks:
                self._tasks[key] = replace(self._tasks[key], alive=alive)
            answers = tuple(self._inputs.pop(key, ()))
            if answers or key in self._cancelled:
                taken[task_id] = TaskInputs(answers, key in self._cancelled)
        return taken
