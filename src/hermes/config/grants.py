"""What a project's servers ask for beyond the project folder, and their configs without it.

A project's `.hermes/config.yaml` came with someone else's files. Trusting the folder lets its
servers start, confined: their arguments, env and launcher scripts share nothing outside the
working folder, their sandbox cannot be switched off or widened, they get no network and no host
port, and nothing they ask of the model or the user is approved in advance. An entry that uses a
value of the user's (`${VAR}` from the environment or `.env`, an OAuth sign-in) does not start at
all, since no sandbox can keep it from sending that value anywhere. Whatever an entry asks for
beyond that is a *grant*: each is listed in words by `hermes mcp trust`, and only the user's
explicit yes (`--grant`, or the answer to the question) lets the servers have them. Like trust,
the grant is recorded with a digest of the folder's `.hermes`, so any change asks again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from hermes.config.agent_settings import ApprovalMode
from hermes.config.interpolate import plain_variable, referenced_variables
from hermes.config.model import Auth, ServerConfig, config_strings
from hermes.config.sandbox import Confinement, Network
from hermes.security.redact import mask_url

_PATH_START = ("/", "~", "$", "./", "../")


def _outside(value: str, folder: Path) -> str | None:
    """The existing place outside the project folder a configured value names, if any (only an
    existing place is ever shared)."""
    if value.startswith("-"):
        value = value.partition("=")[2]
    expanded = os.path.expanduser(os.path.expandvars(value))
    if not expanded.startswith(_PATH_START) and "/" not in expanded:
        return None
    place = Path(expanded if os.path.isabs(expanded) else folder / expanded)
    try:
        if not os.path.lexists(place) or place.resolve().is_relative_to(folder.resolve()):
            return None
    except (OSError, ValueError):
        pass
    return str(place)


def _users_values(config: ServerConfig) -> list[str]:
    """The variables an entry takes from the user's environment or `.env`, but plain facts
    (`${HOME}`, `${USER}`: where a path leads is judged as a path)."""
    return sorted({variable for _, text in config_strings(config) for variable in referenced_variables(text)
                   if not plain_variable(variable)})


def grants(config: ServerConfig, folder: Path) -> list[str]:
    """What this project entry asks for beyond the confinement, in words (empty: nothing)."""
    asked: list[str] = []
    variables = _users_values(config)
    if variables:
        asked.append("the values of " + ", ".join(f"${{{v}}}" for v in variables) + " from your environment or .env")
    if config.auth is Auth.OAUTH:
        asked.append("your OAuth sign-in stored under its name")
    if config.url is not None:
        asked.append(f"to connect to {mask_url(config.url)} from your machine")
    sandbox = config.sandbox
    if config.command is not None:
        if not sandbox.enabled:
            asked.append("to run without a sandbox (sandbox: off), with your full rights")
        if sandbox.effective_network is Network.ALL:
            asked.append("the network (network: all" + ("" if sandbox.network else ", the default") + ")")
        asked += [f"to read {path}" for path in sandbox.read]
        asked += [f"to write {path}" for path in sandbox.write]
        if sandbox.ports:
            asked.append(f"to reach host loopback ports {', '.join(map(str, sandbox.ports))}")
        if "/" in config.command and (place := _outside(config.command, folder)):
            asked.append(f"to run {place}")
        asked += [f"to use {place}, named in its arguments" for arg in config.args if (place := _outside(arg, folder))]
        asked += [f"to use {place}, named in its env" for value in config.env.values()
                  for part in value.split(os.pathsep) if (place := _outside(part, folder))]
        if config.cwd is not None and (place := _outside(config.cwd, folder)):
            asked.append(f"to work in {place}")
    asked += [f"the root {place}" for root in config.roots or ()
              if (place := _outside(root.removeprefix("file://"), folder))]
    if config.sampling.enabled and config.sampling.auto_approve:
        asked.append("to use your model without asking (sampling.auto_approve)")
    if config.approval.mode is ApprovalMode.NEVER or config.approval.allow:
        asked.append("to run tools without asking you (approval: " +
                     ("never" if config.approval.mode is ApprovalMode.NEVER else
                      f"allow {', '.join(config.approval.allow)}") + ")")
    return asked


def held_back(config: ServerConfig) -> str | None:
    """What no confinement can take away from an entry (a value it sends where it likes, a sign-in):
    such an entry does not start at all until the user grants it."""
    variables = _users_values(config)
    if variables:
        return f"it uses {', '.join(f'${{{v}}}' for v in variables)} from your environment or .env"
    if config.auth is Auth.OAUTH:
        return "it would use your OAuth sign-in stored under its name"
    if config.url is not None:
        return f"it connects to {mask_url(config.url)} from your machine, outside any sandbox"
    return None


def confined(config: ServerConfig, folder: Path) -> ServerConfig:
    """The entry as it runs without the user's grant: its folder, nothing beyond it, no network."""
    sandbox = replace(config.sandbox, enabled=True, read=(), write=(), ports=(), network=Network.NONE,
                      confinement=Confinement.PROJECT)
    approval = replace(config.approval, allow=(), mode=ApprovalMode.AUTO if config.approval.mode is ApprovalMode.NEVER
                       else config.approval.mode)
    cwd = config.cwd if config.cwd is not None and not _outside(config.cwd, folder) else None
    roots = tuple(r for r in config.roots or () if not _outside(r.removeprefix("file://"), folder)) or None
    return replace(config, sandbox=sandbox, cwd=cwd, roots=roots, approval=approval,
                   sampling=replace(config.sampling, auto_approve=False))


def in_project(config: ServerConfig, scope: str) -> ServerConfig:
    """A project's entry, granted or not, keeps its launcher caches apart from the user's."""
    return replace(config, sandbox=replace(config.sandbox, cache_scope=scope))


def all_grants(servers: Mapping[str, ServerConfig], folder: Path) -> dict[str, list[str]]:
    """Each project server that asks for something, with what it asks for."""
    return {name: asked for name, config in sorted(servers.items()) if (asked := grants(config, folder))}
