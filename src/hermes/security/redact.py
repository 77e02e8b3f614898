"""The redactor: registered secret values and well-known secret shapes become `[REDACTED]`.

One `Redactor` is owned by a session and passed to everything that turns server output, errors or
log lines into text. Registered values are matched literally (longest first, so a secret that
contains another is hidden whole); shapes catch secrets nobody registered.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

REDACTED = "[REDACTED]"

# Values shorter than this are too likely to be ordinary words ("1", "true") to hide everywhere.
_MIN_SECRET_LENGTH = 4

_SHAPES = [
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"),
    re.compile(r"(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{4,}"),
    re.compile(r"(?i)\b(api[_-]?key|token|access[_-]?token|refresh[_-]?token|key|password|passwd|secret|"
               r"client[_-]?secret)([\"']?\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s&,;\"']+)"),
]


def _shape_replacement(match: re.Match[str]) -> str:
    groups = match.groups()
    if len(groups) == 3:
        value = groups[2]
        quote = value[0] if value[:1] in ("'", '"') else ""
        return f"{groups[0]}{groups[1]}{quote}{REDACTED}{quote}"
    if len(groups) == 1:
        return f"{groups[0]} {REDACTED}"
    return REDACTED


def _escaped_forms(value: str) -> set[str]:
    """The value, and how `repr()`, JSON and URL encoding would print it when it holds odd characters."""
    forms = {value, repr(value)[1:-1], json.dumps(value)[1:-1]}
    if any(not (c.isalnum() or c in "-._~") for c in value):
        forms.add(quote(value, safe=""))
    return forms


_SECRET_QUERY = re.compile(r"(?i)^(.*[_-])?(token|key|api[_-]?key|apikey|secret|password|passwd|pass|sig|signature|"
                           r"auth|authorization|credential|credentials|code|session)$")


def mask_url(url: str) -> str:
    """A URL as configuration listings may show it: user info and secret-looking query values hidden."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    def shown(pair: str) -> str:
        name, sep, value = pair.partition("=")
        # A `${VAR}` reference is not the secret itself, and shows where the secret comes from.
        hide = sep and _SECRET_QUERY.match(unquote(name)) and "${" not in value
        return f"{name}={REDACTED}" if hide else pair

    query = "&".join(shown(pair) for pair in parts.query.split("&") if pair)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def credential_parts(value: str) -> list[str]:
    """A header value and, for `Scheme credential` values, the bare credential too."""
    parts = value.split(None, 1)
    return [value, parts[1]] if len(parts) == 2 else [value]


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.register(*secrets)

    def register(self, *values: str) -> None:
        """Hide these values from now on, and the escaped forms a library may print them in."""
        variants = {form for v in values if v for form in _escaped_forms(v)}
        fresh = {v for v in variants if len(v) >= _MIN_SECRET_LENGTH} - self._secrets
        if not fresh:
            return
        with self._lock:
            self._secrets |= fresh
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    def __call__(self, text: str) -> str:
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
        for shape in _SHAPES:
            text = shape.sub(_shape_replacement, text)
        return text

    def value(self, data: Any) -> Any:
        """A JSON value with every string in it redacted (keys too: servers put anything there)."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, dict):
            return {self(str(k)): self.value(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.value(item) for item in data]
        return data

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"
