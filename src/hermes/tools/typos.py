"""Words one typing mistake away, so that "serach the web" or "my calender" still meets the word the
tools use.

A deletion index (the idea behind SymSpell): each word of the vocabulary is filed under itself and
under every string one letter shorter, so two words one edit apart (a letter added, dropped or
changed, or two neighbours swapped) always meet under some key. A candidate found that way is then
checked to be exactly one edit away: two words can share a key and be two edits apart.

Only ASCII words of `SHORTEST` letters or more are matched: a shorter word is one edit away from
too many others ("list" from "lint", "last", "lost"), and the tools' vocabulary is English.
"""

from __future__ import annotations

from collections.abc import Iterable

SHORTEST = 5


def _shorter(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


def one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, dropped or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        if len(differ) != 2:
            return len(differ) == 1
        first, second = differ
        return second == first + 1 and a[first] == b[second] and a[second] == b[first]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    at = 0
    while at < len(short) and short[at] == long[at]:
        at += 1
    return short[at:] == long[at + 1:]


def _matchable(word: str, shortest: int) -> bool:
    return len(word) >= shortest and word.isascii() and word.isalpha()


class NearWords:
    """The words of a vocabulary one edit away from a given word."""

    def __init__(self, vocabulary: Iterable[str]) -> None:
        self._under: dict[str, list[str]] = {}
        # A word one letter longer than a vocabulary word may be its typo ("filee"), so the
        # vocabulary is filed from one letter shorter than the words it answers for.
        for word in vocabulary:
            if _matchable(word, SHORTEST - 1):
                for key in {word, *_shorter(word)}:
                    self._under.setdefault(key, []).append(word)

    def near(self, word: str) -> list[str]:
        """The vocabulary's words one edit from `word`, in order (none for a word too short to tell)."""
        if not _matchable(word, SHORTEST):
            return []
        found = {candidate for key in {word, *_shorter(word)} for candidate in self._under.get(key, ())}
        return sorted(candidate for candidate in found if one_edit(word, candidate))
