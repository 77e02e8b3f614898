"""Deferred tools: a catalog text plus `tool_search`, instead of every schema up front.

The catalog text is byte-stable for the same state, so a prompt cache keeps hitting: groups are
sorted by server, tools by name, and nothing time-dependent is printed. A declared server whose
tools are all hidden keeps one line among the groups, never collapsed away, so a model can tell
the user why those tools are missing instead of guessing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from hermes.background import Job, run_inline
from hermes.security.invisible import one_line
from hermes.tools import chinese_words, latin_words, needs
from hermes.tools.naming import prefix
from hermes.tools.search import Closeness, ToolIndex, documents_of
from hermes.tools.surface import Surface, SurfaceTool
from hermes.tools.toolsets import shown_server
from hermes.tools.vectors import Meaning, Recent, VectorFile
from hermes.validation import counted

if TYPE_CHECKING:
    from hermes.tools.vectors import MeaningModel

log = logging.getLogger(__name__)

SEARCH_TOOL = "tool_search"  # what a model calls to find deferred tools, in chat and through serve
SEARCH_HINT = ("Try again with a concrete service name and an action, for example "
               "'github create issue' or 'blender list objects'.")
_MAX_RESULTS = 12
# A search is a request in a sentence or two; the model's argument is hostile until read, and each
# word costs (the lexicon, the models), so a longer one is cut here.
MAX_QUERY_CHARS = 2000


@dataclass(frozen=True)
class HiddenServer:
    """A declared server whose tools are unavailable, with why (one sentence and what to do)."""

    server: str
    tool_count: int | None
    reason: str

    def line(self) -> str:
        count = f"{self.tool_count} tools unavailable" if self.tool_count is not None else "tools unavailable"
        # The reason may quote a server: one bounded line, so it can never start a section of its own.
        return f"{self.server} ({count}: {one_line(self.reason)})"


# What a tool name may hold in the MCP specification. The catalog is the system prompt: a name
# outside this (prose, a sentence to the model) is shown as its registered name instead.
_SPEC_NAME = re.compile(r"[A-Za-z0-9_.\-/]{1,64}")


def _catalog_name(tool: SurfaceTool) -> str:
    if _SPEC_NAME.fullmatch(tool.original):
        return tool.original
    return tool.name.removeprefix(prefix(tool.server))


def catalog_text(surface: Surface, hidden: list[HiddenServer]) -> str:
    lines: list[tuple[str, str]] = []
    for server, tools in surface.servers():
        names = ", ".join(sorted(_catalog_name(t) for t in tools))
        lines.append((server, f"{shown_server(server)} ({counted(len(tools), 'tool')}): {names}"))
    lines += [(h.server, h.line()) for h in hidden]
    body = "\n".join(text for _, text in sorted(lines))
    return "Tools available through tool_search, by source:\n" + (body or "(none)") + "\n"


WEAK_NOTE = ("none of its words is in a tool, so these are only the closest in meaning (weak matches: read "
             "their descriptions before calling one).")


class SearchIndex:
    """The surface's tools, indexed once per surface (the surface changes only on reload).

    With an encoder (the `semantic` extra), the tools' meaning vectors are computed in a worker
    thread as soon as the index exists, and every search ranks by words and meaning together."""

    def __init__(self, surface: Surface, load: Callable[[], MeaningModel | None] | None = None,
                 cache: VectorFile | None = None, *, start: Callable[[Job], None] = run_inline,
                 recent: Recent | None = None) -> None:
        """`start` runs the encoding (a session's `Background.submit`; inline by default)."""
        self.surface = surface
        self._index = ToolIndex(documents_of(list(surface.tools.values())))
        self._meaning = Meaning(self._index.documents, load, cache, start=start, recent=recent) \
            if load is not None else None

    async def search(self, hidden: list[HiddenServer], query: str) -> tuple[list[SurfaceTool], str]:
        """`search_now`, once the tools' vectors are ready (computed off the event loop)."""
        if self._meaning is None:
            if _first_reading():  # of a dictionary: off the loop
                return await anyio.to_thread.run_sync(self.search_now, hidden, query)
            return self.search_now(hidden, query)
        await self._meaning.ready()
        return await anyio.to_thread.run_sync(self.search_now, hidden, query)

    def _closeness(self, text: str) -> Closeness | None:
        if self._meaning is None or not text.strip():
            return None
        try:
            return self._meaning.closeness(text)
        except Exception as exc:  # the model failing must never cost the search itself
            log.warning("tool search ranks by words alone: the meaning ranking failed: %s", exc)
            return None

    def search_now(self, hidden: list[HiddenServer], query: str) -> tuple[list[SurfaceTool], str]:
        """Matching tools (best first) and, when nothing matches, a text that says what exists and why.
        A request with several needs is searched whole and need by need (`tools.needs`)."""
        query = " ".join(query.split())[:MAX_QUERY_CHARS]  # blank space first, or it could be all that is kept
        ranked, weak_only = needs.search(self._index, query, _MAX_RESULTS, self._closeness)
        found = [self.surface.tools[d.key] for d in ranked]
        if found and not weak_only:
            return found, ""
        sources = [f"{shown_server(server)} ({counted(len(tools), 'tool')})"
                   for server, tools in self.surface.servers()]
        lines = [f"No tool clearly matched '{one_line(query, 200)}': {WEAK_NOTE}" if found else
                 f"No tool matched '{one_line(query, 200)}'."]
        lines.append("Available sources: " + (", ".join(sources) if sources else "none") + ".")
        if hidden:
            lines.append("Hidden sources:")
            lines += [f"- {h.line()}" for h in sorted(hidden, key=lambda h: h.server)]
        lines.append(SEARCH_HINT)
        return found, "\n".join(lines)


def _first_reading() -> bool:
    """Whether a search may read a dictionary for the first time (seconds for German): until both
    were read, searches run in a worker thread, whatever their language (a request's parts are
    read one by one, and one may read as another language than the whole)."""
    return not (chinese_words.loaded() and latin_words.INSTALLED.loaded)


def found_tools(tools: list[SurfaceTool]) -> list[dict[str, Any]]:
    """Each tool's name, description and input schema."""
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


def search_answer(tools: list[SurfaceTool], text: str) -> dict[str, Any] | None:
    """What `tool_search` answers with, as data: the tools found, with the note when they are only weak
    matches; None when there are none (the answer is then `text` alone)."""
    if not tools:
        return None
    return {"note": text, "tools": found_tools(tools)} if text else {"tools": found_tools(tools)}


def search(surface: Surface, hidden: list[HiddenServer], query: str) -> tuple[list[SurfaceTool], str]:
    return SearchIndex(surface).search_now(hidden, query)
