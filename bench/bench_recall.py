"""How well `tool_search` finds the right tool among thousands of real ones.

The corpus is `tests/data/tool_corpus.jsonl.gz`: the tool lists of real MCP servers from npm and
PyPI (open-source licenses only; see tests/data/build_tool_corpus.py), put on one surface the way
a session does. Four figures:

- exact names: every tool, searched by its registered name (`mcp__server__tool`), must come first;
- the server's own name (`create_issue`) and the name without `mcp__` (`github__create_issue`)
  must rank above every tool that does not carry that name (several servers share `search`);
- recall@5 of hand-written natural-language intents ("did my last build pass?"), over the whole
  corpus and over session-sized surfaces (the intent's server among 19 others, seeded);
- the same recall for the baseline measured in the same run: the previous word-overlap ranking
  (a tool's score is the number of query words in its name, x3, and its description);
- with the `semantic` extra and its model installed, the same recall ranking by words and meaning
  (the tools' vectors are kept in bench/.cache, so only the first run pays for encoding them).

Goal: 100 % for names; recall@5 of intents >= 95 %.

    python -m bench.bench_recall
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from bench.common import report
from hermes.tools import encoder
from hermes.tools.naming import registered_name
from hermes.tools.search import Closeness, ToolIndex, documents_of
from hermes.tools.surface import SurfaceTool
from hermes.tools.vectors import Meaning, VectorFile, closeness_of
from tests.tool_corpus import DATA, corpus, name_misses, surface_of

SESSION_SERVERS = 20
VECTOR_CACHE = Path(__file__).parent / ".cache" / "tool-vectors.npz"


class Baseline:
    """The ranking hermes had before: query words in the server and tool name count 3, in the description 1."""

    _STOP: ClassVar[frozenset[str]] = frozenset(
        {"a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "my", "me", "with", "from", "by", "is"})

    def __init__(self, tools: list[SurfaceTool]) -> None:
        self._postings: dict[str, list[tuple[str, int]]] = {}
        for tool in tools:
            in_name = self._words(f"{tool.server} {tool.original}")
            for word in in_name | self._words(tool.description):
                self._postings.setdefault(word, []).append((tool.name, 3 if word in in_name else 1))

    def _words(self, text: str) -> set[str]:
        return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w and w not in self._STOP}

    def search(self, query: str, limit: int) -> list[str]:
        scores: dict[str, int] = {}
        for word in self._words(query):
            for name, weight in self._postings.get(word, ()):
                scores[name] = scores.get(name, 0) + weight
        return sorted(scores, key=lambda name: (-scores[name], name))[:limit]


def recall(intents: list[dict[str, str]], search: Callable[[str, list[str]], list[str]],
           servers: list[str], *, session: int | None) -> float:
    rng = random.Random(7)
    hits = 0
    for intent in intents:
        names = servers
        if session is not None:
            names = [intent["server"], *rng.sample([s for s in servers if s != intent["server"]], session - 1)]
        hits += registered_name(intent["server"], intent["tool"]) in search(intent["intent"], names)
    return hits / len(intents)


def main() -> None:
    servers = corpus()
    names = sorted(servers)
    intents = [json.loads(line) for line in (DATA / "tool_intents.jsonl").read_text(encoding="utf-8").splitlines()]
    whole = surface_of(servers, names)
    started = time.perf_counter()
    index = ToolIndex(documents_of(list(whole.tools.values())))
    build = time.perf_counter() - started
    baseline = Baseline(list(whole.tools.values()))
    cache: dict[tuple[str, ...], tuple[ToolIndex, Baseline]] = {}

    def indexes(chosen: list[str]) -> tuple[ToolIndex, Baseline]:
        if len(chosen) == len(names):
            return index, baseline
        key = tuple(chosen)
        if key not in cache:
            tools = list(surface_of(servers, chosen).tools.values())
            cache[key] = ToolIndex(documents_of(tools)), Baseline(tools)
        return cache[key]

    def ours(query: str, chosen: list[str]) -> list[str]:
        return [d.key for d in indexes(chosen)[0].search(query, 5)]

    def before(query: str, chosen: list[str]) -> list[str]:
        return indexes(chosen)[1].search(query, 5)

    exact_misses, suffix_misses = name_misses(index, whole)
    total, tails = len(whole.tools), 2 * len(whole.tools)
    exact, tail = total - len(exact_misses), tails - len(suffix_misses)
    started = time.perf_counter()
    full = recall(intents, ours, names, session=None)
    per_query = (time.perf_counter() - started) / len(intents)
    rows: list[tuple[str, Any]] = [
        ("corpus", f"{len(whole.tools)} tools from {len(names)} servers; {len(intents)} intents"),
        ("index build / query (whole corpus)", f"{build * 1e3:.0f} ms / {per_query * 1e3:.2f} ms"),
        ("exact registered name first (goal 100 %)", f"{exact}/{total} ({exact / total:.2%})"),
        ("own name, name without mcp__: carriers first (goal 100 %)", f"{tail}/{tails} ({tail / tails:.2%})"),
        ("intents recall@5, whole corpus", f"{full:.1%} (baseline {recall(intents, before, names, session=None):.1%})"),
        (f"intents recall@5, {SESSION_SERVERS} servers a session",
         f"{recall(intents, ours, names, session=SESSION_SERVERS):.1%} "
         f"(baseline {recall(intents, before, names, session=SESSION_SERVERS):.1%}); goal >= 95 %"),
    ]
    rows += meaning_rows(intents, names, index, indexes)
    report("tool_search recall over real tool definitions", rows)


def meaning_rows(intents: list[dict[str, str]], names: list[str], index: ToolIndex,
                 indexes: Callable[[list[str]], tuple[ToolIndex, Baseline]]) -> list[tuple[str, Any]]:
    model = encoder.load()
    if model is None:
        return [("words and meaning", "not measured: install hermes-mcp-host[semantic] and its model")]
    VECTOR_CACHE.parent.mkdir(exist_ok=True)
    started = time.perf_counter()
    vectors = Meaning(index.documents, lambda: model, VectorFile(VECTOR_CACHE)).vectors()
    assert vectors is not None
    encoded = time.perf_counter() - started
    row_of = {d.key: n for n, d in enumerate(index.documents)}
    queries: dict[str, Any] = {}

    def closeness(query: str, found: ToolIndex) -> Closeness:
        if query not in queries:
            queries[query] = model.encode([query])[0]
        rows = vectors if found is index else vectors[[row_of[d.key] for d in found.documents]]
        return closeness_of(rows, queries[query])

    def chosen_index(chosen: list[str]) -> ToolIndex:
        return indexes(chosen)[0] if len(chosen) < len(names) else index

    def both(query: str, chosen: list[str]) -> list[str]:
        found = chosen_index(chosen)
        return [d.key for d in found.search(query, 5, closeness(query, found))]

    def alone(query: str, chosen: list[str]) -> list[str]:
        found = chosen_index(chosen)
        return [found.documents[n].key for n in closeness(query, found).nearest[:5]]

    def either(query: str, chosen: list[str]) -> list[str]:
        """The ceiling of any blend of these two rankings: the word top 5 and the meaning top 5."""
        return [d.key for d in chosen_index(chosen).search(query, 5)] + alone(query, chosen)

    started = time.perf_counter()
    full = recall(intents, both, names, session=None)
    per_query = (time.perf_counter() - started) / len(intents)
    session = recall(intents, both, names, session=SESSION_SERVERS)
    ceiling = recall(intents, either, names, session=SESSION_SERVERS)
    return [
        ("words and meaning: vectors ready / query (whole corpus)", f"{encoded:.1f} s / {per_query * 1e3:.1f} ms"),
        ("intents recall@5 by words and meaning, whole corpus", f"{full:.1%}"),
        (f"intents recall@5 by words and meaning, {SESSION_SERVERS} servers a session",
         f"{session:.1%}; goal >= 95 %"),
        (f"  meaning alone ({SESSION_SERVERS} servers)",
         f"{recall(intents, alone, names, session=SESSION_SERVERS):.1%}"),
        (f"  ceiling: the tool in the word top 5 or the meaning top 5 ({SESSION_SERVERS} servers)", f"{ceiling:.1%}"),
    ]


if __name__ == "__main__":
    main()
