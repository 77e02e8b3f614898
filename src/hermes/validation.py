"""The one validation kit every reader of user and plugin files is written in.

Readers of `config.yaml`, plugin manifests (`plugin.json`, `mcp.json`), app declarations and the
two catalogs all follow one shape: small strict functions over plain parsed data, each taking the
location of the value it reads and raising `Invalid(loc, rule)` on the first broken rule. The
reader that owns the file turns that into its own `InvalidFile` error with the file, the line
where it can know it, the dotted key and the rule, so every message reads the same way.

Why not pydantic (already a dependency of the SDK): importing it costs about 100 ms, and
`hermes mcp list`, `plugins list` and `--help` read these files and must start fast (measured:
`mcp list` with 20 servers in 94 ms against a 10 ms bare Python start; pydantic alone would
double it). The schemas are small; a strict kit keeps them exact and the error shape uniform.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from enum import StrEnum
from typing import Any, TypeVar
from urllib.parse import urlsplit

Loc = tuple[str | int, ...]
T = TypeVar("T")
E = TypeVar("E", bound=StrEnum)
Reader = Callable[[Any, Loc], T]


class Invalid(Exception):
    """One rule broken at one location of a parsed document."""

    def __init__(self, loc: Loc, rule: str) -> None:
        self.loc = loc
        self.rule = rule
        super().__init__(f"{dotted(loc)}: {rule}" if loc else rule)


def dotted(loc: Loc) -> str:
    """`("app", "linux", "location", 0, "kind")` -> `app.linux.location[0].kind`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def valid_text(text: str) -> bool:
    """Whether `text` has a UTF-8 form (no lone surrogate), as a file or a terminal needs."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def invalid_text_at(value: Any, loc: Loc = ()) -> Loc | None:
    """Where in parsed JSON or YAML a key or a string is not valid Unicode (a lone surrogate, which
    JSON's `\\ud800` escape lets through and no file or terminal can take), with that part shown
    escaped; None when every text is valid."""
    if isinstance(value, str):
        return None if valid_text(value) else loc
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and not valid_text(key):
                return (*loc, key.encode("utf-8", "backslashreplace").decode("ascii", "replace"))
            if (found := invalid_text_at(item, (*loc, key if isinstance(key, str) else str(key)))) is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := invalid_text_at(item, (*loc, index))) is not None:
                return found
    return None


def shown(value: Any) -> str:
    """A value as an error message may show it: containers by kind, scalars short."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def counted(count: int, noun: str) -> str:
    """`1 tool`, `2 tools`: a count with its noun in the right number (nouns taking an -s)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def suggestion(word: str, choices: Collection[str]) -> str:
    """` (did you mean 'client'?)` when a close match exists, else nothing."""
    import difflib  # only when a suggestion is needed: a start-up cost every command would pay

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def mapping(value: Any, loc: Loc, allowed: Collection[str] | None = None, *,
            what: str = "a mapping") -> dict[str, Any]:
    """A mapping with text keys; with `allowed`, any other key is refused (with a close match)."""
    if not isinstance(value, dict):
        raise Invalid(loc, f"must be {what} (got {shown(value)})")
    for key in value:
        if not isinstance(key, str):
            raise Invalid(loc, f"keys must be text (got {shown(key)})")
        if allowed is not None and key not in allowed:
            raise Invalid((*loc, key), "is not a known key" + suggestion(key, allowed))
    return value


def text(value: Any, loc: Loc, *, nonempty: bool = False) -> str:
    if not isinstance(value, str) or (nonempty and not value):
        raise Invalid(loc, f"must be {'non-empty ' if nonempty else ''}text (got {shown(value)})")
    return value


def nonempty_text(value: Any, loc: Loc) -> str:
    return text(value, loc, nonempty=True)


def flag(value: Any, loc: Loc) -> bool:
    if not isinstance(value, bool):
        raise Invalid(loc, f"must be true or false (got {shown(value)})")
    return value


def number(value: Any, loc: Loc, *, positive: bool = False, what: str = "a number") -> float:
    """A finite int or float (never a bool, NaN or infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (positive and value <= 0):
        raise Invalid(loc, f"must be {what} (got {shown(value)})")
    return float(value)


def seconds(value: Any, loc: Loc) -> float:
    return number(value, loc, positive=True, what="a positive number of seconds")


def integer(value: Any, loc: Loc, low: int, high: int, *, what: str = "a whole number") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Invalid(loc, f"must be {what} between {low} and {high} (got {shown(value)})")
    return value


def port(value: Any, loc: Loc) -> int:
    return integer(value, loc, 1, 65535, what="a port")


def items(value: Any, loc: Loc, read: Reader[T]) -> tuple[T, ...]:
    if not isinstance(value, list):
        raise Invalid(loc, f"must be a list (got {shown(value)})")
    return tuple(read(item, (*loc, index)) for index, item in enumerate(value))


def texts(value: Any, loc: Loc) -> tuple[str, ...]:
    return items(value, loc, text)


def text_map(value: Any, loc: Loc) -> dict[str, str]:
    return {key: text(item, (*loc, key)) for key, item in mapping(value, loc).items()}


def choice(*choices: str) -> Reader[str]:
    def read(value: Any, loc: Loc) -> str:
        if not isinstance(value, str) or value not in choices:
            raise Invalid(loc, f"must be one of {', '.join(choices)} (got {shown(value)})")
        return value

    return read


def enum_choice(kind: type[E]) -> Reader[E]:
    """One of an enumeration's values, read as its member."""
    text_of = choice(*(member.value for member in kind))

    def read(value: Any, loc: Loc) -> E:
        return kind(text_of(value, loc))

    return read


def matching(pattern: re.Pattern[str], rule: str) -> Reader[str]:
    """Text that matches `pattern` whole; `rule` says what it must be."""
    def read(value: Any, loc: Loc) -> str:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise Invalid(loc, f"{rule} (got {shown(value)})")
        return value

    return read


def optional(data: Mapping[str, Any], key: str, loc: Loc, read: Reader[T], default: T) -> T:
    """`read(data[key])`, or `default` when the key is absent or null."""
    if key not in data or data[key] is None:
        return default
    return read(data[key], (*loc, key))


def required(data: Mapping[str, Any], key: str, loc: Loc, read: Reader[T], *, why: str = "is required") -> T:
    if key not in data or data[key] is None:
        raise Invalid((*loc, key), why)
    return read(data[key], (*loc, key))


def http_url_problem(url: str) -> str | None:
    """Why `url` is not an http(s) URL with a host, or None when it is one."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is what raises for a bad one
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must be an http:// or https:// URL"
    if not parts.hostname:
        return "must name a host"
    return None


def http_url(value: Any, loc: Loc, *, nonempty: bool = False) -> str:
    """An http(s) URL; one holding `${VAR}` is checked again once its variables are filled in."""
    url = text(value, loc, nonempty=nonempty)
    if "${" not in url:
        problem = http_url_problem(url)
        if problem:
            raise Invalid(loc, f"{problem} (got {shown(url)})")
    return url


# A plugin's name becomes a folder name and part of tool names: lowercase, digits, '.', '-'.
PLUGIN_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{0,63}")
PLUGIN_NAME_RULE = "a plugin name is 1-64 lowercase letters, digits, '.' and '-', starting with a letter or digit"
