"""Telling `serve`'s clients when what they can use changed.

Handshake-era clients hear `list_changed` notifications on their connection; 2026-07-28 clients
hear through their `subscriptions/listen` stream (the bus). A client that went away is dropped
without stopping the others.
"""

from __future__ import annotations

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged

from hermes.live.routing import Router


class Announcer:
    def __init__(self, router: Router) -> None:
        self.router = router
        self.bus = InMemorySubscriptionBus()
        self._changed = anyio.Event()

    def changed(self) -> None:
        """The session's surface changed (a listener of `Session.on_surface_change`)."""
        self._changed.set()

    async def upstream_changed(self, server: str, kind: str) -> None:
        """An upstream server's prompts or resources changed: every client hears it, in its era."""
        await self._announce(prompts=kind == "prompts", resources=kind == "resources")

    async def run(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            # A server added, removed or restarted changes all three lists at once.
            await self._announce(tools=True, prompts=True, resources=True)

    async def _announce(self, *, tools: bool = False, prompts: bool = False, resources: bool = False) -> None:
        for wanted, event in ((tools, ToolsListChanged()), (prompts, PromptsListChanged()),
                              (resources, ResourcesListChanged())):
            if wanted:
                await self.bus.publish(event)
        for client in list(self.router.clients):
            try:
                if tools:
                    await client.send_tool_list_changed()
                if resources:
                    await client.send_resource_list_changed()
                if prompts:
                    await client.send_prompt_list_changed()
            except Exception:  # a client that went away must not stop the others
                self.router.clients.discard(client)
