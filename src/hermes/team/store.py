"""The team gateway's storage seam: one `TeamStore` Protocol, whatever database is behind it.

`sql_store.SqlStore` implements it on SQLite (one machine, the default) and on PostgreSQL (many
replicas); `memory_store.MemoryStore` is the in-memory fake for rules that need no database. Nothing
above this seam learns which one is in use.

Credentials arrive here already sealed (`team.sealing`): the store never sees a secret in clear.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hermes.errors import HermesError
from hermes.team.records import AuditRecord, Rule, StoredTask, TaskInputs, User


class TeamStoreError(HermesError):
    """The database refused or could not be reached; one sentence, never the URL's password."""


class TeamStore(Protocol):
    async def migrate(self) -> int:
        """Bring the schema to the newest version (safe when replicas start at once); the version."""
        ...

    async def ping(self) -> None:
        """Raise `TeamStoreError` unless the database answers now (a replica's readiness)."""
        ...

    async def close(self) -> None: ...

    # -- users -----------------------------------------------------------------------------------

    async def add_user(self, user: User, key_hash: str | None) -> None:
        """Add a user (a `TeamStoreError` when the name, subject or key is taken)."""
        ...

    async def remove_user(self, name: str) -> bool:
        """Remove a user with their credentials; False when there was none."""
        ...

    async def users(self) -> list[User]: ...

    async def set_groups(self, name: str, groups: tuple[str, ...]) -> bool:
        """Put a user in exactly these groups; False when there is no such user."""
        ...

    async def user_by_key(self, key_hash: str) -> User | None: ...

    async def user_by_subject(self, subject: str) -> User | None: ...

    # -- policy ----------------------------------------------------------------------------------

    async def set_rule(self, rule: Rule) -> None:
        """Set the rule for `rule.subject`, replacing the one it had."""
        ...

    async def remove_rule(self, subject: str) -> bool: ...

    async def rules(self) -> list[Rule]: ...

    # -- credentials -----------------------------------------------------------------------------

    async def set_credential(self, user: str, name: str, sealed: str) -> None: ...

    async def remove_credential(self, user: str, name: str) -> bool: ...

    async def credentials(self, user: str) -> dict[str, str]:
        """A user's sealed credentials, by name."""
        ...

    # -- tool pins ---------------------------------------------------------------------------------

    async def pins(self, user: str) -> str | None:
        """A user's pins document (JSON), or None."""
        ...

    async def set_pins(self, user: str, document: str) -> None: ...

    # -- OAuth records and sign-ins ----------------------------------------------------------------

    async def oauth_records(self, user: str) -> dict[str, str]:
        """A user's sealed OAuth records for upstream servers, by name (`<server>/token`, `<server>/client`)."""
        ...

    async def set_oauth_record(self, user: str, name: str, sealed: str) -> None: ...

    async def start_signin(self, state: str, user: str, server: str) -> None:
        """A sign-in waits for the authorization server to send `state` back (to any replica)."""
        ...

    async def finish_signin(self, state: str, code: str | None, error: str | None) -> bool:
        """The redirect came back: its code (or error) for the sign-in of `state`; False when there is none."""
        ...

    async def signin_result(self, state: str) -> tuple[str | None, str | None] | None:
        """(code, error) once the redirect came back; None while it has not; drops nothing."""
        ...

    async def end_signin(self, state: str) -> None: ...

    # -- audit -----------------------------------------------------------------------------------

    async def record(self, records: Sequence[AuditRecord]) -> None: ...

    async def audit(self, user: str | None = None, limit: int = 100) -> list[AuditRecord]:
        """The newest records first (of one user, or everyone's)."""
        ...

    # -- tasks (the Tasks extension: any replica answers for a task another one runs) --------------

    async def create_task(self, user: str, task: StoredTask) -> None:
        """Keep a new task (and forget the tasks that expired)."""
        ...

    async def save_task(self, user: str, task: StoredTask) -> bool:
        """The task's new state, unless it ended already (False: cancelled elsewhere, or gone)."""
        ...

    async def task(self, user: str, task_id: str, now: float) -> StoredTask | None:
        """The user's task, unless unknown or expired."""
        ...

    async def cancel_task(self, user: str, task_id: str, at: float) -> StoredTask | None:
        """Mark the user's task cancelled unless it ended; the task as it is then (None: unknown)."""
        ...

    async def answer_task(self, user: str, task_id: str, sealed_answers: str) -> bool:
        """Hand answers to the replica running the task; False when the user has no such task."""
        ...

    async def take_task_inputs(self, user: str, task_ids: Sequence[str], alive: float) -> dict[str, TaskInputs]:
        """Take what was handed to these running tasks, and note that they run (at `alive`)."""
        ...
