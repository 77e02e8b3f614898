"""Finding tools by name or by meaning: what `tool_search` and `hermes tools search` answer with.

Two kinds of query meet here. A model that already knows a name (from the catalog, an earlier
search, or the user) must get exactly that tool first, however it spells the separators:
`mcp__github__create_issue`, `github__create_issue`, `create_issue` and `createIssue` all name
the same thing. Every other query is words of a request ("did my last build pass?"), ranked with
BM25 over a tool's fields, each weighted by how much it says about what the tool does: the tool's
own name most, then its title, its server's name, its parameters and its description. Words are
stemmed (Snowball, English), so "builds" finds "build" and "listing" finds "list". With the
`semantic` extra, each tool's closeness in meaning to the query (`tools.vectors`) is blended with
its word score, so "make a folder" reaches `create_directory` with no word in common.

An index is built once per surface (the surface changes only on reload), so a query costs one
pass over the postings of its own words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, SupportsFloat

from hermes.tools.lexicon import english_words
from hermes.tools.query_language import OTHER_WORDS, reads_as_english
from hermes.tools.stemming import stem
from hermes.tools.typos import near

# How much one occurrence of a word counts, by field (BM25F): a name is a summary, a description
# is prose whose every word means less.
_WEIGHTS = {"name": 3.0, "title": 2.0, "server": 1.5, "params": 1.0, "description": 1.0}
_K1 = 1.2
_B = 0.75
_STOPWORD_TEXT = (
    "a an the to of in on at for and or my me i we our you your with from by is are was be it this that "
    "these those do does did can could should would will please what which who how when where all any "
    "some there their them its into about as if then than so not no")
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_FOREIGN_STOPWORDS = _STOPWORDS | OTHER_WORDS  # a request in another language has its own small words
# camelCase and digit boundaries inside one token: "getHTTPResponse2x" -> get HTTP Response 2 x
# (A lower-case letter is any letter but A-Z, so "cómo" and "Lösche" stay whole words.)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[^\W\dA-Z_]+|[A-Z]+|\d+|[^\W\d_]+")
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# Words that name the same action or thing in tool vocabularies. A query word also finds its
# group's other words, at a lower weight, so a request in everyday words ("make a folder") reaches
# a tool named in API words (create_directory). Written from common API naming, not from queries.
_RELATED_GROUPS = (
    "create make add new insert generate build", "delete remove erase drop destroy purge",
    "update edit modify change patch set rename", "list show enumerate browse",
    "get fetch read retrieve load view open obtain lookup", "search find query lookup seek locate grep",
    "send post publish submit notify message", "write save store put upload record",
    "download export dump backup", "import upload ingest", "run execute invoke start launch trigger call",
    "stop cancel abort kill terminate halt", "folder directory dir", "file document doc",
    "picture image photo screenshot", "pr pull merge", "repo repository project", "issue ticket bug",
    "mail email inbox", "meeting event calendar appointment schedule", "chat message conversation channel",
    "user account member person people profile", "price cost pricing billing invoice", "note memo",
    "remember memory store", "sum add plus total", "address location place geocode", "map location",
    "weather forecast temperature", "movie film", "song music track", "video clip", "tweet post",
    "summary summarize summarise", "translate translation", "convert transform", "compare diff",
    "log logs event trace", "metric metrics stat stats statistics analytics", "error bug failure exception",
    "deploy release ship publish", "database db sql table", "key secret credential token", "status state health",
    "link url", "website site page web", "stock ticker share quote", "crypto coin token bitcoin",
    "recent latest last newest", "schedule cron timer", "task todo job", "reply respond answer",
    "comment review feedback", "test check verify validate", "code source script", "place venue restaurant",
)


def name_words(text: str) -> list[str]:
    """A name's words, lower-cased: `mcp__github__createIssue` -> mcp github create issue."""
    return [part.lower() for token in _TOKEN.findall(text) for part in _CAMEL.findall(token)]


def canonical(name: str) -> str:
    """One spelling of a name for comparison: words joined by `_` (`create-issue` = `createIssue`)."""
    return "_".join(name_words(name))


def _stem(word: str) -> str:
    return stem("english", word)


def terms(text: str, stopwords: frozenset[str] = _STOPWORDS, shortest: int = 1) -> list[str]:
    """The searchable terms of a text: its name words of `shortest` characters or more, without stop
    words, stemmed."""
    return [_stem(word) for word in name_words(text) if word not in stopwords and len(word) >= shortest]


@lru_cache(maxsize=1)
def _related_terms() -> dict[str, frozenset[str]]:
    """Each stem's related stems (built at the first search, with the stemmer)."""
    related: dict[str, set[str]] = {}
    for group in _RELATED_GROUPS:
        stems = {_stem(word) for word in group.split()}
        for one in stems:
            related.setdefault(one, set()).update(stems - {one})
    return {one: frozenset(others) for one, others in related.items()}


_RELATED_WEIGHT = 0.4  # a related word counts less than the word the query used
_MISTYPED_WEIGHT = 0.4  # a tools' word one edit from a query word no tool uses (`tools.typos`)
BLEND_DEPTH = 50  # how far down each ranking the blend takes its candidates
# A tool's blended score: this share of its word score (as a fraction of what the query's words
# and their related words could earn, so below 1), the rest its cosine. Scores, not ranks, are
# blended: a tool the words find weakly must not outrank one that meaning puts far ahead.
# Reciprocal-rank fusion let it: on the same vectors, bench_recall found 89.1 % of intents in the
# top 5 with it, 91.2 % with a blend.
WORD_SHARE = 0.45
# all-MiniLM-L6-v2 puts unrelated texts at 0.0-0.25 ("teleport" / "ping: answer pong" 0.25) and
# a request and its tool at 0.3 or more ("make a folder" / create_directory 0.37); read through the
# query adapter, requests about nothing here stay below it (tests/tools/test_query_adapter.py).
MIN_SIMILARITY = 0.3


class Cosines(Protocol):
    """One cosine per document: a NumPy row, or a list in tests (this module needs no NumPy)."""

    def __getitem__(self, index: int, /) -> SupportsFloat: ...

    def __len__(self) -> int: ...


@dataclass(frozen=True)
class Closeness:
    """How close in meaning each document is to one query (see `tools.vectors`)."""

    cosine: Cosines  # one per document, in the index's order
    nearest: Sequence[int]  # the documents by cosine, closest first (BLEND_DEPTH of them, or all)
    # How this query's ranking weighs words against meaning, and the cosine a tool needs when no
    # word of the query is in any tool: both depend on the models and the query's language.
    word_share: float = WORD_SHARE
    floor: float = MIN_SIMILARITY


@dataclass(frozen=True)
class Document:
    """One searchable tool: its key (the registered name) and the text of each field."""

    key: str
    server: str
    name: str  # the server's own name of the tool
    title: str
    description: str
    params: str  # parameter names and their descriptions

    def fields(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "server": self.server, "params": self.params,
                "description": self.description}


def parameter_text(schema: dict[str, Any]) -> str:
    """A schema's top-level parameter names and descriptions, as words to search."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    parts: list[str] = []
    for name, spec in properties.items():
        parts.append(str(name))
        if isinstance(spec, dict) and isinstance(spec.get("description"), str):
            parts.append(spec["description"][:300])
    return " ".join(parts)


class ToolIndex:
    """BM25F over documents, plus the exact-name and name-suffix tiers that always come first."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.documents = list(documents)
        self._by_written: dict[str, list[int]] = {}  # key or own name, case-folded -> documents
        self._by_name: dict[str, list[int]] = {}  # canonical key or own name -> documents
        self._by_tail: dict[str, list[int]] = {}  # the last two or more words of a name -> documents
        self._postings: dict[str, list[tuple[int, float]]] = {}  # term -> (document, weighted count)
        lengths: list[float] = []
        for number, document in enumerate(self.documents):
            for written in {document.key.casefold(), document.name.casefold()}:
                self._by_written.setdefault(written, []).append(number)
            spellings = {canonical(document.key), canonical(document.name)}
            for spelling in spellings:
                self._by_name.setdefault(spelling, []).append(number)
            words = canonical(document.key).split("_")
            for start in range(1, len(words) - 1):
                self._by_tail.setdefault("_".join(words[start:]), []).append(number)
            counts: dict[str, float] = {}
            for field, text in document.fields().items():
                for term in terms(text):
                    counts[term] = counts.get(term, 0.0) + _WEIGHTS[field]
            for term, weight in counts.items():
                self._postings.setdefault(term, []).append((number, weight))
            lengths.append(sum(counts.values()))
        # Ties are broken by key: each document's place in key order, so a ranking compares small
        # integers, never touching 5,000 Document objects and their strings (which the meaning
        # models' weights have pushed out of the cache by then: 1-1.5 ms a query).
        self._place = [0] * len(self.documents)
        for place, number in enumerate(sorted(range(len(self.documents)), key=lambda n: self.documents[n].key)):
            self._place[number] = place
        mean = (sum(lengths) / len(lengths)) if lengths else 1.0
        # BM25's length normalisation depends only on the document: computed once, not per query.
        self._norms = [_K1 * (1 - _B + _B * length / mean) for length in lengths]

    def search(self, query: str, limit: int, closeness: Closeness | None = None) -> list[Document]:
        """The best `limit` documents for `query`: exact names, then name suffixes, then by score.

        With `closeness`, the score blends words and meaning: a tool high in either rises, one
        high in both most. When no word of the query is in any tool, meaning alone answers only
        when its closest tool is at the closeness's floor or closer, so a query about nothing here
        is still a miss."""
        named = self._named(query)
        ranked = list(named)
        if len(ranked) < limit:
            seen = set(ranked)
            scores, attainable = self._scores(query)
            place = self._place
            scored = sorted(scores, key=lambda n: (-scores[n], place[n]))
            if closeness is not None:
                scored = self._blend(scored, scores, attainable, closeness)
            ranked += [n for n in scored if n not in seen]
        return [self.documents[n] for n in ranked[:limit]]

    def nearest(self, closeness: Closeness, limit: int) -> list[Document]:
        """The documents closest in meaning, however weakly (none for vectors of another surface)."""
        if len(closeness.cosine) != len(self.documents):
            return []
        return [self.documents[n] for n in closeness.nearest[:limit]]

    def _blend(self, scored: list[int], scores: dict[int, float], attainable: float,
               closeness: Closeness) -> list[int]:
        if len(closeness.cosine) != len(self.documents):  # vectors of another surface: words alone
            return scored
        cosine = {n: _finite(closeness.cosine[n]) for n in {*scored[:BLEND_DEPTH], *closeness.nearest[:BLEND_DEPTH]}}
        nearest = list(closeness.nearest[:BLEND_DEPTH])
        # With no word in any tool, the floor decides whether the query is about anything here: if
        # the closest tool clears it, meaning ranks them all (the second closest may be the one
        # asked for); if not, nothing is a clear match.
        if not scores and nearest and cosine[nearest[0]] < closeness.floor:
            nearest = []
        candidates = [*scored[:BLEND_DEPTH], *nearest]
        share = closeness.word_share
        scale = share / attainable if attainable > 0 else 0.0
        blended = {n: scale * scores.get(n, 0.0) + (1 - share) * cosine[n] for n in candidates}
        place = self._place
        return sorted(blended, key=lambda n: (-blended[n], place[n]))

    def _named(self, query: str) -> list[int]:
        """Documents the query names: the name as written first (case aside), then the same name in
        another spelling, then those whose name ends with a compound word of the query
        (`create_issue` -> `mcp__github__create_issue`)."""
        written: set[int] = set()
        spelled: set[int] = set()
        tails: set[int] = set()
        # The whole query, and each word of it written like a name (`create_issue`, `createIssue`,
        # `mcp__github__…`): a plain word of a sentence ("search the web") names no tool, even
        # where some server calls a tool `search`; the scored ranking weighs it instead.
        pieces = [query.strip(), *(word for word in query.split() if len(name_words(word)) > 1)]
        for piece in dict.fromkeys(p for p in pieces if p):
            written.update(self._by_written.get(piece.casefold(), ()))
            spelling = canonical(piece)
            spelled.update(self._by_name.get(spelling, ()))
            if "_" in spelling:  # a compound name; a single word is left to the scored search
                tails.update(self._by_tail.get(spelling, ()))
        ordered = [*sorted(written, key=self._key_order), *sorted(spelled, key=self._key_order),
                   *sorted(tails, key=self._key_order)]
        return list(dict.fromkeys(ordered))

    def _key_order(self, number: int) -> int:
        return self._place[number]

    def _scores(self, query: str) -> tuple[dict[int, float], float]:
        """Each matching document's BM25F score, and the most the query's words and their related
        words could earn (no document reaches it: each word's share only approaches its limit)."""
        scores: dict[int, float] = {}
        if reads_as_english(query):
            own = terms(query)
        else:  # without its own small words, plus the English of its everyday words, which the tools use
            own = [*terms(query, _FOREIGN_STOPWORDS, shortest=2), *(_stem(word) for word in english_words(query))]
        own = list(dict.fromkeys(own))
        wanted = {term: 1.0 for term in own}
        related = _related_terms()
        for term in own:
            for other in related.get(term, ()):
                wanted.setdefault(other, _RELATED_WEIGHT)
        for term in self._mistyped(query):
            wanted.setdefault(term, _MISTYPED_WEIGHT)
        total = len(self.documents)
        attainable = 0.0
        norms = self._norms
        for term, importance in wanted.items():
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            scale = importance * idf * (_K1 + 1)
            attainable += scale
            for number, weight in postings:
                scores[number] = scores.get(number, 0.0) + scale * weight / (weight + norms[number])
        return scores, attainable

    def _mistyped(self, query: str) -> list[str]:
        """The tools' terms one edit from a query word that no tool uses, as written or as stemmed
        ("calender" -> calendar, "deleet" -> delet): terms are stems, and the index holds them anyway."""
        found: list[str] = []
        for word in dict.fromkeys(name_words(query)):
            if word not in _FOREIGN_STOPWORDS and (stemmed := _stem(word)) not in self._postings:
                for spelling in dict.fromkeys((word, stemmed)):  # most words are their own stem
                    found += near(spelling, self._postings)
        return found


def _finite(value: SupportsFloat) -> float:
    """A cosine, or -1 (as far as can be) for one that is not a number."""
    number = float(value)
    return number if math.isfinite(number) else -1.0


def documents_of(tools: Sequence[Any]) -> list[Document]:
    """Documents for surface tools (anything with name, server, original, description, input_schema
    and an optional MCP definition carrying a title)."""
    found: list[Document] = []
    for tool in tools:
        definition = getattr(tool, "definition", None)
        title = getattr(definition, "title", None) or ""
        found.append(Document(tool.name, tool.server, tool.original, title, tool.description,
                              parameter_text(tool.input_schema)))
    return found
