"""The messaging gateway's settings in config.yaml (`gateway:`): which platforms it joins and who may talk.

```yaml
gateway:
  idle_minutes: 30          # a room's conversation closes after this long without a message
  max_rooms: 16             # conversations open at once; the longest idle closes first
  answer_minutes: 10        # how long an approval or a form waits for its answer (then: no)
  workdir: ~/hermes-work    # where the file and terminal tools work (default HERMES_HOME/gateway/work)
  matrix:
    homeserver: https://matrix.example.org
    user_id: "@hermes:example.org"
    access_token: ${MATRIX_ACCESS_TOKEN}   # or password: ${MATRIX_PASSWORD}
    allowed_users: ["@alice:example.org"]
  telegram:
    token: ${TELEGRAM_BOT_TOKEN}
    allowed_users: ["123456789"]          # numeric user ids
  discord:
    token: ${DISCORD_BOT_TOKEN}
    allowed_users: ["123456789012345678"]
  email:
    address: hermes@example.org
    password: ${HERMES_MAIL_PASSWORD}
    imap_host: imap.example.org           # imap_port, smtp_port: by security's defaults
    smtp_host: smtp.example.org
    security: tls                         # tls | starttls (SMTP 587, IMAP 993) | none (this machine only)
    verified_by: mx.example.org           # read only mail that passed DMARC/DKIM there (Authentication-Results)
    allowed_users: ["you@example.org"]
```

Secrets are `${VAR}`s filled from the environment and `.env` when the gateway starts; a user not
listed can still be let in by pairing (`hermes gateway pair CODE`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.config.interpolate import interpolate
from hermes.errors import ConfigError, InterpolationError
from hermes.validation import Invalid, Loc, choice, http_url, integer, mapping, optional, port, text, texts


@dataclass(frozen=True)
class PlatformKeys:
    required: tuple[str, ...] = ()
    one_of: tuple[str, ...] = ()  # exactly one of these (a token or a password)
    optional: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()  # keys whose value is an http(s) URL
    ports: tuple[str, ...] = ()  # keys whose value is a TCP port
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # keys with a fixed set of values


# The platforms the gateway can join, and what each needs.
PLATFORM_KEYS: Mapping[str, PlatformKeys] = {
    "matrix": PlatformKeys(required=("homeserver", "user_id"), one_of=("access_token", "password"),
                           optional=("device_name",), urls=("homeserver",)),
    # api_url: a self-hosted Bot API server (https://github.com/tdlib/telegram-bot-api) instead of Telegram's.
    "telegram": PlatformKeys(required=("token",), optional=("api_url",), urls=("api_url",)),
    "discord": PlatformKeys(required=("token",)),
    # security: tls (IMAPS 993, SMTPS 465), starttls (SMTP 587; IMAP must then be tls), or none
    # (plain text: for a server on this machine only).
    # verified_by: the authserv-id of the receiving server; with it, only mail whose DMARC (or DKIM
    # for the From domain) passed there is read.
    "email": PlatformKeys(required=("address", "password", "imap_host", "smtp_host"),
                          optional=("username", "imap_port", "smtp_port", "security", "verified_by"),
                          ports=("imap_port", "smtp_port"), choices={"security": ("tls", "starttls", "none")}),
}
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
SECRET_KEYS = frozenset({"token", "access_token", "password"})
COMMON_KEYS = ("allowed_users",)


@dataclass(frozen=True, repr=False)
class PlatformSettings:
    platform: str
    values: Mapping[str, str]  # as written: ${VAR}s are filled by `resolved`
    allowed_users: tuple[str, ...] = ()

    @classmethod
    def read(cls, platform: str, value: Any, loc: Loc) -> PlatformSettings:
        keys = PLATFORM_KEYS[platform]
        data = mapping(value, loc, {*keys.required, *keys.one_of, *keys.optional, *COMMON_KEYS})
        values: dict[str, str] = {}
        for key in (*keys.required, *keys.one_of, *keys.optional):
            if key not in data:
                continue
            if key in keys.ports:
                values[key] = str(port(data[key], (*loc, key)))
            elif key in keys.choices:
                values[key] = choice(*keys.choices[key])(data[key], (*loc, key))
            else:
                values[key] = (http_url if key in keys.urls else text)(data[key], (*loc, key))
        for key in keys.required:
            if not values.get(key):
                raise Invalid((*loc, key), "is required")
        given = [key for key in keys.one_of if values.get(key)]
        if keys.one_of and len(given) != 1:
            raise Invalid(loc, f"needs exactly one of {' or '.join(keys.one_of)}")
        if platform == "email" and values.get("security") == "none":
            for key in ("imap_host", "smtp_host"):
                if values[key] not in LOOPBACK_HOSTS:
                    raise Invalid((*loc, "security"), f"none sends the password as plain text, so it is only for "
                                                      f"a server on this machine ({key} is {values[key]})")
        nobody: tuple[str, ...] = ()
        users = optional(data, "allowed_users", loc, texts, nobody)
        if platform == "email":  # addresses are compared as the mail server does: without case
            users = tuple(user.lower() for user in users)
        return cls(platform, values, users)

    def resolved(self, variables: Mapping[str, str], path: Path | str) -> tuple[PlatformSettings, list[str]]:
        """These settings with `${VAR}` filled in, and the secret values that came in (to hide)."""
        secrets: list[str] = []
        filled: dict[str, str] = {}
        for key, value in self.values.items():
            try:
                filled[key] = interpolate(value, variables, server=self.platform)
            except InterpolationError as exc:
                raise ConfigError(f"uses ${{{exc.variable}}}, but {exc.variable} is not set (set it in the "
                                  f"environment or in the .env file of HERMES_HOME)",
                                  path=path, key=f"gateway.{self.platform}.{key}") from None
            if key in SECRET_KEYS:
                secrets.append(filled[key])
        return PlatformSettings(self.platform, filled, self.allowed_users), secrets

    def __repr__(self) -> str:
        shown = {key: ("<hidden>" if key in SECRET_KEYS else value) for key, value in self.values.items()}
        return f"PlatformSettings({self.platform!r}, {shown!r}, allowed_users={self.allowed_users!r})"


@dataclass(frozen=True)
class GatewaySettings:
    idle_minutes: int = 30
    max_rooms: int = 16
    answer_minutes: int = 10
    workdir: str | None = None
    platforms: Mapping[str, PlatformSettings] = field(default_factory=dict)

    @classmethod
    def read(cls, value: Any, loc: Loc) -> GatewaySettings:
        data = mapping(value, loc, {"idle_minutes", "max_rooms", "answer_minutes", "workdir", *PLATFORM_KEYS})
        return cls(
            idle_minutes=optional(data, "idle_minutes", loc, lambda v, at: integer(v, at, 1, 100_000), 30),
            max_rooms=optional(data, "max_rooms", loc, lambda v, at: integer(v, at, 1, 1_000), 16),
            answer_minutes=optional(data, "answer_minutes", loc, lambda v, at: integer(v, at, 1, 10_000), 10),
            workdir=optional(data, "workdir", loc, lambda v, at: text(v, at, nonempty=True), None),
            platforms={name: PlatformSettings.read(name, data[name], (*loc, name))
                       for name in PLATFORM_KEYS if data.get(name) is not None},
        )
