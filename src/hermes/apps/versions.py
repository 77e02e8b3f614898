"""Strict version parsing and comparison: fail closed.

A version is dotted ASCII digits, at most 9 digits per part. Anything else (a suffix such as
`-beta`, letters, empty parts) cannot be shown to satisfy a minimum, so it counts as too old.
Parts are compared numerically with missing parts as zero: `11.0.9.509 >= 11.0.9`.
"""

from __future__ import annotations

import re

_VERSION = re.compile(r"^[0-9]{1,9}(\.[0-9]{1,9})*$")


def parse_version(text: str) -> tuple[int, ...] | None:
    if not isinstance(text, str) or not _VERSION.match(text):
        return None
    return tuple(int(part) for part in text.split("."))


def is_version(text: str) -> bool:
    return parse_version(text) is not None


def at_least(found: str | None, minimum: str) -> bool:
    have, need = parse_version(found or ""), parse_version(minimum)
    if have is None or need is None:
        return False
    width = max(len(have), len(need))
    return have + (0,) * (width - len(have)) >= need + (0,) * (width - len(need))


def sort_key(text: str) -> tuple[int, ...]:
    """Order for candidates like `Blender 4.2` vs `Blender 5.1`: the numbers found, left to right."""
    return tuple(int(n) for n in re.findall(r"[0-9]{1,9}", text))


def debian_upstream(version: str) -> str:
    """`1:5.1.0+dfsg-2` -> `5.1.0`: epoch and Debian revision dropped, `+` suffixes dropped.

    A `~` (Debian's pre-release marker) is kept, so `5.1~rc1` stays unparseable: a release
    candidate never satisfies `5.1`.
    """
    upstream = version.split(":", 1)[-1]
    if "-" in upstream:
        upstream = upstream.rsplit("-", 1)[0]
    return upstream.split("+", 1)[0]

