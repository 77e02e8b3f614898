"""Words one typing mistake away (`hermes.tools.typos`), and tool search reading through them."""

from __future__ import annotations

import itertools
import random
import string

import mcp_types as types

from hermes.config.model import ToolFilter
from hermes.tools.search import ToolIndex, documents_of
from hermes.tools.surface import ServerTools, build_surface
from hermes.tools.typos import NearWords, one_edit


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


def test_one_edit_agrees_with_the_edit_distance_on_random_pairs() -> None:
    rng = random.Random(5)
    pairs = []
    for _ in range(20_000):
        word = "".join(rng.choice("abcde") for _ in range(rng.randint(0, 7)))
        other = list(word)
        for _ in range(rng.randint(0, 2)):  # up to two random edits of every kind
            at = rng.randint(0, len(other))
            kind = rng.choice(["add", "drop", "change", "swap"])
            if kind == "add":
                other.insert(at, rng.choice("abcde"))
            elif other and kind == "drop":
                del other[min(at, len(other) - 1)]
            elif other and kind == "change":
                other[min(at, len(other) - 1)] = rng.choice("abcde")
            elif len(other) > 1 and kind == "swap":
                at = min(at, len(other) - 2)
                other[at], other[at + 1] = other[at + 1], other[at]
        pairs.append((word, "".join(other)))
    assert [one_edit(a, b) for a, b in pairs] == [_distance(a, b) == 1 for a, b in pairs]
    assert sum(one_edit(a, b) for a, b in pairs) > 3000  # the pairs did hold single edits


def test_near_words_finds_every_kind_of_single_mistake_and_nothing_further() -> None:
    near = NearWords(["search", "calendar", "file", "files", "delete", "list", "weather"])
    assert near.near("serach") == ["search"]  # two neighbours swapped
    assert near.near("calender") == ["calendar"]  # a letter changed
    assert near.near("seearch") == ["search"]  # a letter added
    assert near.near("wether") == ["weather"]  # a letter dropped
    assert near.near("filee") == ["file", "files"]  # one letter longer than a four-letter word
    assert near.near("delete") == []  # the word itself is no mistake
    assert near.near("dleeet") == []  # two edits
    assert near.near("lisst") == ["list"]
    assert near.near("lst") == [] and near.near("lisd") == []  # too short to tell a mistake from a word
    assert near.near("sèarch") == []  # the tools' vocabulary is ASCII


def test_a_vocabulary_of_every_ascii_word_answers_in_bounded_time() -> None:
    words = ["".join(letters) for letters in itertools.product(string.ascii_lowercase[:6], repeat=5)]
    near = NearWords(words)  # 7,776 words, each one edit from dozens of others
    found = near.near("abcde")
    assert found and all(one_edit("abcde", word) for word in found)
    assert len(found) == len({*found})


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
