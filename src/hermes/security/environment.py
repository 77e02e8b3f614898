"""The exact environment a stdio server receives: an allowlist, then its own `env:` block."""

from __future__ import annotations

from collections.abc import Mapping

_ALLOWED = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR")
_WINDOWS_ALLOWED = ("SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA",
                    "PROGRAMDATA", "PROGRAMFILES", "TEMP", "TMP", "USERPROFILE")


def child_environment(parent: Mapping[str, str], own: Mapping[str, str], *, windows: bool = False) -> dict[str, str]:
    allowed = set(_ALLOWED) | (set(_WINDOWS_ALLOWED) if windows else set())
    env = {k: v for k, v in parent.items()
           if (k in allowed or k.startswith("XDG_")) and not v.startswith("()")}
    env.update(own)
    return env
