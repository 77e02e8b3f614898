"""What a server says, as it may leave hermes: every text redacted, then made visible.

One pass over a JSON value for both (secrets hidden by the redactor given, hidden characters
removed, see `hermes.security.invisible`), keys included. Where nothing changes, the very same
object comes back: most of what servers send holds no secret, and copying it would be most of a
call's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes.security.invisible import visible

Redact = Callable[[str], str]


def clean_text(text: str, redact: Redact) -> str:
    return visible(redact(text))


def clean_value(data: Any, redact: Redact) -> Any:
    """A JSON value with every string in it (keys too, as text) cleaned."""
    if isinstance(data, str):
        return clean_text(data, redact)
    if isinstance(data, dict):
        pairs = [(clean_text(str(key), redact), clean_value(value, redact)) for key, value in data.items()]
        unchanged = all(new_key is key and new_value is value
                        for (new_key, new_value), (key, value) in zip(pairs, data.items(), strict=True))
        return data if unchanged else dict(pairs)
    if isinstance(data, list | tuple):
        items = [clean_value(item, redact) for item in data]
        return data if all(new is old for new, old in zip(items, data, strict=True)) else items
    return data
