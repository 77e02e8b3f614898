"""What one user may use: the team's rules that apply to them, put together (pure, no I/O).

A rule's subject is `*` (everyone), `group:<name>` or `user:<name>`. A user gets the servers every
applying rule names (a union of globs) and every applying rule's allow/ask/deny entries on top of
config.yaml's `permissions:`, where a deny anywhere still wins. The calls-per-minute limit is the
most specific one said: the user's own rule, else the highest of their groups', else `*`'s, else
the team default. A user no rule names gets no servers at all: access is given, never assumed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hermes.config.agent_settings import Permissions
from hermes.team.records import Rule, User

EVERYONE = "*"


def subjects_of(user: User) -> tuple[str, ...]:
    return (EVERYONE, *(f"group:{group}" for group in user.groups), f"user:{user.name}")


@dataclass(frozen=True)
class Access:
    servers: tuple[str, ...]  # globs of server names; empty: none
    permissions: Permissions
    calls_per_minute: int
    rules: tuple[str, ...]  # the subjects whose rules applied, for `hermes team whois`

    @property
    def anything(self) -> bool:
        return bool(self.servers)


def access_for(user: User, rules: Iterable[Rule], default_calls_per_minute: int) -> Access:
    wanted = subjects_of(user)
    applying = sorted((rule for rule in rules if rule.subject in wanted), key=lambda r: wanted.index(r.subject))
    servers: list[str] = []
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []
    for rule in applying:
        servers += [glob for glob in rule.servers if glob not in servers]
        allow += rule.allow
        ask += rule.ask
        deny += rule.deny
    return Access(tuple(servers), Permissions(tuple(allow), tuple(ask), tuple(deny)),
                  _limit(applying, default_calls_per_minute), tuple(rule.subject for rule in applying))


def _limit(applying: list[Rule], default: int) -> int:
    own = [r.calls_per_minute for r in applying if r.subject.startswith("user:") and r.calls_per_minute]
    groups = [r.calls_per_minute for r in applying if r.subject.startswith("group:") and r.calls_per_minute]
    everyone = [r.calls_per_minute for r in applying if r.subject == EVERYONE and r.calls_per_minute]
    for found in (own, groups, everyone):
        if found:
            return max(found)
    return default


def check_subject(subject: str) -> str | None:
    """What is wrong with a rule's subject, or None."""
    if subject == EVERYONE:
        return None
    kind, _, name = subject.partition(":")
    if kind not in ("group", "user") or not name:
        return f"'{subject}' is not a subject: write *, group:<name> or user:<name>"
    return None
