"""The four utility tools a server with resources or prompts gets, and how their answers read.

`list_resources` / `read_resource` and `list_prompts` / `get_prompt` turn a server's resources and
prompts into tools a model can call; this module holds their descriptions and schemas and renders
what the server answered into the text (and structured data) a model reads.
"""

from __future__ import annotations

from typing import Any, Literal

import mcp_types as types

from hermes.tools.results import RenderedResult, cap

UtilityKind = Literal["list_resources", "read_resource", "list_prompts", "get_prompt"]
RESOURCE_UTILITIES: tuple[UtilityKind, ...] = ("list_resources", "read_resource")
PROMPT_UTILITIES: tuple[UtilityKind, ...] = ("list_prompts", "get_prompt")

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}
UTILITIES: dict[UtilityKind, tuple[str, dict[str, Any]]] = {
    "list_resources": ("List the resources of MCP server '{server}'.", NO_ARGS),
    "read_resource": ("Read one resource of MCP server '{server}' by its URI.", {
        "type": "object", "properties": {"uri": {"type": "string", "description": "The resource URI."}},
        "required": ["uri"]}),
    "list_prompts": ("List the prompts of MCP server '{server}'.", NO_ARGS),
    "get_prompt": ("Get one prompt of MCP server '{server}' by name, with its arguments.", {
        "type": "object", "properties": {
            "name": {"type": "string", "description": "The prompt name."},
            "arguments": {"type": "object", "additionalProperties": {"type": "string"}}},
        "required": ["name"]}),
}


def resource_listing(resources: list[types.Resource]) -> RenderedResult:
    text = "\n".join(f"{r.uri}\t{r.name}\t{r.description or ''}".rstrip() for r in resources)
    listing = types.ListResourcesResult(resources=resources)
    return RenderedResult(cap(text or "(no resources)"), listing.model_dump(mode="json", by_alias=True), False)


def resource_contents(contents: types.ReadResourceResult) -> RenderedResult:
    text = "\n".join(c.text if isinstance(c, types.TextResourceContents) else f"[binary {c.uri}]"
                     for c in contents.contents)
    return RenderedResult(cap(text), None, False)


def prompt_listing(prompts: list[types.Prompt]) -> RenderedResult:
    text = "\n".join(f"{p.name}\t{p.description or ''}".rstrip() for p in prompts)
    listing = types.ListPromptsResult(prompts=prompts)
    return RenderedResult(cap(text or "(no prompts)"), listing.model_dump(mode="json", by_alias=True), False)


def prompt_messages(prompt: types.GetPromptResult) -> RenderedResult:
    def shown(content: types.ContentBlock) -> str:
        return content.text if isinstance(content, types.TextContent) else f"[{content.type}]"

    text = "\n".join(f"{m.role}: {shown(m.content)}" for m in prompt.messages)
    return RenderedResult(cap(text), None, False)


def prompt_arguments(arguments: dict[str, Any]) -> dict[str, str] | None:
    """`get_prompt`'s `arguments`, as the text values MCP prompts take (None when absent)."""
    raw = arguments.get("arguments")
    if not isinstance(raw, dict):
        return None
    return {str(k): v if isinstance(v, str) else str(v) for k, v in raw.items()}
