"""Registered tool names: `mcp__<server>__<tool>` (the agent's own: `<toolset>_<tool>`), sanitized
and at most 64 characters."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from hermes.tools.toolsets import is_builtin, toolset_name

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def sanitize(part: str) -> str:
    return _UNSAFE.sub("_", part)


def clamp(name: str) -> str:
    """Cut a long name to a readable prefix plus `_` and 8 hex digits of its SHA-256."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def prefix(server: str) -> str:
    """`mcp__<server>__` (`file_` for the built-in toolset `file`): what every registered name of
    `server` starts with."""
    if is_builtin(server):
        return f"{toolset_name(server)}_"
    return f"mcp__{sanitize(server)}__"


def registered_name(server: str, tool: str) -> str:
    return clamp(prefix(server) + sanitize(tool))


def owners(name: str, servers: Iterable[str]) -> list[str]:
    """The servers whose registered names start like `name` (a name clamped to 64 characters keeps
    its server's prefix unless the server's own name is longer than about 50 characters)."""
    return [server for server in servers if name.startswith(prefix(server))]
