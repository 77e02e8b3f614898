"""What the team store keeps: users, policy rules, audit records and tasks (plain values, no behaviour)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    # The identity provider's value of the configured user claim that names this user (an OAuth
    # sign-in); None for a user who uses a static key only.
    subject: str | None = None


class Outcome(StrEnum):
    OK = "ok"
    ERROR = "error"  # the tool ran and said it failed, or its server could not be reached
    DENIED = "denied"  # policy, or a user who did not accept an ask
    LIMITED = "rate_limited"


@dataclass(frozen=True)
class Rule:
    """The policy for one subject: `*` (everyone), `group:<name>` or `user:<name>`."""

    subject: str
    servers: tuple[str, ...] = ()  # globs of server names this subject may use
    allow: tuple[str, ...] = ()  # the agent's allow / ask / deny vocabulary, on tool names
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    calls_per_minute: int | None = None


@dataclass(frozen=True)
class AuditRecord:
    """One tool call: who, which tool, how it ended, how long it took; never its arguments."""

    at: float  # seconds since the epoch
    user: str
    tool: str
    server: str | None
    outcome: Outcome
    duration_ms: float
    replica: str


@dataclass(frozen=True)
class StoredTask:
    """A task `serve` runs for a user, as the database keeps it: what `tasks/get` answers is in
    `sealed` (the replica's record of it, sealed with the team key for that user and task)."""

    task_id: str
    status: str  # one of RUNNING_STATUSES, or completed, failed, cancelled
    created: float  # seconds since the epoch
    updated: float
    expires: float
    alive: float  # when the replica running it last said so
    sealed: str

    @property
    def running(self) -> bool:
        """Not ended: it may still change, and its record never expires."""
        return self.status in RUNNING_STATUSES


RUNNING_STATUSES = ("working", "input_required")


@dataclass(frozen=True)
class TaskInputs:
    """What other replicas handed to a running task: sealed answers to its questions, a cancel."""

    sealed_answers: tuple[str, ...] = ()
    cancelled: bool = False
