"""Nothing hidden reaches a model or a terminal: invisible and control characters out of untrusted text.

A server (or a model) can hide instructions in text a person never sees but a model reads: Unicode
TAG characters (U+E0000–E007F spell ASCII invisibly), zero-width and other format characters,
fillers that render as nothing (Hangul fillers, musical formatting, the deprecated format
characters U+206A–206F, the soft hyphen), bidi overrides and isolates that reorder what is shown,
variation selectors that encode a byte each, C0/C1 control characters (terminal escapes among
them). `visible()` removes every default-ignorable and format code point (see `_ALWAYS`; the test
checks the list against the Unicode database) from every string a server or model supplies (tool
definitions and names, results, resources, prompts, errors, elicitation and sampling messages,
`_meta`), and leaves everything else byte for byte, ordinary uses of the same characters included:

- a zero-width joiner or non-joiner (or the grapheme joiner) between two non-ASCII characters
  (emoji sequences such as 👩‍💻, Persian and Indic orthography) stays; next to ASCII, at an edge
  or in a run it goes;
- one emoji or text presentation selector (U+FE0E/FE0F) right after a non-ASCII character or a
  keycap base (`0-9 # *`) stays (❤️, 1️⃣); the other selectors stay only after the characters
  Unicode defines variants for (CJK, mathematical operators, Myanmar, Phags-pa, Mongolian free
  variation selectors after Mongolian letters, ideographic variation selectors after CJK
  ideographs), one at a time; one after an ASCII letter (a hidden byte) goes;
- TAG characters stay only in the three emoji subdivision flags Unicode recommends (🏴 + gbeng,
  gbsct or gbwls + cancel tag); any other tag run goes, after a flag too;
- tab, newline and carriage return stay; so do the bidi *marks* (LRM, RLM, ALM), which
  right-to-left text needs and which cannot reorder anything by themselves, and the Arabic,
  Syriac and Kaithi signs that are format characters but are drawn (U+0600–0605, U+06DD, …).

`one_line()` is for untrusted text that hermes itself puts into its own prose (the system prompt's
lines about missing servers): one line, bounded, so no reason a server gives can open a section.
"""

from __future__ import annotations

import re
from typing import Any

# Removed wherever they are: controls (but tab, newline, carriage return), the soft hyphen, Khmer
# inherent vowels, the Mongolian vowel separator, zero-width space, bidi embeddings, overrides and
# isolates, word joiner and invisible operators, deprecated format characters, Hangul fillers, the
# byte order mark, interlinear annotation, Egyptian hieroglyph format controls, shorthand format
# controls, musical formatting, the language tag and the unassigned default-ignorable planes.
_ALWAYS = ("\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u17b4\u17b5\u180e\u200b\u202a-\u202e"
           "\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb\U00013430-\U0001345f\U0001bca0-\U0001bca3"
           "\U0001d173-\U0001d17a\U000e0000-\U000e001f\U000e0080-\U000e00ff\U000e01f0-\U000e0fff")
# Kept or removed by what stands around them (see the module's docstring).
_CONTEXTUAL = ("\u034f\u115f\u1160\u180b-\u180d\u180f\u200c\u200d\ufe00-\ufe0f\U000e0020-\U000e007f"
               "\U000e0100-\U000e01ef")
_ANY = re.compile(f"[{_ALWAYS}{_CONTEXTUAL}]")
_ALWAYS_RE = re.compile(f"[{_ALWAYS}]+")
_JOINERS = frozenset("\u200c\u200d\u034f")
_BLACK_FLAG = "\U0001f3f4"
_CANCEL_TAG = "\U000e007f"
# The emoji subdivision flags Unicode recommends (England, Scotland, Wales), spelt in TAG letters.
_FLAG_TAGS = frozenset("".join(chr(0xE0000 + ord(c)) for c in name) + _CANCEL_TAG
                       for name in ("gbeng", "gbsct", "gbwls"))
_FLAG_LENGTH = 6
_KEYCAP_BASES = frozenset("0123456789#*")
_PRESENTATION = frozenset("\ufe0e\ufe0f")
_MONGOLIAN_SELECTORS = frozenset("\u180b\u180c\u180d\u180f")
_HANGUL_FILLERS = frozenset("\u115f\u1160")


def _cjk(code: int) -> bool:
    return 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF


def _variant_base(code: int) -> bool:
    """A character Unicode's standardized variants give U+FE00–FE02 to."""
    return _cjk(code) or 0x2200 <= code <= 0x22FF or 0x2A00 <= code <= 0x2AFF or 0x1000 <= code <= 0x109F \
        or 0xAA60 <= code <= 0xAA7F or 0xA9E0 <= code <= 0xA9FF or 0xA840 <= code <= 0xA87F \
        or 0x10AC0 <= code <= 0x10AFF or 0x13000 <= code <= 0x1342F


def _selector_fits(selector: str, previous: str) -> bool:
    """Whether one variation selector after `previous` is an ordinary variant, not a hidden byte."""
    if not previous or previous.isspace() or _hidden(previous):
        return False
    code = ord(previous)
    if selector in _PRESENTATION:
        return not previous.isascii() or previous in _KEYCAP_BASES
    if selector in _MONGOLIAN_SELECTORS:
        return 0x1820 <= code <= 0x18AF
    if "\ufe00" <= selector <= "\ufe02":
        return _variant_base(code)
    if "\U000e0100" <= selector <= "\U000e010f":
        return _cjk(code)  # ideographic variation sequences (registered collections use the first few)
    return False


def _tag(char: str) -> bool:
    return "\U000e0020" <= char <= "\U000e007f"


def _hidden(char: str) -> bool:
    return bool(_ANY.match(char))


def _plain_neighbour(char: str) -> bool:
    """A character next to which a joiner means nothing: ASCII, space, an edge, another invisible one."""
    return not char or char.isascii() or char.isspace() or _hidden(char)


def _contextual(text: str) -> str:
    out: list[str] = []
    index = 0
    size = len(text)
    while index < size:
        char = text[index]
        previous = out[-1][-1] if out and out[-1] else ""
        following = text[index + 1] if index + 1 < size else ""
        if _tag(char):
            flag = text[index:index + _FLAG_LENGTH]
            if previous == _BLACK_FLAG and flag in _FLAG_TAGS:
                out.append(flag)
                index += _FLAG_LENGTH
                continue
        elif char in _JOINERS:
            if not _plain_neighbour(previous) and not _plain_neighbour(following):
                out.append(char)
        elif char in _HANGUL_FILLERS:
            if "\u1100" <= following <= "\u11ff" or "\u1100" <= previous <= "\u11ff":
                out.append(char)  # a filler inside an old Hangul syllable spelt in jamo
        elif _hidden(char):
            if _selector_fits(char, previous):
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
