"""Words one typing mistake away (`hermes.tools.typos`), and tool search reading through them."""

from __future__ import annotations

import itertools
import random

import mcp_types as types

from hermes.config.model import ToolFilter
from hermes.tools.search import ToolIndex, documents_of
from hermes.tools.surface import ServerTools, build_surface
from hermes.tools.typos import near


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance, the textbook dynamic programme (the reference for one_edit)."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        rows[i][0] = i
    for j in range(len(b) + 1):
        rows[0][j] = j
    for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
        cost = a[i - 1] != b[j - 1]
        rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
        if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
            rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


def test_near_finds_exactly_the_vocabulary_words_one_edit_away() -> None:
    """Against the textbook edit distance, on random words and random edits of them."""
    rng = random.Random(5)
    vocabulary: set[str] = set()
    for _ in range(1_000):
        word = list("".join(rng.choice("abcdez") for _ in range(rng.randint(3, 8))))
        vocabulary.add("".join(word))
        for _ in range(rng.randint(0, 2)):  # up to two random edits of every kind
            at = rng.randrange(len(word))
            kind = rng.choice(["add", "drop", "change", "swap"])
            if kind == "add":
                word.insert(at, rng.choice("abcdez"))
            elif kind == "drop" and len(word) > 1:
                del word[at]
            elif kind == "change":
                word[at] = rng.choice("abcdez")
            elif kind == "swap" and at + 1 < len(word):
                word[at], word[at + 1] = word[at + 1], word[at]
        vocabulary.add("".join(word))
    queries = sorted({word for word in vocabulary if len(word) >= 5})[:120]
    found = {query: near(query, vocabulary) for query in queries}
    expected = {query: sorted(word for word in vocabulary if _distance(query, word) == 1) for query in queries}
    assert found == expected
    assert sum(map(len, found.values())) > 30  # the words did lie one edit apart


def test_near_finds_every_kind_of_single_mistake_and_nothing_further() -> None:
    vocabulary = {"search", "calendar", "file", "files", "delete", "list", "weather"}
    assert near("serach", vocabulary) == ["search"]  # two neighbours swapped
    assert near("calender", vocabulary) == ["calendar"]  # a letter changed
    assert near("seearch", vocabulary) == ["search"]  # a letter added
    assert near("wether", vocabulary) == ["weather"]  # a letter dropped
    assert near("filee", vocabulary) == ["file", "files"]  # one letter longer than a four-letter word
    assert near("delete", vocabulary) == []  # the word itself is no mistake
    assert near("dleeet", vocabulary) == []  # two edits
    assert near("lisst", vocabulary) == ["list"]
    assert near("lst", vocabulary) == [] and near("lisd", vocabulary) == []  # too short to tell
    assert near("sèarch", vocabulary) == []  # the tools' vocabulary is ASCII
    # A query is untrusted: a word of thousands of letters makes no edits at all (it would make
    # 54 per letter, each as long as the word).
    assert near("a" * 100_000, vocabulary | {"a" * 99_999}) == []


def test_a_mistyped_request_finds_the_tool_the_word_it_meant_names() -> None:
    offered = {"calendar": ("list_events", "List the events in a calendar between two dates"),
               "web": ("search", "Search the web and return the top results"),
               "files": ("delete_file", "Delete a file from the workspace")}
    surface = build_surface(ServerTools(server, ToolFilter(), [types.Tool(name=name, description=text,
                                                                          input_schema={"type": "object"})],
                                        False, False) for server, (name, text) in offered.items())
    index = ToolIndex(documents_of(list(surface.tools.values())))
    assert index.search("serach the web for python news", 1)[0].key == "mcp__web__search"
    assert index.search("what's in my calender tomorrow", 1)[0].key == "mcp__calendar__list_events"
    # A word spelt right is not read as another one edit from it.
    assert [d.key for d in index.search("teleport", 3)] == []
