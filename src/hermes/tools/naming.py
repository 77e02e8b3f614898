"""Registered tool names: `mcp__<server>__<tool>`, sanitized and at most 64 characters."""

from __future__ import annotations

import hashlib
import re

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


def registered_name(server: str, tool: str) -> str:
    return clamp(f"mcp__{sanitize(server)}__{sanitize(tool)}")
