"""What the tool-search benches share: a plain BM25 baseline, the rankings users get, and scores.

A ranking is a function (request, the session's tools' index, the request's server) -> keys, best
first. `Rankings` builds them over one set of documents whose vectors were computed once: words
alone (`ToolIndex`), words and meaning with a given model (through `tools.needs.search`, exactly as
`tool_search` ranks), and plain BM25 for comparison.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.tools import encoder, multilingual, needs
from hermes.tools.encoder import SentenceEncoder
from hermes.tools.meaning_model import PairedModel
from hermes.tools.multilingual import MultilingualEncoder
from hermes.tools.search import Closeness, Document, ToolIndex
from hermes.tools.vectors import CosineTable, Meaning, MeaningModel, QueryMeaning, VectorFile, closeness_of

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
DEPTH = 12  # what tool_search answers with at most


class PlainBM25:
    """Okapi BM25 (k1 1.2, b 0.75) over a tool's server, name and description, lower-cased words: no
    stemming, no field weights, no stop words. The baseline retrieval papers report."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.keys = [d.key for d in documents]
        self._postings: dict[str, list[tuple[int, int]]] = {}
        lengths = []
        for number, d in enumerate(documents):
            words = _TOKEN.findall(f"{d.server} {d.name} {d.description}".lower())
            lengths.append(len(words))
            counts: dict[str, int] = {}
            for word in words:
                counts[word] = counts.get(word, 0) + 1
            for word, count in counts.items():
                self._postings.setdefault(word, []).append((number, count))
        mean = sum(lengths) / len(lengths) if lengths else 1.0
        self._norms = [1.2 * (0.25 + 0.75 * length / mean) for length in lengths]

    def search(self, query: str, limit: int) -> list[str]:
        scores: dict[int, float] = {}
        total = len(self.keys)
        for word in set(_TOKEN.findall(query.lower())):
            postings = self._postings.get(word, [])
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for number, count in postings:
                scores[number] = scores.get(number, 0.0) + idf * count * 2.2 / (count + self._norms[number])
        ranked = sorted(scores, key=lambda n: (-scores[n], self.keys[n]))
        return [self.keys[n] for n in ranked[:limit]]


@dataclass
class Session:
    """One surface's indexes, and which rows of the whole set of vectors its documents are."""

    index: ToolIndex
    bm25: PlainBM25
    rows: Any  # NumPy index array into the whole set's vectors


Ranking = Callable[[str, Session, str], list[str]]


@dataclass(frozen=True)
class Models:
    english: SentenceEncoder
    languages: MultilingualEncoder
    shipped: PairedModel  # both, as tool_search reads with them


@dataclass
class Rankings:
    """Rankings over documents whose vectors (`vectors[name]`, one row per document of `row_of`) were
    computed once; a model reads each request once."""

    row_of: dict[str, int]
    vectors: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, CosineTable] = field(default_factory=dict)  # the vectors' cosine tables, by name
    _read: dict[tuple[int, str], QueryMeaning] = field(default_factory=dict)

    def add_models(self, documents: list[Document], cache: Path) -> Models | None:
        """The installed models, with the vectors of `documents` (cached at `cache`) as "minilm" (the
        English model's) and "both" (the two models' side by side, as tool_search has them); None
        without the `semantic` extra and its models."""
        english, languages = encoder.load(), multilingual.load()
        if english is None or languages is None:
            return None
        cache.parent.mkdir(exist_ok=True)
        minilm = Meaning(documents, lambda: english, VectorFile(cache)).vectors()
        use = Meaning(documents, lambda: PairedModel(None, languages), VectorFile(cache)).vectors()
        assert minilm is not None and use is not None
        shipped = PairedModel(english, languages)
        self.vectors["minilm"] = minilm
        self.vectors["both"] = shipped.join([minilm, use])
        return Models(english, languages, shipped)

    def session(self, documents: list[Document]) -> Session:
        import numpy as np

        return Session(ToolIndex(documents), PlainBM25(documents), np.array([self.row_of[d.key] for d in documents]))

    @staticmethod
    def bm25(query: str, session: Session, server: str) -> list[str]:
        return session.bm25.search(query, DEPTH)

    @staticmethod
    def words(query: str, session: Session, server: str) -> list[str]:
        return [d.key for d in needs.search(session.index, query, DEPTH, lambda text: None)[0]]

    def meaning(self, vectors: str, model: Callable[[str], MeaningModel], *, split: bool = True) -> Ranking:
        """Words and meaning as tool_search ranks, with the model `model(server)` gives for a request
        about `server` (held-out adapters differ by server) and the vectors named `vectors`; with
        `split` false, a request with several needs is ranked as one (as hermes did before)."""

        def rank(query: str, session: Session, server: str) -> list[str]:
            chosen = model(server)
            if vectors not in self.tables:
                self.tables[vectors] = CosineTable(self.vectors[vectors])
            table = self.tables[vectors]

            def closeness(text: str) -> Closeness:
                key = (id(chosen), text)
                if key not in self._read:
                    self._read[key] = chosen.read_query(text)
                read = self._read[key]
                # One table over every row: each row's cosine is its own product (8-bit codes and
                # scales of its own), so it is the one a session's table gives.
                return closeness_of(table(read.vector)[session.rows], word_share=read.word_share, floor=read.floor)

            if not split:
                return [d.key for d in needs.whole(session.index, query, DEPTH, closeness(query))[0]]
            return [d.key for d in needs.search(session.index, query, DEPTH, closeness)[0]]

        return rank


def place(found: list[str], wanted: set[str]) -> int | None:
    """Where the first wanted key is (1-based), or None."""
    return next((n for n, key in enumerate(found, 1) if key in wanted), None)


def summary(places: list[int | None]) -> str:
    """R@1, R@5 and MRR (to depth 12) of the places found."""
    count = max(len(places), 1)
    first = sum(p == 1 for p in places) / count
    five = sum(p is not None and p <= 5 for p in places) / count
    reciprocal = sum(1 / p for p in places if p is not None) / count
    return f"{first * 100:3.0f} / {five * 100:3.0f} / {reciprocal:.2f}"
