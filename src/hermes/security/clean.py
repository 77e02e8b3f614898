"""What a server says, as it may leave hermes: every text redacted, then made visible.

One pass over a JSON value for both (secrets hidden by the redactor given, hidden characters
removed, see `hermes.security.invisible`), keys included. Where nothing changes, the very same
object comes back: most of what servers send holds no secret, and copying it would be most of a
call's cost.
"""

from __future__ import annotations

from typing import Any

from hermes.security.invisible import visible
from hermes.security.redact import Redactor

# The same keys, names and short values come back in result after result (`name`, `type`, the
# SDK's `io.modelcontextprotocol/serverInfo`, a server's name): the redactor remembers which short
# texts needed nothing, up to a bound, so each is searched once instead of on every call.
_REMEMBERED = 64  # characters, at most
_REMEMBER_AT_MOST = 4096  # texts; past it the memory starts again


def clean_text(text: str, redactor: Redactor) -> str:
    if len(text) > _REMEMBERED:
        return visible(redactor(text))
    plain = redactor.plain_texts()
    if text in plain:
        return text
    cleaned = visible(redactor(text))
    if cleaned == text:
        if len(plain) >= _REMEMBER_AT_MOST:
            plain.clear()
        plain.add(text)
    return cleaned


def clean_value(data: Any, redactor: Redactor) -> Any:
    """A JSON value with every string in it (keys too, as text) cleaned; the same object where
    nothing in it changed."""
    return _clean_nested(data, redactor, redactor.plain_texts())


def _clean_nested(data: Any, redactor: Redactor, plain: set[str]) -> Any:
    """`clean_value` with the redactor's plain texts at hand: an exact str already known plain is
    taken as it is without a call (most keys and short values of every result are); any other text
    (a str subclass too, an enum's member say) goes through `clean_text`."""
    if isinstance(data, str):
        return clean_text(data, redactor)
    if isinstance(data, dict):
        cleaned: dict[str, Any] | None = None  # made at the first change, with the pairs before it
        for index, (key, value) in enumerate(data.items()):
            new_key = key if type(key) is str and key in plain else \
                clean_text(key if type(key) is str else str(key), redactor)
            if type(value) is str:
                new_value = value if value in plain else clean_text(value, redactor)
            else:
                new_value = _clean_nested(value, redactor, plain)
            if cleaned is None and (new_key is not key or new_value is not value):
                cleaned = dict(list(data.items())[:index])
            if cleaned is not None:
                cleaned[new_key] = new_value
        return data if cleaned is None else cleaned
    if isinstance(data, list | tuple):
        items: list[Any] | None = None
        for index, item in enumerate(data):
            if type(item) is str:
                new = item if item in plain else clean_text(item, redactor)
            else:
                new = _clean_nested(item, redactor, plain)
            if items is None and new is not item:
                items = list(data[:index])
            if items is not None:
                items.append(new)
        return data if items is None else items
    return data
