"""The team gateway's settings in config.yaml (`team:`): where its state lives and who its users are.

```yaml
team:
  database: ${HERMES_TEAM_DATABASE}     # postgresql://user@host/db; left out: HERMES_HOME/team.db (SQLite)
  secret_key: ${HERMES_TEAM_KEY}        # encrypts users' upstream credentials at rest (`hermes team key`)
  public_url: https://mcp.example.org/mcp   # the MCP endpoint as clients reach it (OAuth's resource)
  oauth:                                # users sign in at your identity provider (optional)
    issuer: https://id.example.org      # its JWKS is found from its metadata unless jwks_uri is given
    audience: https://mcp.example.org/mcp
    user_claim: email                   # the claim that names a hermes user (default: sub)
    groups_claim: groups
  idle_minutes: 15                      # a user's upstream servers stop after this long without a request
  max_users: 200                        # users with running servers on one replica; the longest idle stops first
  sessions_per_user: 8                  # handshake-era MCP sessions one user may hold open on one replica
  calls_per_minute: 120                 # per user, unless their policy says otherwise
  drain_seconds: 20                     # after SIGTERM: not ready at once, calls in flight finish
  refresh_seconds: 15                   # how often a replica re-reads policy and users' credentials and tokens
  shared_variables: [SLACK_TEAM_ID]     # ${VAR}s every user's servers may take from the replica's
                                        # environment or .env; any other must be the user's own credential
```

Users, groups, policy, credentials and the audit record live in the database (`hermes team …`),
so every replica sees the same ones. Static keys (for small teams) are stored hashed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes.config.interpolate import interpolate
from hermes.errors import ConfigError, InterpolationError
from hermes.validation import Invalid, Loc, http_url, integer, mapping, optional, text, texts


@dataclass(frozen=True)
class TeamOAuth:
    issuer: str
    audience: str
    jwks_uri: str | None = None
    user_claim: str = "sub"
    groups_claim: str = "groups"

    @classmethod
    def read(cls, value: Any, loc: Loc) -> TeamOAuth:
        data = mapping(value, loc, {"issuer", "audience", "jwks_uri", "user_claim", "groups_claim"})
        if "issuer" not in data or "audience" not in data:
            missing = "issuer" if "issuer" not in data else "audience"
            raise Invalid((*loc, missing), "is required (tokens are accepted from one issuer, for one audience)")
        return cls(issuer=http_url(data["issuer"], (*loc, "issuer"), nonempty=True),
                   audience=text(data["audience"], (*loc, "audience"), nonempty=True),
                   jwks_uri=optional(data, "jwks_uri", loc, lambda v, at: http_url(v, at, nonempty=True), None),
                   user_claim=optional(data, "user_claim", loc, lambda v, at: text(v, at, nonempty=True), "sub"),
                   groups_claim=optional(data, "groups_claim", loc, lambda v, at: text(v, at, nonempty=True),
                                         "groups"))


@dataclass(frozen=True, repr=False)
class TeamSettings:
    database: str | None = None  # as written (`${VAR}`s filled by `resolved`); None: SQLite in HERMES_HOME
    secret_key: str | None = None
    public_url: str | None = None
    oauth: TeamOAuth | None = None
    idle_minutes: int = 15
    max_users: int = 200
    sessions_per_user: int = 8
    calls_per_minute: int = 120
    drain_seconds: int = 20
    shared_variables: tuple[str, ...] = ()
    refresh_seconds: int = 15

    @classmethod
    def read(cls, value: Any, loc: Loc) -> TeamSettings:
        keys = {"database", "secret_key", "public_url", "oauth", "idle_minutes", "max_users", "sessions_per_user",
                "calls_per_minute", "drain_seconds", "shared_variables", "refresh_seconds"}
        data = mapping(value, loc, keys)

        def bounded(low: int, high: int) -> Any:
            return lambda v, at: integer(v, at, low, high)

        def nonempty(v: Any, at: Loc) -> str:
            return text(v, at, nonempty=True)

        if data.get("oauth") is not None and data.get("public_url") is None:
            raise Invalid((*loc, "public_url"), "is required with oauth: it is the resource clients ask the issuer "
                                                "for a token for, and where they find its metadata")
        return cls(
            database=optional(data, "database", loc, nonempty, None),
            secret_key=optional(data, "secret_key", loc, nonempty, None),
            public_url=optional(data, "public_url", loc, lambda v, at: http_url(v, at, nonempty=True), None),
            oauth=optional(data, "oauth", loc, TeamOAuth.read, None),
            idle_minutes=optional(data, "idle_minutes", loc, bounded(1, 100_000), 15),
            max_users=optional(data, "max_users", loc, bounded(1, 100_000), 200),
            sessions_per_user=optional(data, "sessions_per_user", loc, bounded(1, 1_000), 8),
            calls_per_minute=optional(data, "calls_per_minute", loc, bounded(1, 1_000_000), 120),
            drain_seconds=optional(data, "drain_seconds", loc, bounded(0, 3_600), 20),
            shared_variables=optional(data, "shared_variables", loc, texts, ()),
            refresh_seconds=optional(data, "refresh_seconds", loc, bounded(1, 3_600), 15),
        )

    @property
    def public_origin(self) -> str | None:
        """`public_url`'s scheme and host (where well-known documents and the sign-in callback are)."""
        if not self.public_url:
            return None
        parts = urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"

    def resolved(self, variables: Mapping[str, str], path: Path | str) -> TeamSettings:
        """These settings with `${VAR}` filled in the database URL and the secret key."""

        def fill(key: str, value: str | None) -> str | None:
            if value is None:
                return None
            try:
                return interpolate(value, variables, server="team")
            except InterpolationError as exc:
                raise ConfigError(f"uses ${{{exc.variable}}}, but {exc.variable} is not set (set it in the "
                                  f"environment, a Kubernetes Secret, or the .env file of HERMES_HOME)",
                                  path=path, key=f"team.{key}") from None

        return TeamSettings(fill("database", self.database), fill("secret_key", self.secret_key), self.public_url,
                            self.oauth, self.idle_minutes, self.max_users, self.sessions_per_user,
                            self.calls_per_minute, self.drain_seconds, self.shared_variables,
                            self.refresh_seconds)

    def __repr__(self) -> str:
        # The database URL may carry a password and the key is a secret: neither is ever shown.
        return (f"TeamSettings(database={'<set>' if self.database else None}, "
                f"secret_key={'<hidden>' if self.secret_key else None}, public_url={self.public_url!r}, "
                f"oauth={self.oauth!r}, idle_minutes={self.idle_minutes}, max_users={self.max_users})")
