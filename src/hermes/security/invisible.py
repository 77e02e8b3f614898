"""Nothing hidden reaches a model: invisible and control characters out of server-supplied text.

A server can hide instructions in text a person never sees but a model reads: Unicode TAG
characters (U+E0000–E007F spell ASCII invisibly), zero-width characters, bidi overrides and
isolates that reorder what is shown, runs of variation selectors that encode bytes, C0/C1 control
characters (terminal escapes among them). `visible()` removes them from every string a server
supplies (tool definitions, results, resources, prompts, errors, elicitation and sampling
messages, `_meta`), and leaves everything else byte for byte, ordinary uses of the same
characters included:

- a zero-width joiner or non-joiner between two non-ASCII characters (emoji sequences such as
  👩‍💻, Persian and Indic orthography) stays; next to ASCII, at an edge or in a run it goes;
- one variation selector right after a visible character stays (❤️, 1️⃣, ideographic variants);
  a run of them, or one after a space, goes;
- TAG characters stay only as an emoji subdivision flag (🏴 followed by up to six tags and the
  cancel tag: 🏴󠁧󠁢󠁳󠁣󠁴󠁿);
- tab, newline and carriage return stay; so do bidi *marks* (LRM, RLM, ALM), which right-to-left
  text needs and which cannot reorder anything by themselves.

`one_line()` is for server text that hermes itself puts into its own prose (the system prompt's
lines about missing servers): one line, bounded, so no reason a server gives can open a section.
"""

from __future__ import annotations

import re
from typing import Any

_ALWAYS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\ufeff\u180e"
_CONTEXTUAL = "\u200c\u200d\ufe00-\ufe0f\U000e0000-\U000e007f\U000e0100-\U000e01ef"
_ANY = re.compile(f"[{_ALWAYS}{_CONTEXTUAL}]")
_ALWAYS_RE = re.compile(f"[{_ALWAYS}]+")
_JOINERS = frozenset("\u200c\u200d")
_BLACK_FLAG = "\U0001f3f4"
_CANCEL_TAG = "\U000e007f"
_MAX_FLAG_TAGS = 6


def _variation_selector(char: str) -> bool:
    return "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef"


def _tag(char: str) -> bool:
    return "\U000e0000" <= char <= "\U000e007f"


def _hidden(char: str) -> bool:
    return bool(_ANY.match(char))


def _plain_neighbour(char: str) -> bool:
    """A character next to which a joiner means nothing: ASCII, space, an edge, another invisible one."""
    return not char or char.isascii() or char.isspace() or _hidden(char)


def _flag_tags(text: str, start: int) -> int:
    """The length of an emoji subdivision flag's tag run starting at `start`, or 0 if it is none."""
    end = start
    while end < len(text) and _tag(text[end]) and text[end] != _CANCEL_TAG and end - start < _MAX_FLAG_TAGS:
        end += 1
    if end > start and end < len(text) and text[end] == _CANCEL_TAG:
        return end + 1 - start
    return 0


def _contextual(text: str) -> str:
    out: list[str] = []
    index = 0
    size = len(text)
    while index < size:
        char = text[index]
        previous = out[-1][-1] if out and out[-1] else ""
        if _tag(char):
            run = _flag_tags(text, index) if previous == _BLACK_FLAG else 0
            if run:
                out.append(text[index:index + run])
                index += run
                continue
        elif char in _JOINERS:
            following = text[index + 1] if index + 1 < size else ""
            if not _plain_neighbour(previous) and not _plain_neighbour(following):
                out.append(char)
        elif _variation_selector(char):
            if previous and not previous.isspace() and not _hidden(previous):
                out.append(char)
        else:
            out.append(char)
        index += 1
    return "".join(out)


def visible(text: str) -> str:
    """`text` without the characters that hide or reorder what a reader is shown."""
    if not _ANY.search(text):
        return text
    text = _ALWAYS_RE.sub("", text)
    return _contextual(text) if _ANY.search(text) else text


def visible_value(data: Any) -> Any:
    """A JSON value with every string in it (keys too) passed through `visible`."""
    if isinstance(data, str):
        return visible(data)
    if isinstance(data, dict):
        return {visible(str(k)) if isinstance(k, str) else k: visible_value(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [visible_value(item) for item in data]
    return data


def one_line(text: str, limit: int = 300) -> str:
    """Server text inside hermes's own prose: visible, on one line, at most `limit` characters."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"
