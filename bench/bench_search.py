"""`tool_search` over a large surface: the word index hermes builds once per surface change, per query,
vs a plain scan that lowercases every tool's name and description and checks each query word.

5,000 tools over 50 servers, 200 different queries (each repeated); the index is built once and
its build time is reported on its own. Goal: a query through the index costs at most 2x the plain
scan (in practice it is far cheaper, since it only touches the tools that share a word).
"""

from __future__ import annotations

import random
import time

import mcp_types as types

from bench.common import median, report
from hermes.config.model import ToolFilter
from hermes.tools.deferred import SearchIndex
from hermes.tools.surface import ServerTools, Surface, build_surface

VERBS = ["create", "list", "delete", "update", "get", "search", "export", "import", "sync", "render"]
NOUNS = ["issue", "file", "object", "scene", "message", "channel", "user", "invoice", "event", "commit"]


def surface(servers: int = 50, per_server: int = 100) -> Surface:
    rng = random.Random(7)
    entries = []
    for s in range(servers):
        tools = [types.Tool(name=f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}_{t}",
                            description=f"{rng.choice(VERBS).title()} a {rng.choice(NOUNS)} in service {s}; "
                                        f"returns the {rng.choice(NOUNS)} it touched.",
                            input_schema={"type": "object"})
                 for t in range(per_server)]
        entries.append(ServerTools(f"service{s}", ToolFilter(), tools, False, False))
    return build_surface(entries)


def plain_scan(found: Surface, query: str) -> list[str]:
    words = query.lower().split()
    return [t.name for t in found.tools.values()
            if any(w in f"{t.server} {t.original} {t.description}".lower() for w in words)]


def main() -> None:
    found = surface()
    rng = random.Random(11)
    queries = [f"service{rng.randrange(50)} {rng.choice(VERBS)} {rng.choice(NOUNS)}" for _ in range(200)]
    started = time.perf_counter()
    index = SearchIndex(found)
    build = time.perf_counter() - started
    indexed, scanned = [], []
    for _ in range(3):
        for query in queries:
            started = time.perf_counter()
            index.search([], query)
            indexed.append(time.perf_counter() - started)
            started = time.perf_counter()
            plain_scan(found, query)
            scanned.append(time.perf_counter() - started)
    ours, plain = median(indexed), median(scanned)
    report(f"tool_search over {len(found.tools)} tools (median of {len(indexed)} queries)", [
        ("index build (once per surface change)", f"{build * 1e3:7.2f} ms"),
        ("query through the index", f"{ours * 1e3:7.3f} ms"),
        ("plain scan (baseline)", f"{plain * 1e3:7.3f} ms"),
        ("ratio (goal <= 2x)", f"{ours / plain:7.2f}x"),
    ])


if __name__ == "__main__":
    main()
