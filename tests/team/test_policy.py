"""Which servers and tools a team user may use, and how often (pure rules, a clock passed in)."""

from __future__ import annotations

from hermes.config.agent_settings import Permissions
from hermes.team.limits import RateLimits
from hermes.team.policy import access_for, check_subject
from hermes.team.records import Rule, User

RULES = [
    Rule("*", ("docs",), deny=("mcp__*__delete_*",)),
    Rule("group:dev", ("github", "docs"), ask=("*_write",), calls_per_minute=60),
    Rule("group:ops", ("k8s-*",), calls_per_minute=200),
    Rule("user:carol", ("billing",), allow=("mcp__billing__read",), calls_per_minute=5),
    Rule("user:someone-else", ("secret-server",)),
]


def test_a_user_gets_the_union_of_servers_and_every_rule_of_their_subjects() -> None:
    access = access_for(User("ann", ("dev", "ops")), RULES, 120)
    assert access.servers == ("docs", "github", "k8s-*")
    assert access.permissions == Permissions((), ("*_write",), ("mcp__*__delete_*",))
    assert access.rules == ("*", "group:dev", "group:ops")
    assert access.calls_per_minute == 200  # the highest of their groups'


def test_the_user_s_own_limit_wins_over_their_groups() -> None:
    access = access_for(User("carol", ("ops",)), RULES, 120)
    assert access.calls_per_minute == 5 and "billing" in access.servers and "secret-server" not in access.servers


def test_nobody_gets_a_server_no_rule_names() -> None:
    assert not access_for(User("zed"), [r for r in RULES if r.subject != "*"], 120).anything
    assert access_for(User("zed"), RULES, 120).servers == ("docs",)
    assert access_for(User("zed"), RULES, 120).calls_per_minute == 120  # the team default


def test_a_subject_is_everyone_a_group_or_a_user() -> None:
    assert check_subject("*") is None and check_subject("group:dev") is None and check_subject("user:a@b") is None
    for wrong in ("dev", "group:", "team:dev", "user"):
        assert check_subject(wrong) is not None


def test_the_rate_limit_refills_with_time_and_says_how_long_to_wait() -> None:
    now = [1000.0]
    limits = RateLimits(lambda: now[0])
    assert [limits.take("ann", 3) for _ in range(3)] == [None, None, None]
    wait = limits.take("ann", 3)
    assert wait is not None and 19.9 < wait <= 20.0  # one call every 20 s at 3 a minute
    assert limits.take("bob", 3) is None  # each user has their own
    now[0] += 20.0
    assert limits.take("ann", 3) is None and limits.take("ann", 3) is not None
    now[0] += 3600.0
    assert [limits.take("ann", 3) for _ in range(4)].count(None) == 3  # never more than a minute's worth
