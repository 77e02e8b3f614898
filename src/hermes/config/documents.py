"""Config documents already parsed, kept by a digest of the exact text they came from.

Round-trip YAML parsing (ruamel.yaml, pure Python) is most of what reading a config costs a
command: for `hermes mcp list` with 20 servers, importing the parser and running it took about
20 ms of 86. So once a file's text has been parsed as always, its document is kept as plain JSON
data in `cache/config-documents.json`, under a digest of that very text (BLAKE2b, 160 bits);
the next command that reads the same text validates that document instead, and never imports
the parser. A changed file has another digest and is parsed afresh. The text itself is not kept:
its comments are nobody's business but the file's.

A document is kept only when it is exactly plain data (text, whole numbers, finite numbers,
booleans, null, lists, mappings with text keys), validates to the very configuration the
round-trip document gave, and holds no secret of its own: a file that writes a credential out
(rather than `${VAR}` from `.env`) is never copied anywhere, so it is parsed each time. The rule is
stricter than the listings' and reads the parsed texts (so YAML escapes hide nothing): every key
and value, every word of it, and every value after an option (`--token X`, `--token=X`), under
`secret_setting`, `credential_like`, `redact_shapes` and `mask_url`. The cache file is never
written through a symlink.

A document read back is validated like any input; if it no longer validates (a newer hermes
with stricter rules), the text is parsed again, so the error still names its line. Nothing here
is needed for correctness: an unreadable, foreign or damaged cache is ignored, and one that
cannot be written is not written.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes.files import UnreadableFile, atomic_write, read_bounded

try:  # BLAKE2 itself: `hashlib` would load OpenSSL's bindings first, 2.5 ms of the time saved
    from _blake2 import blake2b
except ImportError:  # an interpreter without CPython's own module
    from hashlib import blake2b

FORMAT = 2
KEPT = 8  # documents: the user's file and the projects worked in lately
MAX_TEXT = 128 * 1024  # a larger file is parsed each time (nobody's config is that large)
MAX_CACHE_BYTES = 4 * 1024 * 1024


class _NotPlain(ValueError):
    pass


def _plain(value: Any) -> Any:
    # Exact types where a subclass could mean something else (ruamel's anchored booleans and its
    # hexadecimal or underscored integers are int subclasses); any text and any finite float are
    # what they print as.
    if value is None or type(value) is bool or type(value) is int:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return float(value)
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise _NotPlain
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    raise _NotPlain


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """Every text in the document with the name it sits under, at any depth: a mapping's key for
    its value, the option before it for a list item (`[--token, VALUE]`), else ""; keys are texts too."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield "", key
            if isinstance(item, str):
                yield key, item
            else:
                yield from _strings(item)
    elif isinstance(value, list):
        option = ""
        for item in value:
            if isinstance(item, str):
                yield option, item
                option = item.lstrip("-") if item.startswith("-") else ""
            else:
                option = ""
                yield from _strings(item)


_REFERENCE = re.compile(r"\$\{[^}]*\}")


def _written_out(name: str, value: str) -> bool:
    """Whether this text writes out something a listing would hide, or that looks like a
    credential; stricter than the listings (a copy is not a listing: when in doubt, not kept)."""
    from hermes.security.credentials import credential_like, secret_setting
    from hermes.security.redact import mask_url, redact_shapes

    literal = _REFERENCE.sub(" ", value)  # `Bearer ${TOKEN}`: the secret is in .env
    words = literal.split()
    if redact_shapes(value) != value or mask_url(value) != value or any(credential_like(word) for word in words):
        return True
    if "${" not in value and name and secret_setting(name, value):
        return True
    # `--token VALUE` and `--token=VALUE`, in a list or in one string of arguments.
    pairs = [*itertools.pairwise(words), *(word.split("=", 1) for word in words if "=" in word)]
    return any(option.startswith("-") and secret_setting(option.lstrip("-"), word) for option, word in pairs)


def holds_secret(document: dict[str, Any]) -> bool:
    """Whether the config writes out anything that may be a secret."""
    return any(_written_out(name, value) for name, value in _strings(document))


def plain_document(document: dict[str, Any]) -> dict[str, Any] | None:
    """`document` as plain JSON data, or None where it holds anything else (a date, a tagged value)."""
    try:
        converted = _plain(document)
    except _NotPlain:
        return None
    return converted if isinstance(converted, dict) else None


def _digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


class DocumentCache:
    """The documents of recently read config texts, in one small JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _entries(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(read_bounded(self.path, MAX_CACHE_BYTES))
        except (OSError, UnreadableFile, ValueError, RecursionError):
            return []
        entries = data.get("documents") if isinstance(data, dict) and data.get("format") == FORMAT else None
        if not isinstance(entries, list):
            return []
        return [entry for entry in entries if isinstance(entry, dict) and isinstance(entry.get("digest"), str)
                and isinstance(entry.get("document"), dict)]

    def lookup(self, text: str) -> dict[str, Any] | None:
        """The document kept for exactly this text, if any."""
        if len(text) > MAX_TEXT:
            return None
        digest = _digest(text)
        document: dict[str, Any] | None = next(
            (entry["document"] for entry in self._entries() if entry["digest"] == digest), None)
        return document

    def keep(self, text: str, document: dict[str, Any], same: Callable[[dict[str, Any]], bool]) -> None:
        """Keep `document` (the round-trip document of `text`) if it is plain data and `same` says
        its plain form validates to what the round-trip one did."""
        if len(text) > MAX_TEXT:
            return
        converted = plain_document(document)
        if converted is None or holds_secret(converted) or not same(converted):
            return
        if self.path.is_symlink():
            return  # written through, it would replace whatever file the link names
        digest = _digest(text)
        entries = [entry for entry in self._entries() if entry["digest"] != digest]
        entries.append({"digest": digest, "document": converted})
        # A read-only home: every command parses the text, as before the cache.
        with contextlib.suppress(OSError, ValueError):
            atomic_write(self.path, json.dumps({"format": FORMAT, "documents": entries[-KEPT:]}, ensure_ascii=False))
