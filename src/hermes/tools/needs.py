"""A request that asks for several things gets a list that covers each of them.

"make a PDF report of today's trends with a word cloud" needs a trends tool, a PDF tool and a word
cloud tool; ranked as one sentence, its first need (or the longest) fills the list. The request is
split where a clause starts ("and", "then", "with", commas, and their Chinese, Portuguese, German
and Spanish equivalents), each part is searched too, and the lists are merged: the whole request's
best tool first, then each part's best, then the rest in turns. A single need is not split, and its
own best tool still comes first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from hermes.tools.query_language import CJK
from hermes.tools.search import Closeness, Document, ToolIndex, terms

_Item = TypeVar("_Item")

WEAK_MATCHES = 5
MAX_PARTS = 4  # more is a list of things, not a request; the whole request still ranks them
# Where a new need may start. Latin words only as whole words; Chinese joins clauses without spaces.
_JOINERS = (
    r"and|then|with|plus|also|as well as|afterwards|"  # English
    r"e|depois|com|também|tambem|e depois|"  # Portuguese
    r"und|dann|danach|mit|sowie|außerdem|ausserdem|"  # German
    r"y|luego|después|despues|con|también|además|ademas"  # Spanish
)
# Chinese joins clauses with these; single characters (和, 并, 再) are inside too many words (共和,
# 合并, 再次) to split on. A comma between digits is a thousands separator.
_SPLIT = re.compile(rf"(?<!\d),|,(?!\d)|[;，；、]|\s(?:{_JOINERS})\s|并且|然后|同时|以及|还要", re.IGNORECASE)


def parts(request: str) -> list[str]:
    """The request's needs, when it has more than one (else an empty list)."""
    pieces = [piece.strip() for piece in _SPLIT.split(request)]
    needs = [piece for piece in pieces if _says_something(piece)]
    return needs[:MAX_PARTS] if len(needs) > 1 else []


def _says_something(piece: str) -> bool:
    """A part with two words that are not stop words, or two Chinese characters: "Google" in "sign
    in with Google", "a", "它" are no needs of their own."""
    return len(CJK.findall(piece)) >= 2 or sum(len(term) > 1 for term in terms(piece)) >= 2


def covering(whole: Sequence[_Item], each: Sequence[Sequence[_Item]], limit: int) -> list[_Item]:
    """The whole request's ranking, with each part's best tool moved up behind its first: the whole
    request weighs every need at once, and a need it ranked low still shows near the top. A part's
    lower places are not merged in: a part is a fragment ("a word cloud"), whose second and third
    tools are mostly noise (round-robin merging of every part's list cost 4 points of LiveMCPBench's
    tools in the first 12)."""
    merged = list(whole[:1])
    for ranking in each:
        if ranking and ranking[0] not in merged:  # a part whose best is listed already adds nothing
            merged.append(ranking[0])
    merged += [item for item in whole[1:] if item not in merged]
    return merged[:limit]


def whole(index: ToolIndex, request: str, limit: int, closeness: Closeness | None) -> tuple[list[Document], bool]:
    """`index.search` for the request as one sentence, and whether the answer is only weak matches:
    when nothing clears the bar, meaning still ranks every tool, and the closest `WEAK_MATCHES` are
    answered, said to be weak, rather than nothing (the request may be in words no tool uses)."""
    ranked = index.search(request, limit, closeness)
    if ranked:
        return ranked, False
    return (index.nearest(closeness, min(WEAK_MATCHES, limit)) if closeness is not None else []), True


def search(index: ToolIndex, request: str, limit: int,
           closeness: Callable[[str], Closeness | None]) -> tuple[list[Document], bool]:
    """`whole`, and when the request has several needs and a clear answer, each need's search merged in."""
    ranked, weak = whole(index, request, limit, closeness(request))
    if weak:
        return ranked, True
    needs = parts(request)
    if not needs:
        return ranked, False
    return covering(ranked, [index.search(need, limit, closeness(need)) for need in needs], limit), False
