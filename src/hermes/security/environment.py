"""The exact environment a stdio server receives: an allowlist, then its own `env:` block.

The allowlist is POSIX's basics and every `XDG_*` variable; on Windows also the system locations a
process cannot start without (SPEC 2). Windows variable names are case-insensitive (`Path` is
`PATH`), so there the allowlist is matched without regard to case and the name keeps its spelling.
Values that are shell functions (`() { ...`) are never passed on.
"""

from __future__ import annotations

from collections.abc import Mapping

ALLOWED = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR")
_WINDOWS_ALLOWED = ("SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA",
                    "PROGRAMDATA", "PROGRAMFILES", "TEMP", "TMP", "USERPROFILE")


def child_environment(parent: Mapping[str, str], own: Mapping[str, str], *, windows: bool = False) -> dict[str, str]:
    allowed = set(ALLOWED) | (set(_WINDOWS_ALLOWED) if windows else set())

    def passes(name: str) -> bool:
        key = name.upper() if windows else name
        return key in allowed or key.startswith("XDG_")

    env = {k: v for k, v in parent.items() if passes(k) and not v.startswith("()")}
    if windows:
        # `env:` wins over an inherited variable of the same name in any spelling.
        own_names = {name.upper() for name in own}
        env = {k: v for k, v in env.items() if k.upper() not in own_names}
    env.update(own)
    return env
