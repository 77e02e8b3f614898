"""Turn a configured server into the concrete values a connection uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from hermes.config.interpolate import interpolate, plain_variable, referenced_variables
from hermes.config.model import ServerConfig
from hermes.errors import HermesError
from hermes.security.credentials import PLAIN_WORDS, placeholder, secret_setting
from hermes.security.redact import credential_parts
from hermes.validation import http_url_problem


@dataclass(frozen=True, repr=False)
class ResolvedServer:
    """A server entry with its `${VAR}`s filled in: what a connection is made with."""

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
        """Values the redactor must hide, and nothing more (an ordinary value hidden everywhere
        corrupts every result that happens to contain it):

        - every value a `${VAR}` brought in, from `.env` or the environment: that is where people
          keep credentials (a `.env` value may sit in a URL's user info or a `?sig=` parameter just
          as well); plain facts (paths that exist, `true`, `info`) are not secrets;
        - header and `env:` values whose name says secret (`Authorization`, `API_KEY`,
          `DB_PASSWORD`) or whose value looks like a credential, with the bare credential after an
          auth scheme such as `Bearer`."""
        settings = [*self.headers.items(), *self.env.items()]
        configured = [part for name, value in settings if secret_setting(name, value)
                      for part in credential_parts(value)]
        return configured + [value for value in self.interpolated if _may_be_secret(value)]


def _may_be_secret(value: str) -> bool:
    """A value brought in by `${VAR}` is hidden unless it is plainly not a secret."""
    import os

    stripped = value.strip()
    if len(stripped) < 4 or stripped.lower() in PLAIN_WORDS or placeholder(stripped):
        return False
    # A folder or file that exists on this machine is where a server works, not a credential.
    return not (os.path.isabs(stripped) and os.path.exists(stripped))


def resolve_server(name: str, config: ServerConfig, variables: Mapping[str, str]) -> ResolvedServer:
    used: set[str] = set()

    def sub(text: str) -> str:
        for variable in referenced_variables(text):
            if variable in variables and not plain_variable(variable):
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
    for header, value in resolved.headers.items():
        bad = next(((i, c) for i, c in enumerate(value) if not " " <= c <= "~" and c != "\t"), None)
        if bad is not None:
            # Named by position, never shown: the value may be a secret.
            raise HermesError(f"Server '{name}': header {header} holds a character HTTP headers cannot carry "
                              f"(U+{ord(bad[1]):04X} at position {bad[0]}), such as the '…' of a placeholder "
                              f"left in place; set the real value (in .env, referred to as ${{VAR}}).")
    if resolved.url and config.url and "${" in config.url and http_url_problem(resolved.url):
        # The message names the setting, not the value: the value may now hold a secret.
        raise HermesError(f"Server '{name}': its url is not a valid http(s) URL once its ${{...}} variables "
                          f"are filled in.")
    return replace(resolved, interpolated=tuple(sorted(used)))
