"""Upstream resources, resource templates, prompts and completions, for clients that take them as
MCP (`hermes mcp serve`): gathered from every connected server that offers them on this platform,
and redacted and stripped of hidden characters on the way out, like every call result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import anyio
import mcp_types as types
from pydantic import BaseModel

from hermes.mcp.requests import (
    Complete,
    GetPrompt,
    ListPrompts,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    Subscribe,
)
from hermes.mcp.snapshot import ServerNotConnected
from hermes.mcp.states import ConnectionState
from hermes.mcp.supervisor import Supervisor
from hermes.security.clean import clean_text
from hermes.security.redact import Redactor
from hermes.session.roster import Roster

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Kind = Literal["resources", "prompts"]


class Upstream:
    def __init__(self, roster: Roster, redactor: Redactor, *,
                 denied: Callable[[str, Kind], bool] = lambda server, kind: False) -> None:
        """`denied`: a permission rule keeps this server's resources (or prompts) from everyone."""
        self._roster = roster
        self._redactor = redactor
        self._denied = denied

    def _offering(self, kind: Kind) -> list[Supervisor]:
        """Connected servers on this platform that offer `kind` and may show it."""
        roster = self._roster
        allowed = roster.platform_servers()
        found = []
        for name, snapshot in roster.snapshots().items():
            config = roster.server_config(name)
            connection = roster.supervisor(name)
            caps = snapshot.capabilities
            if name not in allowed or not snapshot.connected or caps is None or config is None or connection is None:
                continue
            if self._denied(name, kind):
                continue
            rule = config.tools
            if (caps.resources and rule.resources) if kind == "resources" else (caps.prompts and rule.prompts):
                found.append(connection)
        return found

    async def _gather(self, kind: Kind, fetch: Callable[[Supervisor], Awaitable[list[T]]]
                      ) -> list[tuple[str, T]]:
        """(server, item) from every server offering `kind`, asked at once; a failing one adds nothing."""
        results: dict[str, list[T]] = {}

        async def one(connection: Supervisor) -> None:
            with contextlib.suppress(Exception):
                results[connection.name] = await fetch(connection)

        async with anyio.create_task_group() as tasks:
            for connection in self._offering(kind):
                tasks.start_soon(one, connection)
        return [(server, item) for server in sorted(results) for item in results[server]]

    def _shown(self, item: M) -> M:
        """A listed resource, template or prompt with what people and models read of it cleaned."""
        update = {key: self._text(value) for key in ("title", "description")
                  if isinstance(value := getattr(item, key, None), str)}
        return item.model_copy(update=update) if update else item

    async def list_resources(self) -> list[tuple[str, types.Resource]]:
        found = await self._gather("resources", lambda c: c.request(ListResources()))
        return [(server, self._shown(item)) for server, item in found]

    async def list_resource_templates(self) -> list[tuple[str, types.ResourceTemplate]]:
        found = await self._gather("resources", lambda c: c.request(ListResourceTemplates()))
        return [(server, self._shown(item)) for server, item in found]

    async def list_prompts(self) -> list[tuple[str, types.Prompt]]:
        found = await self._gather("prompts", lambda c: c.request(ListPrompts()))
        return [(server, self._shown(item)) for server, item in found]

    def _server(self, name: str, kind: Kind) -> Supervisor:
        for connection in self._offering(kind):
            if connection.name == name:
                return connection
        snapshot = self._roster.snapshots().get(name)
        raise ServerNotConnected(name, snapshot.state if snapshot else ConnectionState.STOPPED,
                                 f"it offers no {kind} now")

    def _text(self, value: str) -> str:
        return clean_text(value, self._redactor)

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult:
        result = await self._server(server, "resources").request(ReadResource(uri))
        contents = [c.model_copy(update={"text": self._text(c.text)}) if isinstance(c, types.TextResourceContents)
                    else c for c in result.contents]
        return result.model_copy(update={"contents": contents})

    async def subscribe(self, server: str, uri: str, on: bool) -> None:
        await self._server(server, "resources").request(Subscribe(uri, on))

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        result = await self._server(server, "prompts").request(GetPrompt(name, arguments))
        messages = [m.model_copy(update={"content": m.content.model_copy(update={"text": self._text(m.content.text)})})
                    if isinstance(m.content, types.TextContent) else m for m in result.messages]
        update: dict[str, Any] = {"messages": messages}
        if result.description:
            update["description"] = self._text(result.description)
        return result.model_copy(update=update)

    async def complete(self, server: str, ref: types.PromptReference | types.ResourceTemplateReference,
                       argument: dict[str, str], context: dict[str, str] | None) -> types.CompleteResult:
        kind: Kind = "prompts" if isinstance(ref, types.PromptReference) else "resources"
        return await self._server(server, kind).request(Complete(ref, argument, context))
