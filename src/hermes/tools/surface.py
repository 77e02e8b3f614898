"""Building the tool surface from what each connected server offers.

Pure: the input is plain data about servers (their filter, tools and capabilities), the output is
the registry a model sees plus the entries that were skipped and why. Two tools whose registered
names collide are both skipped: silently letting one win would call the wrong server's tool.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types

from hermes.config.model import ToolFilter
from hermes.tools.filters import tool_allowed
from hermes.tools.naming import registered_name
from hermes.tools.toolsets import toolset_name

Kind = Literal["tool", "list_resources", "read_resource", "list_prompts", "get_prompt"]

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
_UTILITIES: dict[Kind, tuple[str, dict[str, Any]]] = {
    "list_resources": ("List the resources of MCP server '{server}'.", _NO_ARGS),
    "read_resource": ("Read one resource of MCP server '{server}' by its URI.", {
        "type": "object", "properties": {"uri": {"type": "string", "description": "The resource URI."}},
        "required": ["uri"]}),
    "list_prompts": ("List the prompts of MCP server '{server}'.", _NO_ARGS),
    "get_prompt": ("Get one prompt of MCP server '{server}' by name, with its arguments.", {
        "type": "object", "properties": {
            "name": {"type": "string", "description": "The prompt name."},
            "arguments": {"type": "object", "additionalProperties": {"type": "string"}}},
        "required": ["name"]}),
}


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

    @property
    def toolset(self) -> str:
        return toolset_name(self.server)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "server": self.server, "toolset": self.toolset, "kind": self.kind,
                "original": self.original, "description": self.description, "input_schema": self.input_schema}


@dataclass(frozen=True)
class SkippedTool:
    server: str
    original: str
    name: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"server": self.server, "original": self.original, "name": self.name, "why": self.why}


@dataclass
class Surface:
    tools: dict[str, SurfaceTool] = field(default_factory=dict)
    skipped: list[SkippedTool] = field(default_factory=list)

    def for_server(self, server: str) -> list[SurfaceTool]:
        return [t for t in self.tools.values() if t.server == server]


def _candidates(server: ServerTools) -> Iterable[SurfaceTool]:
    for tool in server.tools:
        yield SurfaceTool(registered_name(server.name, tool.name), server.name, "tool", tool.name,
                          tool.description or "", dict(tool.input_schema or _NO_ARGS))
    wanted: list[Kind] = []
    if server.has_resources and server.rule.resources:
        wanted += ["list_resources", "read_resource"]
    if server.has_prompts and server.rule.prompts:
        wanted += ["list_prompts", "get_prompt"]
    for kind in wanted:
        description, schema = _UTILITIES[kind]
        yield SurfaceTool(registered_name(server.name, kind), server.name, kind, kind,
                          description.format(server=server.name), schema)


def build_surface(servers: Iterable[ServerTools]) -> Surface:
    surface = Surface()
    by_name: dict[str, list[SurfaceTool]] = defaultdict(list)
    for server in servers:
        for candidate in _candidates(server):
            if candidate.kind == "tool" and not tool_allowed(candidate.original, server.rule):
                continue
            by_name[candidate.name].append(candidate)
    for name in sorted(by_name):
        entries = by_name[name]
        if len(entries) == 1:
            surface.tools[name] = entries[0]
            continue
        others = ", ".join(f"'{e.original}' of '{e.server}'" for e in entries)
        for entry in entries:
            surface.skipped.append(SkippedTool(entry.server, entry.original, name,
                                               f"name collision: {others} all register as {name}"))
    return surface
