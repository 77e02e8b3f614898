"""The team database's schema, as numbered migrations applied in order, each exactly once.

A migration is never edited after it shipped: a change is a new one. Both dialects run the same
statements; the one difference (an auto-numbered key) is a placeholder. Written by hand: the
schema is a few tables, and the registries' migration tools (Alembic, yoyo) bring an ORM or a
synchronous driver of their own for what is a dozen lines here.
"""

from __future__ import annotations

from dataclasses import dataclass

# Auto-numbered primary keys: the one thing SQLite and PostgreSQL spell differently.
SERIAL = {"sqlite": "INTEGER PRIMARY KEY", "postgresql": "BIGSERIAL PRIMARY KEY"}

VERSION_TABLE = ("CREATE TABLE IF NOT EXISTS team_schema (version INTEGER PRIMARY KEY, summary TEXT NOT NULL, "
                 "applied DOUBLE PRECISION NOT NULL)")


@dataclass(frozen=True)
class Migration:
    version: int
    summary: str
    statements: tuple[str, ...]

    def for_dialect(self, dialect: str) -> tuple[str, ...]:
        return tuple(statement.replace("{serial}", SERIAL[dialect]) for statement in self.statements)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "users, policy rules, sealed credentials and the audit record", (
        "CREATE TABLE team_users (name TEXT PRIMARY KEY, groups_json TEXT NOT NULL, subject TEXT UNIQUE, "
        "key_hash TEXT UNIQUE, created DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE team_rules (subject TEXT PRIMARY KEY, servers_json TEXT NOT NULL, allow_json TEXT NOT NULL, "
        "ask_json TEXT NOT NULL, deny_json TEXT NOT NULL, calls_per_minute INTEGER)",
        "CREATE TABLE team_credentials (user_name TEXT NOT NULL, name TEXT NOT NULL, sealed TEXT NOT NULL, "
        "updated DOUBLE PRECISION NOT NULL, PRIMARY KEY (user_name, name))",
        "CREATE TABLE team_audit (id {serial}, at DOUBLE PRECISION NOT NULL, user_name TEXT NOT NULL, "
        "tool TEXT NOT NULL, server TEXT, outcome TEXT NOT NULL, duration_ms DOUBLE PRECISION NOT NULL, "
        "replica TEXT NOT NULL)",
        "CREATE INDEX team_audit_user_at ON team_audit (user_name, at)",
    )),
    Migration(2, "users' OAuth records for upstream servers (sealed), and sign-ins in progress", (
        "CREATE TABLE team_oauth (user_name TEXT NOT NULL, name TEXT NOT NULL, sealed TEXT NOT NULL, "
        "updated DOUBLE PRECISION NOT NULL, PRIMARY KEY (user_name, name))",
        "CREATE TABLE team_signins (state TEXT PRIMARY KEY, user_name TEXT NOT NULL, server TEXT NOT NULL, "
        "created DOUBLE PRECISION NOT NULL, code TEXT, error TEXT)",
    )),
    Migration(3, "users' tool pins (the definitions they have accepted), on every replica alike", (
        "CREATE TABLE team_pins (user_name TEXT PRIMARY KEY, pins_json TEXT NOT NULL, "
        "updated DOUBLE PRECISION NOT NULL)",
    )),
    Migration(4, "the tasks replicas run for users (sealed records), and what other replicas hand to them", (
        "CREATE TABLE team_tasks (user_name TEXT NOT NULL, task_id TEXT NOT NULL, status TEXT NOT NULL, "
        "sealed TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL, "
        "expires DOUBLE PRECISION NOT NULL, alive DOUBLE PRECISION NOT NULL, cancelled INTEGER NOT NULL, "
        "PRIMARY KEY (user_name, task_id))",
        "CREATE INDEX team_tasks_expires ON team_tasks (expires)",
        "CREATE TABLE team_task_inputs (id {serial}, user_name TEXT NOT NULL, task_id TEXT NOT NULL, "
        "sealed TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX team_task_inputs_task ON team_task_inputs (user_name, task_id)",
    )),
)

NEWEST = MIGRATIONS[-1].version
