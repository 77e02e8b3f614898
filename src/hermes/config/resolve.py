"""Turn a configured server into the concrete values a connection uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hermes.config.interpolate import interpolate
from hermes.config.model import ServerConfig
from hermes.security.redact import credential_parts


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

    @property
    def secrets(self) -> list[str]:
        """Values the redactor must hide: every header value (and the credential after an auth
        scheme such as `Bearer`) and every `env:` value."""
        return [part for v in self.headers.values() for part in credential_parts(v)] + list(self.env.values())


def resolve_server(name: str, config: ServerConfig, variables: Mapping[str, str]) -> ResolvedServer:
    def sub(text: str) -> str:
        return interpolate(text, variables, server=name)

    return ResolvedServer(
        name=name,
        config=config,
        command=sub(config.command) if config.command else None,
        args=tuple(sub(a) for a in config.args),
        env={k: sub(v) for k, v in config.env.items()},
        cwd=sub(config.cwd) if config.cwd else None,
        url=sub(config.url) if config.url else None,
        headers={k: sub(v) for k, v in config.headers.items()},
    )
