"""The `sandbox:` setting of a stdio server, and the session-wide `mcp.sandbox` mode.

    sandbox: off                 # this server runs with the user's full rights
    sandbox:
      network: none              # none | loopback | all (all when not declared)
      ports: [9876]              # host loopback ports reachable with `network: loopback`
      read: [~/datasets]         # extra folders or files the server may read
      write: [~/exports]         # extra folders or files it may write

What the sandbox is and how it is built lives in `hermes.mcp.sandbox`; this is only the shape of
the setting, validated like every other key of config.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from hermes.validation import Invalid, Loc, choice, items, mapping, optional, port, shown, texts


class Network(StrEnum):
    NONE = "none"  # no network at all, not even the host's loopback
    LOOPBACK = "loopback"  # only the host loopback ports listed in `ports`
    ALL = "all"  # the host's network, as without a sandbox


class SandboxMode(StrEnum):
    """`mcp.sandbox`: whether stdio servers run sandboxed."""

    AUTO = "auto"  # sandboxed where bubblewrap works; elsewhere unsandboxed, with a warning
    REQUIRED = "required"  # sandboxed, or not started at all
    OFF = "off"  # never sandboxed


class Confinement(StrEnum):
    """Whose entry this is, which decides what its own words may share."""

    USER = "user"  # the user's: folders its arguments, env and cwd name are the user's choice
    PLUGIN = "plugin"  # a plugin's (its mcp.json is its author's): its own folder read-only, nothing named elsewhere
    # A project's, not granted: its folder writable, nothing named elsewhere, no code its files name followed.
    PROJECT = "project"


_OFF_WORDS = {"off": False, "on": True}


@dataclass(frozen=True)
class SandboxSettings:
    """A stdio server's `sandbox:`: what it may reach beyond its own folder."""

    enabled: bool = True
    network: Network | None = None  # None: not declared, which means `all`
    ports: tuple[int, ...] = ()
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    confinement: Confinement = Confinement.USER
    cache_scope: str = ""  # whose launcher caches it uses: a project's own, never the user's server's

    @property
    def arguments_grant(self) -> bool:
        """Whether paths named by the server's arguments and env are the user's choice, and shared."""
        return self.confinement is Confinement.USER

    @property
    def working_writable(self) -> bool:
        """Whether the server may write its working folder (a plugin's is its code: read-only)."""
        return self.confinement is not Confinement.PLUGIN

    @property
    def follows_named_code(self) -> bool:
        """Whether programs that the server's own files name (a launcher script's `exec /opt/x`)
        come into its sandbox: not from a project's files, which may name anything of the user's."""
        return self.confinement is not Confinement.PROJECT

    @property
    def effective_network(self) -> Network:
        return self.network or Network.ALL

    @classmethod
    def read_setting(cls, value: Any, loc: Loc) -> SandboxSettings:
        if isinstance(value, bool):
            return cls(enabled=value)
        if isinstance(value, str):
            if value.lower() in _OFF_WORDS:
                return cls(enabled=_OFF_WORDS[value.lower()])
            raise Invalid(loc, f"must be 'off', 'on' or a mapping with network, ports, read and write "
                               f"(got {shown(value)})")
        data = mapping(value, loc, {"enabled", "network", "ports", "read", "write"})
        enabled = data.get("enabled", True)
        if not isinstance(enabled, bool):
            raise Invalid((*loc, "enabled"), f"must be true or false (got {shown(enabled)})")
        network = optional(data, "network", loc, choice(*(n.value for n in Network)), None)
        nothing: tuple[str, ...] = ()
        settings = cls(
            enabled=enabled,
            network=Network(network) if network else None,
            ports=optional(data, "ports", loc, lambda v, at: items(v, at, port), ()),
            read=optional(data, "read", loc, _paths, nothing),
            write=optional(data, "write", loc, _paths, nothing),
        )
        if settings.ports and settings.network is not Network.LOOPBACK:
            raise Invalid((*loc, "ports"), "lists host loopback ports, which only 'network: loopback' uses")
        return settings

    @classmethod
    def read_declared(cls, value: Any, loc: Loc) -> SandboxSettings:
        """A plugin's declaration: the network (and host ports) its server needs. Folders are the
        user's to grant (in config.yaml), and a plugin cannot switch its own sandbox off."""
        settings = cls.read_setting(value, loc)
        if not settings.enabled:
            raise Invalid(loc, "cannot switch the sandbox off; the user decides that in config.yaml")
        if settings.read or settings.write:
            raise Invalid((*loc, "read" if settings.read else "write"),
                          "is the user's to grant (sandbox.read/write of a config.yaml entry), not a plugin's")
        return settings

    def to_data(self) -> dict[str, Any] | str:
        """The setting as config.yaml holds it (for installers that write it)."""
        if not self.enabled:
            return "off"
        data: dict[str, Any] = {}
        if self.network is not None:
            data["network"] = self.network.value
        if self.ports:
            data["ports"] = list(self.ports)
        if self.read:
            data["read"] = list(self.read)
        if self.write:
            data["write"] = list(self.write)
        return data


MAX_PATHS = 64
# The kernel's own views: binding them would show the host's processes and devices.
_NEVER_SHARED = ("/proc", "/sys", "/dev")


def _paths(value: Any, loc: Loc) -> tuple[str, ...]:
    paths = texts(value, loc)
    if len(paths) > MAX_PATHS:
        raise Invalid(loc, f"lists {len(paths)} paths; at most {MAX_PATHS}")
    for index, path in enumerate(paths):
        where = (*loc, index)
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            raise Invalid(where, "is not valid text (a lone surrogate)") from None
        if not path or "\x00" in path or not path.isprintable():
            raise Invalid(where, "must be a path (no control characters)")
        if not path.startswith(("/", "~")):
            raise Invalid(where, f"must be an absolute path or start with ~ (got {shown(path)})")
        if any(path == place or path.startswith(place + "/") for place in _NEVER_SHARED):
            raise Invalid(where, f"{shown(path)} is the kernel's own view of the host; it is never shared")
    return paths


def read_mode(value: Any, loc: Loc) -> SandboxMode:
    if isinstance(value, bool):
        return SandboxMode.AUTO if value else SandboxMode.OFF
    return SandboxMode(choice(*(m.value for m in SandboxMode))(value, loc))
