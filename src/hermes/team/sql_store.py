"""`TeamStore` on SQL: the same statements on SQLite and PostgreSQL (see `database`)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes.errors import ConfigError
from hermes.team.database import Database
from hermes.team.migrations import MIGRATIONS
from hermes.team.records import RUNNING_STATUSES, AuditRecord, Outcome, Rule, StoredTask, TaskInputs, User

_USER = "SELECT name, groups_json, subject FROM team_users"
_RULE = "SELECT subject, servers_json, allow_json, ask_json, deny_json, calls_per_minute FROM team_rules"
_AUDIT = "SELECT at, user_name, tool, server, outcome, duration_ms, replica FROM team_audit"
_TASK = "SELECT task_id, status, created, updated, expires, alive, sealed FROM team_tasks"
_RUNNING = f"status IN ({', '.join(repr(status) for status in RUNNING_STATUSES)})"
_INPUTS_AT_ONCE = 256  # answers taken in one look; a flood of them is taken over several


def _texts(raw: str) -> tuple[str, ...]:
    return tuple(str(item) for item in json.loads(raw))


def _user(row: tuple[Any, ...]) -> User:
    return User(row[0], _texts(row[1]), row[2])


def _task(row: tuple[Any, ...]) -> StoredTask:
    return StoredTask(str(row[0]), str(row[1]), float(row[2]), float(row[3]), float(row[4]), float(row[5]),
                      str(row[6]))


class SqlStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def migrate(self) -> int:
        return await self.db.migrate(MIGRATIONS)

    async def ping(self) -> None:
        await self.db.fetch("SELECT 1")

    async def close(self) -> None:
        await self.db.close()

    async def add_user(self, user: User, key_hash: str | None) -> None:
        if not await self.db.fetch("SELECT 1 FROM team_users WHERE name = %s", (user.name,)):
            # What someone of that name left (a token user's sign-ins) is not the new user's.
            await self.db.execute("DELETE FROM team_oauth WHERE user_name = %s", (user.name,))
            await self.db.execute("DELETE FROM team_credentials WHERE user_name = %s", (user.name,))
            await self.db.execute("DELETE FROM team_pins WHERE user_name = %s", (user.name,))
            await self._forget_tasks(user.name)
        await self.db.execute("INSERT INTO team_users VALUES (%s, %s, %s, %s, %s)",
                              (user.name, json.dumps(list(user.groups)), user.subject, key_hash, time.time()))

    async def remove_user(self, name: str) -> bool:
        await self.db.execute("DELETE FROM team_credentials WHERE user_name = %s", (name,))
        await self.db.execute("DELETE FROM team_oauth WHERE user_name = %s", (name,))
        await self.db.execute("DELETE FROM team_pins WHERE user_name = %s", (name,))
        await self._forget_tasks(name)
        return await self.db.execute("DELETE FROM team_users WHERE name = %s", (name,)) > 0

    async def _forget_tasks(self, user: str) -> None:
        await self.db.execute("DELETE FROM team_task_inputs WHERE user_name = %s", (user,))
        await self.db.execute("DELETE FROM team_tasks WHERE user_name = %s", (user,))

    async def users(self) -> list[User]:
        return [_user(row) for row in await self.db.fetch(f"{_USER} ORDER BY name")]

    async def set_groups(self, name: str, groups: tuple[str, ...]) -> bool:
        return await self.db.execute("UPDATE team_users SET groups_json = %s WHERE name = %s",
                                     (json.dumps(list(groups)), name)) > 0

    async def user_by_key(self, key_hash: str) -> User | None:
        rows = await self.db.fetch(f"{_USER} WHERE key_hash = %s", (key_hash,))
        return _user(rows[0]) if rows else None

    async def user_by_subject(self, subject: str) -> User | None:
        rows = await self.db.fetch(f"{_USER} WHERE subject = %s", (subject,))
        return _user(rows[0]) if rows else None

    async def set_rule(self, rule: Rule) -> None:
        values = (rule.subject, json.dumps(list(rule.servers)), json.dumps(list(rule.allow)),
                  json.dumps(list(rule.ask)), json.dumps(list(rule.deny)), rule.calls_per_minute)
        # Both dialects know this upsert (SQLite since 3.24).
        await self.db.execute(
            "INSERT INTO team_rules VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (subject) DO UPDATE SET "
            "servers_json = excluded.servers_json, allow_json = excluded.allow_json, ask_json = excluded.ask_json, "
            "deny_json = excluded.deny_json, calls_per_minute = excluded.calls_per_minute", values)

    async def remove_rule(self, subject: str) -> bool:
        return await self.db.execute("DELETE FROM team_rules WHERE subject = %s", (subject,)) > 0

    async def rules(self) -> list[Rule]:
        return [Rule(row[0], _texts(row[1]), _texts(row[2]), _texts(row[3]), _texts(row[4]),
                     None if row[5] is None else int(row[5]))
                for row in await self.db.fetch(f"{_RULE} ORDER BY subject")]

    async def set_credential(self, user: str, name: str, sealed: str) -> None:
        await self.db.execute(
            "INSERT INTO team_credentials VALUES (%s, %s, %s, %s) ON CONFLICT (user_name, name) DO UPDATE SET "
            "sealed = excluded.sealed, updated = excluded.updated", (user, name, sealed, time.time()))

    async def remove_credential(self, user: str, name: str) -> bool:
        return await self.db.execute("DELETE FROM team_credentials WHERE user_name = %s AND name = %s",
                                     (user, name)) > 0

    async def credentials(self, user: str) -> dict[str, str]:
        rows = await self.db.fetch("SELECT name, sealed FROM team_credentials WHERE user_name = %s ORDER BY name",
                                   (user,))
        return {str(name): str(sealed) for name, sealed in rows}

    async def pins(self, user: str) -> str | None:
        rows = await self.db.fetch("SELECT pins_json FROM team_pins WHERE user_name = %s", (user,))
        return str(rows[0][0]) if rows else None

    async def set_pins(self, user: str, document: str) -> None:
        await self.db.execute(
            "INSERT INTO team_pins VALUES (%s, %s, %s) ON CONFLICT (user_name) DO UPDATE SET "
            "pins_json = excluded.pins_json, updated = excluded.updated", (user, document, time.time()))

    async def oauth_records(self, user: str) -> dict[str, str]:
        rows = await self.db.fetch("SELECT name, sealed FROM team_oauth WHERE user_name = %s ORDER BY name", (user,))
        return {str(name): str(sealed) for name, sealed in rows}

    async def set_oauth_record(self, user: str, name: str, sealed: str) -> None:
        await self.db.execute(
            "INSERT INTO team_oauth VALUES (%s, %s, %s, %s) ON CONFLICT (user_name, name) DO UPDATE SET "
            "sealed = excluded.sealed, updated = excluded.updated", (user, name, sealed, time.time()))

    async def start_signin(self, state: str, user: str, server: str) -> None:
        # Sign-ins nobody finished within a day are gone by the next one.
        await self.db.execute("DELETE FROM team_signins WHERE created < %s", (time.time() - 86_400,))
        await self.db.execute("INSERT INTO team_signins (state, user_name, server, created) VALUES (%s, %s, %s, %s)",
                              (state, user, server, time.time()))

    async def finish_signin(self, state: str, code: str | None, error: str | None) -> bool:
        return await self.db.execute("UPDATE team_signins SET code = %s, error = %s WHERE state = %s AND code IS NULL "
                                     "AND error IS NULL", (code, error, state)) > 0

    async def signin_result(self, state: str) -> tuple[str | None, str | None] | None:
        rows = await self.db.fetch("SELECT code, error FROM team_signins WHERE state = %s", (state,))
        if not rows or (rows[0][0] is None and rows[0][1] is None):
            return None
        return rows[0][0], rows[0][1]

    async def end_signin(self, state: str) -> None:
        await self.db.execute("DELETE FROM team_signins WHERE state = %s", (state,))

    async def record(self, records: Sequence[AuditRecord]) -> None:
        if not records:
            return
        placeholders = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(records))
        values = [v for r in records for v in (r.at, r.user, r.tool, r.server, r.outcome.value, r.duration_ms,
                                                r.replica)]
        await self.db.execute("INSERT INTO team_audit (at, user_name, tool, server, outcome, duration_ms, replica) "
                              f"VALUES {placeholders}", values)

    async def audit(self, user: str | None = None, limit: int = 100) -> list[AuditRecord]:
        where, params = ("WHERE user_name = %s ", [user]) if user is not None else ("", [])
        rows = await self.db.fetch(f"{_AUDIT} {where}ORDER BY at DESC, id DESC LIMIT %s", [*params, limit])
        return [AuditRecord(float(r[0]), r[1], r[2], r[3], Outcome(r[4]), float(r[5]), r[6]) for r in rows]


    async def create_task(self, user: str, task: StoredTask) -> None:
        await self.db.execute(f"DELETE FROM team_tasks WHERE expires < %s AND NOT {_RUNNING}", (task.created,))
        # Answers nobody took within a day belong to tasks that are gone.
        await self.db.execute("DELETE FROM team_task_inputs WHERE at < %s", (task.created - 86_400,))
        await self.db.execute("INSERT INTO team_tasks VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 0)",
                              (user, task.task_id, task.status, task.sealed, task.created, task.updated,
                               task.expires, task.alive))

    async def save_task(self, user: str, task: StoredTask) -> bool:
        return await self.db.execute(
            f"UPDATE team_tasks SET status = %s, sealed = %s, updated = %s, expires = %s WHERE user_name = %s "
            f"AND task_id = %s AND {_RUNNING}", (task.status, task.sealed, task.updated, task.expires, user,
                                                   task.task_id)) > 0

    async def task(self, user: str, task_id: str, now: float) -> StoredTask | None:
        rows = await self.db.fetch(f"{_TASK} WHERE user_name = %s AND task_id = %s AND (expires > %s OR {_RUNNING})",
                                   (user, task_id, now))
        return _task(rows[0]) if rows else None

    async def cancel_task(self, user: str, task_id: str, at: float) -> StoredTask | None:
        # Kept as long after the cancel as after any change (the right side reads the row as it was).
        await self.db.execute(f"UPDATE team_tasks SET status = 'cancelled', cancelled = 1, updated = %s, "
                              f"expires = %s + (expires - updated) WHERE user_name = %s AND task_id = %s "
                              f"AND {_RUNNING}", (at, at, user, task_id))
        return await self.task(user, task_id, at)

    async def answer_task(self, user: str, task_id: str, sealed_answers: str) -> bool:
        if not await self.db.fetch("SELECT 1 FROM team_tasks WHERE user_name = %s AND task_id = %s", (user, task_id)):
            return False
        await self.db.execute("INSERT INTO team_task_inputs (user_name, task_id, sealed, at) VALUES (%s, %s, %s, %s)",
                              (user, task_id, sealed_answers, time.time()))
        return True

    async def take_task_inputs(self, user: str, task_ids: Sequence[str], alive: float) -> dict[str, TaskInputs]:
        if not task_ids:
            return {}
        marks = ", ".join(["%s"] * len(task_ids))
        await self.db.execute(f"UPDATE team_tasks SET alive = %s WHERE user_name = %s AND task_id IN ({marks})",
                              (alive, user, *task_ids))
        cancelled = {str(row[0]) for row in await self.db.fetch(
            f"SELECT task_id FROM team_tasks WHERE user_name = %s AND cancelled = 1 AND task_id IN ({marks})",
            (user, *task_ids))}
        rows = await self.db.fetch(f"SELECT id, task_id, sealed FROM team_task_inputs WHERE user_name = %s AND "
                                   f"task_id IN ({marks}) ORDER BY id LIMIT {_INPUTS_AT_ONCE}", (user, *task_ids))
        if rows:
            # Only what was read is taken: answers that arrive meanwhile wait for the next look.
            taken = ", ".join(["%s"] * len(rows))
            await self.db.execute(f"DELETE FROM team_task_inputs WHERE id IN ({taken})", [row[0] for row in rows])
        answers: dict[str, list[str]] = {}
        for _, task_id, sealed in rows:
            answers.setdefault(str(task_id), []).append(str(sealed))
        return {task_id: TaskInputs(tuple(answers.get(task_id, ())), task_id in cancelled)
                for task_id in sorted(cancelled | set(answers))}

def open_store(database: str | None, default_file: Path, config: Path | None = None) -> SqlStore:
    """The store a `team.database` setting names: PostgreSQL for a `postgresql://` URL, else SQLite:
    the default file, or `sqlite:///path` (relative to HERMES_HOME; `sqlite:////path` is absolute,
    as SQLAlchemy reads them)."""
    if database and database.startswith(("postgresql://", "postgres://")):
        try:
            from hermes.team.postgres_db import PostgresDatabase, shown

            shown(database)  # a URL that does not parse is the setting's fault, said as such
            return SqlStore(PostgresDatabase(database))
        except ValueError:
            raise ConfigError("is not a URL that can be read (postgresql://user:password@host:port/name)",
                              path=config, key="team.database") from None
        except ImportError:
            raise ConfigError("names PostgreSQL, whose driver comes with the team extra: "
                              "pip install 'hermes-mcp-host[team]'", path=config, key="team.database") from None
    from hermes.team.sqlite_db import SqliteDatabase

    if database and database.startswith("sqlite:///"):
        return SqlStore(SqliteDatabase(default_file.parent / database.removeprefix("sqlite:///")))
    if database:
        raise ConfigError("must be a postgresql:// URL or sqlite:///path (or left out: HERMES_HOME/team.db)",
                          path=config, key="team.database")
    return SqlStore(SqliteDatabase(default_file))
