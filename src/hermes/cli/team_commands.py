"""`hermes team …`: the team gateway's users, policy, credentials and audit record.

Every command works on the database `team.database` names in config.yaml (SQLite in HERMES_HOME by
default, or the replicas' PostgreSQL), so an administrator changes what every replica sees at once.
A secret never goes on the command line: a user's key is printed once when made, and a credential's
value is read from standard input.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hermes.cli.options import json_option
from hermes.cli.output import print_json, print_table, say
from hermes.errors import UsageError
from hermes.home import Home

T = TypeVar("T")
_USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_CREDENTIAL_LIMIT = 64 * 1024

if TYPE_CHECKING:  # the store loads only when a command runs
    from hermes.team.store import TeamStore


def _with_store(work: Callable[[TeamStore], Awaitable[T]]) -> T:
    """Run `work` on the migrated team store, closing it after."""
    from hermes import interrupts
    from hermes.team.run import team_settings, team_store

    home = Home.from_env()
    store = team_store(home, team_settings(home))

    async def run() -> T:
        try:
            await store.migrate()
            return await work(store)
        finally:
            await store.close()

    return interrupts.run(run)


def _warn_unknown_servers(globs: tuple[str, ...]) -> None:
    """A server pattern that names no configured server is most often a typo: said, not refused
    (the server may be added later)."""
    from fnmatch import fnmatchcase

    from hermes.config.store import ConfigStore
    from hermes.validation import suggestion

    configured = list(ConfigStore(Home.from_env()).load().mcp_servers)
    for glob in globs:
        if not any(fnmatchcase(name, glob) for name in configured):
            say(f"warning: '{glob}' matches no server in config.yaml{suggestion(glob, configured)}", err=True,
                fg="yellow")


def _change(work: Callable[[TeamStore], Awaitable[bool]], missing: str, done: str) -> None:
    """Change something in the store: `done` said when it was there, else `missing` as the error."""
    if not _with_store(work):
        raise UsageError(missing)
    say(done)


def _printable(value: str, what: str) -> str:
    if not value or not value.isprintable() or len(value) > 1000:
        raise UsageError(f"{what} must be printable text, 1 to 1000 characters (no control characters).")
    return value


def _user_name(name: str) -> str:
    if not _USER_NAME.fullmatch(name):
        raise UsageError(f"'{name[:80]}' is not a user name: letters, digits and . _ @ + - (at most 128).")
    return name


@click.group("team")
def team_group() -> None:
    """The team gateway (`hermes mcp serve --http --team`): users, policy, credentials, audit."""


@team_group.command("key")
def key_command() -> None:
    """Print a new secret key for team.secret_key (it seals users' credentials at rest)."""
    from hermes.team.sealing import new_key

    click.echo(new_key())


@team_group.command("migrate")
def migrate_command() -> None:
    """Bring the team database's schema up to date (replicas also do this when they start)."""

    async def version(store: TeamStore) -> int:
        return await store.migrate()

    say(f"The team database is at schema version {_with_store(version)}.")


# -- users -------------------------------------------------------------------------------------


@team_group.group("user")
def user_group() -> None:
    """Add, list and remove users."""


@user_group.command("add")
@click.argument("name")
@click.option("--group", "groups", multiple=True, help="A group the user is in (repeatable).")
@click.option("--subject", help="The value of the identity provider's user claim that names this user.")
@click.option("--no-key", is_flag=True, help="No static key: the user signs in through the identity provider.")
def user_add(name: str, groups: tuple[str, ...], subject: str | None, no_key: bool) -> None:
    """Add a user; their key is printed once (only its hash is kept)."""
    from hermes.team.auth import key_hash, new_key
    from hermes.team.database import Conflict
    from hermes.team.records import User

    user = User(_user_name(name), tuple(_user_name(g) for g in groups),
                _printable(subject, "--subject") if subject is not None else None)
    if no_key and subject is None:
        raise UsageError("--no-key needs --subject: without a key or a subject the user could never sign in.")
    if no_key:
        from hermes.team.run import team_settings

        if team_settings(Home.from_env()).oauth is None:
            say("warning: team.oauth is not configured, so this user cannot sign in until it is", err=True,
                fg="yellow")
    key = None if no_key else new_key()

    async def add(store: TeamStore) -> None:
        try:
            await store.add_user(user, key_hash(key) if key else None)
        except Conflict:
            raise UsageError(f"There is already a user '{name}' (or one with that subject).") from None

    _with_store(add)
    say(f"Added user '{name}'" + (f" in {', '.join(groups)}" if groups else "") + ".")
    if key:
        say("Their key (shown this once; send it as Authorization: Bearer):")
        click.echo(key)


@user_group.command("groups")
@click.argument("name")
@click.option("--group", "groups", multiple=True, help="A group the user is in (repeatable; none: no group).")
def user_groups(name: str, groups: tuple[str, ...]) -> None:
    """Put user NAME in exactly these groups (their key and credentials stay)."""
    chosen = tuple(_user_name(group) for group in groups)
    _change(lambda store: store.set_groups(name, chosen), f"There is no user '{name}'.",
            f"{name} is now in {', '.join(chosen) or 'no group'}.")


@user_group.command("list")
@json_option
def user_list(as_json: bool) -> None:
    """Every user, with their groups and identity-provider subject."""

    async def users(store: TeamStore) -> list[Any]:
        return await store.users()

    found = _with_store(users)
    if as_json:
        print_json([{"name": u.name, "groups": list(u.groups), "subject": u.subject} for u in found])
        return
    print_table(["USER", "GROUPS", "SUBJECT"], [[u.name, ", ".join(u.groups) or "-", u.subject or "-"]
                                                for u in found])


@user_group.command("remove")
@click.argument("name")
def user_remove(name: str) -> None:
    """Remove a user and their credentials (a running replica lets their key go within 30 s)."""
    _change(lambda store: store.remove_user(name), f"There is no user '{name}'.",
            f"Removed user '{name}' and their credentials.")


# -- policy ------------------------------------------------------------------------------------


@team_group.group("policy")
def policy_group() -> None:
    """Which servers and tools users and groups may use, and how often."""


@policy_group.command("set")
@click.argument("subject")
@click.option("--servers", "servers", multiple=True, help="A server name or glob the subject may use (repeatable).")
@click.option("--allow", multiple=True, help="Tools that run without asking (names or globs, repeatable).")
@click.option("--ask", multiple=True, help="Tools that ask the user first.")
@click.option("--deny", multiple=True, help="Tools that never run (and are not listed).")
@click.option("--calls-per-minute", type=click.IntRange(1, 1_000_000), help="This subject's call rate limit.")
def policy_set(subject: str, servers: tuple[str, ...], allow: tuple[str, ...], ask: tuple[str, ...],
               deny: tuple[str, ...], calls_per_minute: int | None) -> None:
    """Set the rule of SUBJECT: '*' (everyone), group:NAME or user:NAME (replacing its rule)."""
    from hermes.team.policy import check_subject
    from hermes.team.records import Rule

    problem = check_subject(_printable(subject, "The subject"))
    if problem:
        raise UsageError(problem + ".")
    for glob in (*servers, *allow, *ask, *deny):
        _printable(glob, "A server or tool pattern")
    rule = Rule(subject, servers, allow, ask, deny, calls_per_minute)

    async def put(store: TeamStore) -> None:
        await store.set_rule(rule)

    _with_store(put)
    _warn_unknown_servers(servers)
    say(f"Policy for {subject}: servers {', '.join(servers) or 'none'}"
        + "".join(f"; {word} {', '.join(found)}" for word, found in (("allow", allow), ("ask", ask), ("deny", deny))
                  if found)
        + (f"; {calls_per_minute} calls a minute" if calls_per_minute else "") + ".")


@policy_group.command("list")
@json_option
def policy_list(as_json: bool) -> None:
    """Every rule."""

    async def rules(store: TeamStore) -> list[Any]:
        return await store.rules()

    found = _with_store(rules)
    if as_json:
        print_json([{"subject": r.subject, "servers": list(r.servers), "allow": list(r.allow), "ask": list(r.ask),
                     "deny": list(r.deny), "calls_per_minute": r.calls_per_minute} for r in found])
        return
    print_table(["SUBJECT", "SERVERS", "ALLOW", "ASK", "DENY", "CALLS/MIN"],
                [[r.subject, ", ".join(r.servers) or "-", ", ".join(r.allow) or "-", ", ".join(r.ask) or "-",
                  ", ".join(r.deny) or "-", str(r.calls_per_minute or "-")] for r in found])


@policy_group.command("remove")
@click.argument("subject")
def policy_remove(subject: str) -> None:
    """Remove the rule of SUBJECT."""
    _change(lambda store: store.remove_rule(subject), f"There is no rule for '{subject}'.",
            f"Removed the rule for {subject}.")


@team_group.command("whois")
@click.argument("name")
@json_option
def whois_command(name: str, as_json: bool) -> None:
    """What user NAME may use: servers, tool rules and rate limit, and which rules said so."""
    from hermes.team.policy import access_for
    from hermes.team.run import team_settings

    async def look(store: TeamStore) -> tuple[Any, list[Any]]:
        users = {u.name: u for u in await store.users()}
        return users.get(name), await store.rules()

    user, rules = _with_store(look)
    if user is None:
        raise UsageError(f"There is no user '{name}'.")
    access = access_for(user, rules, team_settings(Home.from_env()).calls_per_minute)
    data = {"user": name, "groups": list(user.groups), "servers": list(access.servers),
            "allow": list(access.permissions.allow), "ask": list(access.permissions.ask),
            "deny": list(access.permissions.deny), "calls_per_minute": access.calls_per_minute,
            "rules": list(access.rules)}
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        shown = ", ".join(value) if isinstance(value, list) else str(value)
        say(f"{key}: {shown or '-'}")


# -- credentials -------------------------------------------------------------------------------


@team_group.group("credential")
def credential_group() -> None:
    """A user's own upstream credentials (what `${VAR}` in a server's settings sees for them)."""


@credential_group.command("set")
@click.argument("user")
@click.argument("name")
def credential_set(user: str, name: str) -> None:
    """Set USER's credential NAME from standard input (sealed with team.secret_key)."""
    from hermes.team.run import team_settings
    from hermes.team.sealing import Sealer

    if not _VARIABLE.fullmatch(name):
        raise UsageError(f"'{name[:80]}' is not a variable name (letters, digits and _, not starting with a digit).")
    if sys.stdin.isatty():
        say(f"Paste {user}'s {name} and press Enter:", err=True)
        value = sys.stdin.readline()
    else:
        value = sys.stdin.read(_CREDENTIAL_LIMIT + 1)
    value = value.rstrip("\r\n")
    if not value or len(value) > _CREDENTIAL_LIMIT or not value.isprintable():
        raise UsageError(f"Give the value on standard input: 1 to {_CREDENTIAL_LIMIT} printable characters "
                         f"(a server's environment cannot hold control characters).")
    sealer = Sealer(team_settings(Home.from_env()).secret_key)
    sealed = sealer.seal(user, name, value)

    async def put(store: TeamStore) -> bool:
        if user not in {u.name for u in await store.users()}:
            return False
        await store.set_credential(user, name, sealed)
        return True

    if not _with_store(put):
        raise UsageError(f"There is no user '{user}' (add them with `hermes team user add`).")
    say(f"Set {user}'s {name} (sealed; their servers use it from their next start).")


@credential_group.command("list")
@click.argument("user")
def credential_list(user: str) -> None:
    """The names of USER's credentials (never their values)."""

    async def names(store: TeamStore) -> list[str]:
        return sorted(await store.credentials(user))

    for name in _with_store(names):
        click.echo(name)


@credential_group.command("remove")
@click.argument("user")
@click.argument("name")
def credential_remove(user: str, name: str) -> None:
    """Remove USER's credential NAME."""
    _change(lambda store: store.remove_credential(user, name), f"'{user}' has no credential '{name}'.",
            f"Removed {user}'s {name}.")


# -- audit -------------------------------------------------------------------------------------


@team_group.command("audit")
@click.option("--user", help="Only this user's calls.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@json_option
def audit_command(user: str | None, limit: int, as_json: bool) -> None:
    """The newest calls: when, who, which tool, how it ended, how long, on which replica."""
    import datetime

    async def records(store: TeamStore) -> list[Any]:
        return await store.audit(user, limit)

    found = _with_store(records)
    if as_json:
        print_json([{"at": r.at, "user": r.user, "tool": r.tool, "server": r.server, "outcome": r.outcome.value,
                     "duration_ms": r.duration_ms, "replica": r.replica} for r in found])
        return
    print_table(["WHEN (UTC)", "USER", "TOOL", "OUTCOME", "MS", "REPLICA"],
                [[datetime.datetime.fromtimestamp(r.at, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S"), r.user,
                  r.tool, r.outcome.value, f"{r.duration_ms:.1f}", r.replica] for r in found])
