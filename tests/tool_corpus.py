"""The shipped corpus of real tool definitions (tests/data/tool_corpus.jsonl.gz), and the name rules
`tool_search` must keep on it; used by `tests/tools/test_search.py` and `bench/bench_recall.py`."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import mcp_types as types

from hermes.config.model import ToolFilter
from hermes.tools.search import ToolIndex, canonical
from hermes.tools.surface import ServerTools, Surface, build_surface

DATA = Path(__file__).parent / "data"


def corpus() -> dict[str, list[types.Tool]]:
    """Each server's tools, as the server listed them."""
    servers: dict[str, list[types.Tool]] = {}
    with gzip.open(DATA / "tool_corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            servers.setdefault(row["server"], []).append(types.Tool.model_validate(row["tool"]))
    return servers


def folds(servers: dict[str, list[types.Tool]]) -> dict[str, int]:
    """Each server's half of the corpus (0 or 1), for measuring on servers a model was not trained
    on. Servers that list the same tool (name and description) are one family and share a half:
    the same server published twice, or a vendor's MySQL and Postgres servers, would otherwise be
    trained on in one half and measured in the other."""
    family = {name: name for name in servers}

    def root(name: str) -> str:
        while family[name] != name:
            name = family[name]
        return name

    first: dict[tuple[str, str], str] = {}
    for name, tools in sorted(servers.items()):
        for tool in tools:
            description = (tool.description or "").strip()
            if len(description) >= 40:  # "Search" alone says nothing of where it came from
                other = first.setdefault((tool.name, description), name)
                family[root(name)] = root(other)
    return {name: hashlib.sha256(root(name).encode("utf-8")).digest()[0] % 2 for name in servers}


def surface_of(servers: dict[str, list[types.Tool]], names: list[str]) -> Surface:
    return build_surface(ServerTools(name, ToolFilter(), servers[name], False, False) for name in names)


def name_misses(index: ToolIndex, surface: Surface) -> tuple[list[str], list[str]]:
    """The tools a search by name does not put first: (by registered name, by own name or name
    without `mcp__`). A name's carriers (their own name, or the last two or more words of theirs)
    must all rank above every other tool; several servers share a name like `search`."""
    carrying: dict[str, set[str]] = {}
    for tool in surface.tools.values():
        carrying.setdefault(canonical(tool.original), set()).add(tool.name)
        words = canonical(tool.name).split("_")
        for start in range(len(words) - 1):
            carrying.setdefault("_".join(words[start:]), set()).add(tool.name)
    exact: list[str] = []
    suffix: list[str] = []
    for tool in surface.tools.values():
        if [d.key for d in index.search(tool.name, 1)] != [tool.name]:
            exact.append(tool.name)
        for query in (tool.original, tool.name.removeprefix("mcp__")):
            carriers = carrying.get(canonical(query), set())
            ranked = {d.key for d in index.search(query, len(carriers))}
            if tool.name not in ranked or not ranked <= carriers:
                suffix.append(f"{query} -> {tool.name}")
    return exact, suffix
