"""Building the tool surface from what each connected server offers.

Pure: the input is plain data about servers (their filter, tools and capabilities), the output is
the registry a model sees plus the entries that were skipped and why. Two tools whose registered
names collide are both skipped: silently letting one win would call the wrong server's tool.
Building is linear in the number of tools, and the surface keeps an index by server so that
per-server questions (status, counts) are too.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types

from hermes.config.model import ToolFilter
from hermes.security.invisible import visible
from hermes.tools.filters import tool_allowed
from hermes.tools.naming import registered_name
from hermes.tools.toolsets import toolset_name
from hermes.tools.utilities import NO_ARGS, PROMPT_UTILITIES, RESOURCE_UTILITIES, UTILITIES, UtilityKind

Kind = Literal["tool"] | UtilityKind


@dataclass(frozen=True)
class ServerTools:
    """What the surface needs to know about one connected server."""

    name: str
    rule: ToolFilter
    tools: list[types.Tool]
    has_resources: bool
    has_prompts: bool


@dataclass(frozen=True)
class SurfaceTool:
    name: str
    server: str
    kind: Kind
    original: str
    description: str
    input_schema: dict[str, Any]
    # The server's own definition of the tool (title, annotations, output schema, ...); None for
    # the utility tools hermes adds.
    definition: types.Tool | None = None

    @property
    def toolset(self) -> str:
        return toolset_name(self.server)

    def to_json(self) -> dict[str, Any]:
        # `original` is kept as the server spelled it, for calls; what is shown of it is made visible.
        return {"name": self.name, "server": self.server, "toolset": self.toolset, "kind": self.kind,
                "original": visible(self.original), "description": self.description,
                "input_schema": self.input_schema}


@dataclass(frozen=True)
class SkippedTool:
    server: str
    original: str
    name: str
    why: str
    denied: bool = False  # a `deny` rule keeps it off (not a collision)

    def to_json(self) -> dict[str, str | bool]:
        return {"server": self.server, "original": self.original, "name": self.name, "why": self.why,
                "denied": self.denied}


@dataclass
class Surface:
    tools: dict[str, SurfaceTool] = field(default_factory=dict)
    skipped: list[SkippedTool] = field(default_factory=list)
    _by_server: dict[str, list[SurfaceTool]] = field(default_factory=dict, repr=False)

    def same_as(self, other: Surface) -> bool:
        """Whether a model would see the same tools (names, definitions) and the same skipped ones."""
        return self.tools == other.tools and self.skipped == other.skipped

    def for_server(self, server: str) -> list[SurfaceTool]:
        return self._by_server.get(server, [])

    def servers(self) -> Iterator[tuple[str, list[SurfaceTool]]]:
        """(server, its tools), sorted by server name."""
        return iter(sorted(self._by_server.items()))


def server_entries(server: ServerTools) -> Iterator[SurfaceTool]:
    """Every entry this server puts on the surface, before collisions with other servers."""
    for tool in server.tools:
        if tool_allowed(tool.name, server.rule):
            shown = visible(tool.name)  # the definition others read; calls use `original`, as spelled
            definition = tool if shown == tool.name else tool.model_copy(update={"name": shown})
            yield SurfaceTool(registered_name(server.name, tool.name), server.name, "tool", tool.name,
                              tool.description or "", dict(tool.input_schema or NO_ARGS), definition)
    wanted: list[UtilityKind] = []
    if server.has_resources and server.rule.resources:
        wanted += RESOURCE_UTILITIES
    if server.has_prompts and server.rule.prompts:
        wanted += PROMPT_UTILITIES
    for kind in wanted:
        if server.rule.include is not None and not tool_allowed(kind, server.rule):
            continue  # an include list registers only what it names (the documents' rule)
        description, schema = UTILITIES[kind]
        # A copy: one consumer editing its schema must not change every server's.
        yield SurfaceTool(registered_name(server.name, kind), server.name, kind, kind,
                          description.format(server=server.name), copy.deepcopy(schema))


def build_surface(servers: Iterable[ServerTools], refused: Callable[[SurfaceTool], str | None] = lambda _: None
                  ) -> Surface:
    """`refused`: why a tool may not be on the surface at all (a `deny` rule), or None."""
    surface = Surface()
    by_name: dict[str, list[SurfaceTool]] = defaultdict(list)
    for server in servers:
        for entry in server_entries(server):
            why = refused(entry)
            if why is not None:
                surface.skipped.append(SkippedTool(entry.server, entry.original, entry.name, why, denied=True))
                continue
            by_name[entry.name].append(entry)
    for name in sorted(by_name):
        entries = by_name[name]
        if len(entries) == 1:
            surface.tools[name] = entries[0]
            surface._by_server.setdefault(entries[0].server, []).append(entries[0])
            continue
        others = ", ".join(f"'{e.original}' of '{e.server}'" for e in entries)
        for entry in entries:
            surface.skipped.append(SkippedTool(entry.server, entry.original, name,
                                               f"name collision: {others} all register as {name}"))
    return surface
