"""Telling `serve`'s clients when what they can use changed.

Handshake-era clients hear `list_changed` notifications on their connection; 2026-07-28 clients
hear through their `subscriptions/listen` stream (the bus). A client that went away is dropped
without stopping the others.
"""

from __future__ import annotations

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ToolsListChanged

from hermes.live.routing import Router


class Announcer:
    def __init__(self, router: Router) -> None:
        self.router = router
        self.bus = InMemorySubscriptionBus()
        self._changed = anyio.Event()

    def changed(self) -> None:
        """The session's surface changed (a listener of `Session.on_surface_change`)."""
        self._changed.set()

    async def run(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            await self.bus.publish(ToolsListChanged())
            for client in list(self.router.clients):
                try:
                    await client.send_tool_list_changed()
                    await client.send_resource_list_changed()
                    await client.send_prompt_list_changed()
                except Exception:  # a client that went away must not stop the others
                    self.router.clients.discard(client)
