"""Tool search on a public data set: LiveMCPBench (tests/data/livemcpbench, Apache-2.0; see its README).

70 real MCP servers and their 527 published tools, as one session; 95 real-world tasks annotated with
the tools they need (2.7 on average) and the steps they take. Measured, beside plain BM25 and words
alone in the same run:

- by whole question: of each task's tools, the share in the first 5 and the first 12 (all that
  `tool_search` answers with), averaged over tasks; with the request split into its needs
  (`tools.needs`, what hermes does) and ranked as one sentence (what it did before);
- step by step: each step that uses a tool, searched by its own text: R@1 / R@5 / MRR of its tools;
- step by step at the server level, the setting of Tool-to-Agent Retrieval (Lumer et al.,
  arXiv:2511.01854, Table 1: recall@5 BM25 0.20, MCPZero 0.70, ScaleMCP 0.74, Tool-to-Agent 0.83):
  the ranked tools turned into a list of unique servers, R@1 / R@3 / R@5 of the step's servers.

Nothing here was trained or tuned on this data; the English model's query adapter was trained on
requests for the servers of tests/data/tool_corpus.jsonl.gz, some of which (filesystem, fetch...)
LiveMCPBench also has: the row "servers also in the training corpus" counts them.

    python -m bench.bench_public
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

import mcp_types as types

from bench.common import report
from bench.retrieval import Ranking, Rankings, place, summary
from hermes.config.model import ToolFilter
from hermes.tools.search import documents_of
from hermes.tools.surface import ServerTools, build_surface
from tests.tool_corpus import DATA, corpus

PUBLIC = DATA / "livemcpbench"
VECTOR_CACHE = Path(__file__).parent / ".cache" / "public-vectors.npz"


def load() -> tuple[dict[str, list[types.Tool]], list[dict[str, Any]]]:
    servers: dict[str, list[types.Tool]] = {}
    with gzip.open(PUBLIC / "tools.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            servers.setdefault(row["server"], []).append(types.Tool(
                name=row["name"], description=row["description"] or None, inputSchema=row["input_schema"]))
    tasks = [json.loads(line) for line in (PUBLIC / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    return servers, tasks


def tool_recall(found: list[str], wanted: list[set[str]], depth: int) -> float:
    """The share of the wanted tools (each a set of accepted keys) among the first `depth` found."""
    shown = set(found[:depth])
    return sum(bool(accepted & shown) for accepted in wanted) / len(wanted)


def server_places(found: list[str], server_of: dict[str, str], wanted: set[str]) -> int | None:
    servers = list(dict.fromkeys(server_of[key] for key in found))
    return next((n for n, server in enumerate(servers, 1) if server in wanted), None)


def main() -> None:
    servers, tasks = load()
    surface = build_surface(ServerTools(name, ToolFilter(), tools, False, False) for name, tools in servers.items())
    key_of = {(t.server, t.original): t.name for t in surface.tools.values()}
    server_of = {t.name: t.server for t in surface.tools.values()}
    documents = documents_of(list(surface.tools.values()))
    rankings = Rankings({d.key: n for n, d in enumerate(documents)})
    session = rankings.session(documents)
    chosen: dict[str, Ranking] = {"BM25": Rankings.bm25, "words": Rankings.words}
    notes = add_meaning(rankings, documents, chosen)

    def accepted(task: dict[str, Any], pair: list[str]) -> set[str]:
        keys = {key_of[pair[0], pair[1]]}
        keys |= {key_of[s, n] for s, n in task.get("alternatives", {}).get(f"{pair[0]}/{pair[1]}", [])}
        return keys

    steps = [(task, step) for task in tasks for step in task["steps"] if step["tools"]]
    in_corpus = sorted(set(servers) & set(corpus()))
    rows: list[tuple[str, Any]] = [
        ("data", f"{len(surface.tools)} tools from {len(servers)} servers; {len(tasks)} tasks, "
                 f"{sum(len(t['tools']) for t in tasks)} tool references, {len(steps)} steps with a tool"),
        ("servers also in the training corpus", f"{len(in_corpus)}: {', '.join(in_corpus) or 'none'}"),
        ("by whole question: share of its tools in the first 5 | first 12", ""),
    ]
    started = time.perf_counter()
    for name, ranking in chosen.items():
        found = [ranking(task["question"], session, "") for task in tasks]
        wanted = [[accepted(task, pair) for pair in task["tools"]] for task in tasks]
        five = sum(tool_recall(f, w, 5) for f, w in zip(found, wanted, strict=True)) / len(tasks)
        twelve = sum(tool_recall(f, w, 12) for f, w in zip(found, wanted, strict=True)) / len(tasks)
        rows.append((f"  {name}", f"{five:.1%} | {twelve:.1%}"))
    rows.append(("step by step, tools: R@1 / R@5 / MRR  |  servers (Lumer et al.'s setting): R@1 / R@3 / R@5", ""))
    for name, ranking in chosen.items():
        tool_places, server_hits = [], []
        for task, step in steps:
            found = ranking(step["text"], session, "")
            tool_places.append(place(found, set().union(*(accepted(task, pair) for pair in step["tools"]))))
            server_hits.append(server_places(found, server_of, {server_of[key_of[s, n]] for s, n in step["tools"]}))
        by_server = " / ".join(f"{sum(p is not None and p <= k for p in server_hits) / len(steps):.2f}"
                               for k in (1, 3, 5))
        rows.append((f"  {name}", f"{summary(tool_places)}  |  {by_server}"))
    rows.append(("measured in", f"{time.perf_counter() - started:.0f} s"))
    report("tool_search on LiveMCPBench (public data set)", rows + notes)


def add_meaning(rankings: Rankings, documents: list[Any], chosen: dict[str, Ranking]) -> list[tuple[str, Any]]:
    started = time.perf_counter()
    models = rankings.add_models(documents, VECTOR_CACHE)
    if models is None:
        return [("words and meaning", "not measured: install hermes-mcp-host[semantic] and its models")]
    english, shipped = models.english, models.shipped
    chosen["words + English model, one sentence (before)"] = rankings.meaning("minilm", lambda s: english, split=False)
    chosen["words + both models, one sentence"] = rankings.meaning("both", lambda s: shipped, split=False)
    chosen["words + both models, split into needs (shipped)"] = rankings.meaning("both", lambda s: shipped)
    return [("tools' vectors ready (cached in bench/.cache)", f"{time.perf_counter() - started:.1f} s")]


if __name__ == "__main__":
    main()
