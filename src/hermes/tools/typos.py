"""Words one typing mistake away, so that "serach the web" or "my calender" still meets the word the
tools use.

Every string one edit from the word (a letter dropped, added or changed, or two neighbours
swapped: a few hundred for a word of eight letters) is looked up in the tools' vocabulary, which a
search holds anyway. Nothing is built or kept per surface, so a thousand surfaces cost no more
memory than before.

Only ASCII words of `SHORTEST` to `LONGEST` letters are matched: a shorter word is one edit away
from too many others ("list" from "lint", "last", "lost"), the tools' vocabulary is English, and a
word of thousands of letters (a query is untrusted) would make as many edits of that length.
"""

from __future__ import annotations

import string
from collections.abc import Container

SHORTEST = 5
LONGEST = 40  # longer than the words people type ("internationalization" has 20 letters)
_LETTERS = string.ascii_lowercase


def _edits(word: str) -> set[str]:
    splits = [(word[:at], word[at:]) for at in range(len(word) + 1)]
    dropped = {head + tail[1:] for head, tail in splits if tail}
    swapped = {head + tail[1] + tail[0] + tail[2:] for head, tail in splits if len(tail) > 1}
    changed = {head + letter + tail[1:] for head, tail in splits if tail for letter in _LETTERS}
    added = {head + letter + tail for head, tail in splits for letter in _LETTERS}
    return (dropped | swapped | changed | added) - {word}


def near(word: str, vocabulary: Container[str]) -> list[str]:
    """The words of `vocabulary` one edit from the lower-case `word`, in order (none for a word too
    short to tell a mistake from another word)."""
    if not SHORTEST <= len(word) <= LONGEST or not (word.isascii() and word.isalpha()):
        return []
    return sorted(candidate for candidate in _edits(word) if candidate in vocabulary)
