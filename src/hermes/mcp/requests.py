"""The requests a session may make of a connected server besides tool calls, as typed values.

Each request knows how to send itself on an SDK `Client` and what it answers; the supervisor's one
`request()` sends any of them on its live connection. Listings follow every page (at most
`MAX_PAGES`: a server's cursor cannot loop us).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import mcp_types as types
from mcp import Client

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
MAX_PAGES = 100


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=_Page)


class UpstreamRequest(Protocol[T_co]):
    async def send(self, client: Client) -> T_co: ...


async def pages(fetch: Callable[[str | None], Awaitable[P]]) -> list[P]:
    """Every page of a paginated listing."""
    found: list[P] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        found.append(page)
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def list_all_tools(client: Client) -> list[types.Tool]:
    return [tool for page in await pages(lambda cursor: client.list_tools(cursor=cursor)) for tool in page.tools]


@dataclass(frozen=True)
class ListResources:
    async def send(self, client: Client) -> list[types.Resource]:
        return [r for page in await pages(lambda c: client.list_resources(cursor=c)) for r in page.resources]


@dataclass(frozen=True)
class ListResourceTemplates:
    async def send(self, client: Client) -> list[types.ResourceTemplate]:
        return [t for page in await pages(lambda c: client.list_resource_templates(cursor=c))
                for t in page.resource_templates]


@dataclass(frozen=True)
class ReadResource:
    uri: str

    async def send(self, client: Client) -> types.ReadResourceResult:
        return await client.read_resource(self.uri)


@dataclass(frozen=True)
class Subscribe:
    uri: str
    on: bool = True  # False: unsubscribe

    async def send(self, client: Client) -> None:
        if self.on:
            await client.subscribe_resource(self.uri)
        else:
            await client.unsubscribe_resource(self.uri)


@dataclass(frozen=True)
class ListPrompts:
    async def send(self, client: Client) -> list[types.Prompt]:
        return [p for page in await pages(lambda c: client.list_prompts(cursor=c)) for p in page.prompts]


@dataclass(frozen=True)
class GetPrompt:
    name: str
    arguments: dict[str, str] | None = None

    async def send(self, client: Client) -> types.GetPromptResult:
        return await client.get_prompt(self.name, self.arguments)


@dataclass(frozen=True)
class Complete:
    ref: types.PromptReference | types.ResourceTemplateReference
    argument: dict[str, str]
    context: dict[str, str] | None = None

    async def send(self, client: Client) -> types.CompleteResult:
        return await client.complete(self.ref, self.argument, context_arguments=self.context)
