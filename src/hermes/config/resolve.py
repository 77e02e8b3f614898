"""Turn a configured server into the concrete values a connection uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from hermes.config.interpolate import interpolate, referenced_variables
from hermes.config.model import ServerConfig
from hermes.errors import HermesError
from hermes.security.redact import credential_parts
from hermes.validation import http_url_problem


@dataclass(frozen=True, repr=False)
class ResolvedServer:
    name: str
    config: ServerConfig
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        # env and header values are credentials more often than not.
        return f"ResolvedServer({self.name!r}, command={self.command!r}, url={self.url!r})"

    interpolated: tuple[str, ...] = ()  # the values ${VAR} references brought in, anywhere

    @property
    def secrets(self) -> list[str]:
        """Values the redactor must hide: every header value (and the credential after an auth
        scheme such as `Bearer`), every `env:` value, and every value a `${VAR}` brought in (a
        `.env` value may sit in a URL's user info or a `?sig=` parameter just as well)."""
        return ([part for v in self.headers.values() for part in credential_parts(v)] + list(self.env.values())
                + list(self.interpolated))


# The plain facts of a user's session; `${HOME}` in a path is not a secret to hide everywhere.
_NOT_SECRET = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR", "PWD"})


def resolve_server(name: str, config: ServerConfig, variables: Mapping[str, str]) -> ResolvedServer:
    used: set[str] = set()

    def sub(text: str) -> str:
        for variable in referenced_variables(text):
            if variable in variables and variable not in _NOT_SECRET and not variable.startswith("XDG_"):
                used.add(variables[variable])
        return interpolate(text, variables, server=name)

    resolved = ResolvedServer(
        name=name,
        config=config,
        command=sub(config.command) if config.command else None,
        args=tuple(sub(a) for a in config.args),
        env={k: sub(v) for k, v in config.env.items()},
        cwd=sub(config.cwd) if config.cwd else None,
        url=sub(config.url) if config.url else None,
        headers={k: sub(v) for k, v in config.headers.items()},
    )
    if resolved.url and config.url and "${" in config.url and http_url_problem(resolved.url):
        # The message names the setting, not the value: the value may now hold a secret.
        raise HermesError(f"Server '{name}': its url is not a valid http(s) URL once its ${{...}} variables "
                          f"are filled in.")
    return replace(resolved, interpolated=tuple(sorted(used)))
