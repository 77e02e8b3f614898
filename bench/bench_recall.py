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
- R@1, R@5 and MRR of the multilingual intents (`tests/data/tool_intents_multilingual.jsonl`: 120
  of the English intents with a Chinese, Portuguese, German and Spanish version each, written
  apart from anything hermes trained on), per language, by words and by words and meaning;
- with the `semantic` extra and its model installed, the same recall ranking by words and meaning
  (the tools' vectors are kept in bench/.cache, so only the first run pays for encoding them):
  with the shipped query adapter (trained on other requests for these tools, never on the intents),
  without it, and, when `tests/data/train_query_adapter.py --held-out` has been run, with adapters
  each trained without the servers it is measured on (how a server nobody trained on fares).

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
from tests.tool_corpus import DATA, corpus, folds, name_misses, surface_of

SESSION_SERVERS = 20
VECTOR_CACHE = Path(__file__).parent / ".cache" / "tool-vectors.npz"
HELD_OUT = Path(__file__).parent / ".cache" / "held-out"
MULTILINGUAL = DATA / "tool_intents_multilingual.jsonl"  # written apart from anything hermes trained on
LANGUAGES = ("en", "zh", "pt", "de", "es")  # written by tests/data/train_query_adapter.py --held-out


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


def scores(intents: list[dict[str, str]], search: Callable[[str, list[str]], list[str]], servers: list[str], *,
           session: int | None) -> str:
    """Recall@1, recall@5 and MRR (to depth 5) of `intents`, in the sessions `recall` draws."""
    rng = random.Random(7)
    first = five = reciprocal = 0.0
    for intent in intents:
        names = servers
        if session is not None:
            names = [intent["server"], *rng.sample([s for s in servers if s != intent["server"]], session - 1)]
        found = search(intent["intent"], names)
        wanted = registered_name(intent["server"], intent["tool"])
        if wanted in found[:5]:
            place = found.index(wanted) + 1
            first, five, reciprocal = first + (place == 1), five + 1, reciprocal + 1 / place
    count = len(intents)
    return f"R@1 {first / count:5.1%}  R@5 {five / count:5.1%}  MRR {reciprocal / count:.2f}"


def language_rows(searches: dict[str, Callable[[str, list[str]], list[str]]],
                  names: list[str]) -> list[tuple[str, Any]]:
    """The multilingual intents (tests/data/tool_intents_multilingual.jsonl), per language, by each ranking."""
    rows = [json.loads(line) for line in MULTILINGUAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    found: list[tuple[str, Any]] = [("multilingual intents", f"{len(rows)} ({len(rows) // len(LANGUAGES)} a language)")]
    for ranking, search in searches.items():
        for language in LANGUAGES:
            asked = [row for row in rows if row["lang"] == language]
            found.append((f"  {ranking}, {language}: {SESSION_SERVERS} servers / whole corpus",
                          f"{scores(asked, search, names, session=SESSION_SERVERS)}  /  "
                          f"{scores(asked, search, names, session=None)}"))
    return found


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
    meaning, both = meaning_rows(intents, servers, index, indexes)
    rows += meaning
    searches = {"words": ours, **({"words and meaning": both} if both is not None else {})}
    rows += language_rows(searches, names)
    report("tool_search recall over real tool definitions", rows)


def meaning_rows(intents: list[dict[str, str]], servers: dict[str, list[Any]], index: ToolIndex,
                 indexes: Callable[[list[str]], tuple[ToolIndex, Baseline]]
                 ) -> tuple[list[tuple[str, Any]], Callable[[str, list[str]], list[str]] | None]:
    """The rows, and the words-and-meaning search users get (None without the `semantic` extra)."""
    names = sorted(servers)
    model = encoder.load()
    if model is None:
        return [("words and meaning", "not measured: install hermes-mcp-host[semantic] and its model")], None
    VECTOR_CACHE.parent.mkdir(exist_ok=True)
    started = time.perf_counter()
    vectors = Meaning(index.documents, lambda: model, VectorFile(VECTOR_CACHE)).vectors()
    assert vectors is not None
    encoded = time.perf_counter() - started
    row_of = {d.key: n for n, d in enumerate(index.documents)}
    by_text = {item["intent"]: item["server"] for item in intents}
    held_out = [HELD_OUT / f"fold{fold}.npz" for fold in (0, 1)]
    readers: dict[str, Callable[[str], Any]] = {
        "shipped": lambda text: model.encode_query([text])[0],
        "plain": lambda text: model.encode([text])[0],
    }
    stale = held_out_staleness(held_out)
    if not stale:
        half = folds(servers)
        folder = encoder.bundled_model()
        assert folder is not None
        readers_by_half = [encoder.SentenceEncoder(folder, query_adapter=path) for path in held_out]
        assert all(reader.adapted for reader in readers_by_half)
        readers["held out"] = lambda text: readers_by_half[half[by_text[text]]].encode_query([text])[0]
    queries: dict[tuple[str, str], Any] = {}

    def chosen_index(chosen: list[str]) -> ToolIndex:
        return indexes(chosen)[0] if len(chosen) < len(names) else index

    def closeness(reader: str, query: str, found: ToolIndex) -> Closeness:
        if (reader, query) not in queries:
            queries[reader, query] = readers[reader](query)
        rows = vectors if found is index else vectors[[row_of[d.key] for d in found.documents]]
        return closeness_of(rows, queries[reader, query])

    def both(reader: str) -> Callable[[str, list[str]], list[str]]:
        def search(query: str, chosen: list[str]) -> list[str]:
            found = chosen_index(chosen)
            return [d.key for d in found.search(query, 5, closeness(reader, query, found))]
        return search

    def alone(reader: str) -> Callable[[str, list[str]], list[str]]:
        def search(query: str, chosen: list[str]) -> list[str]:
            found = chosen_index(chosen)
            return [found.documents[n].key for n in closeness(reader, query, found).nearest[:5]]
        return search

    def session(search: Callable[[str, list[str]], list[str]]) -> str:
        return f"{recall(intents, search, names, session=SESSION_SERVERS):.1%}"

    started = time.perf_counter()
    full = recall(intents, both("shipped"), names, session=None)
    per_query = (time.perf_counter() - started) / len(intents)
    trained = ("adapter trained on other tools of these servers, never on these intents or their tools"
               if model.adapted else "no query adapter")
    rows: list[tuple[str, Any]] = [
        ("words and meaning: vectors ready / query (whole corpus)", f"{encoded:.1f} s / {per_query * 1e3:.1f} ms"),
        ("intents recall@5 by words and meaning, whole corpus", f"{full:.1%}"),
        (f"intents recall@5 by words and meaning, {SESSION_SERVERS} servers a session ({trained})",
         f"{session(both('shipped'))}; goal >= 95 %"),
        (f"  meaning alone ({SESSION_SERVERS} servers)", session(alone("shipped"))),
    ]
    held_out_row = f"  adapters that never saw the intent's server: words and meaning ({SESSION_SERVERS} servers)"
    if "held out" in readers:
        rows.append((held_out_row, f"{session(both('held out'))} (meaning alone {session(alone('held out'))})"))
    else:
        rows.append((held_out_row, f"not measured: {stale}"))
    rows += [
        (f"  without the query adapter: words and meaning ({SESSION_SERVERS} servers)",
         f"{session(both('plain'))} (meaning alone {session(alone('plain'))}, "
         f"whole corpus {recall(intents, both('plain'), names, session=None):.1%})"),
    ]
    return rows, both("shipped")


def held_out_staleness(paths: list[Path]) -> str:
    """Why the held-out adapters cannot be measured ('' when they can): missing, or trained on
    other requests than the shipped ones."""
    import numpy as np

    from tests.data.train_query_adapter import trained_on

    for fold, path in enumerate(paths):
        if not path.is_file():
            return "run tests/data/train_query_adapter.py --held-out"
        with np.load(path) as adapter:
            recorded = str(adapter["trained_on"]) if "trained_on" in adapter.files else ""
        if recorded != trained_on(fold):
            return f"{path} was trained on other requests; run tests/data/train_query_adapter.py --held-out"
    return ""


if __name__ == "__main__":
    main()
