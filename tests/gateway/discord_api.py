"""A stand-in for Discord's REST API on loopback, and the events its gateway would deliver.

Discord's servers cannot be reached from here, so the tests meet discord.py at its own seams:
its HTTP client (`discord.http.Route.BASE`, pointed here) and its event parser (the payloads the
Discord gateway sends, handed to the library's own `ConnectionState`). The gateway's websocket
connection itself is the part that is not exercised. Payload shapes follow Discord's documented
objects (user, channel, message, interaction).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes.loopback import bind_loopback, serve_asgi
from tests.support import PATIENCE

BOT = {"id": "5000", "username": "hermes", "discriminator": "0", "avatar": None, "bot": True}
WHEN = "2026-01-01T00:00:00+00:00"


def user(user_id: int) -> dict[str, Any]:
    return {"id": str(user_id), "username": f"user{user_id}", "discriminator": "0", "avatar": None}


@dataclass
class DiscordApi:
    token: str
    base: str = ""
    sent: list[dict[str, Any]] = field(default_factory=list)  # each with its channel's id
    deferred: list[str] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)
    next_id: int = 1000

    def _id(self) -> str:
        self.next_id += 1
        return str(self.next_id)

    def message(self, channel: int, author: int, text: str) -> dict[str, Any]:
        """A MESSAGE_CREATE payload from a person in a DM channel."""
        return {"id": self._id(), "channel_id": str(channel), "author": user(author), "content": text,
                "timestamp": WHEN, "edited_timestamp": None, "tts": False, "mention_everyone": False,
                "mentions": [], "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "type": 0}

    def press(self, channel: int, person: int, label: str) -> dict[str, Any]:
        """An INTERACTION_CREATE payload: a press on the button `label` of the bot's last message with
        buttons there."""
        last = next(m for m in reversed(self.sent) if m["channel_id"] == str(channel) and m["components"])
        custom_id = next(c["custom_id"] for row in last["components"] for c in row["components"]
                         if c["label"] == label)
        return {"id": self._id(), "application_id": BOT["id"], "type": 3, "token": f"tok{self.next_id}",
                "version": 1, "channel_id": str(channel), "channel": {"id": str(channel), "type": 1},
                "user": user(person), "data": {"custom_id": custom_id, "component_type": 2}, "message": last,
                "locale": "en-US", "app_permissions": "0", "entitlements": [], "context": 1,
                "authorizing_integration_owners": {}, "attachment_size_limit": 1_000_000}

    async def reply(self, channel: int, *, after: int = 0, containing: str = "") -> dict[str, Any]:
        with anyio.fail_after(PATIENCE):
            while True:
                for sent in self.sent[after:]:
                    if sent["channel_id"] == str(channel) and containing in sent["content"]:
                        return sent
                await self.changed.wait()

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bot {self.token}"

    async def _me(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"message": "401: Unauthorized", "code": 0}, status_code=401)
        return JSONResponse(BOT)

    async def _application(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"message": "401: Unauthorized", "code": 0}, status_code=401)
        return JSONResponse({"id": BOT["id"], "name": "hermes", "icon": None, "description": "", "rpc_origins": [],
                             "bot_public": False, "bot_require_code_grant": False, "owner": user(1),
                             "summary": "", "verify_key": "0" * 64, "team": None, "flags": 0,
                             "interactions_endpoint_url": None})

    async def _channel(self, request: Request) -> Response:
        return JSONResponse({"id": request.path_params["channel"], "type": 1, "recipients": [user(1)]})

    async def _send(self, request: Request) -> Response:
        if not self._authorized(request):
            return JSONResponse({"message": "401: Unauthorized", "code": 0}, status_code=401)
        body = await request.json()
        message = {**self.message(int(request.path_params["channel"]), 0, body.get("content", "")),
                   "author": BOT, "components": body.get("components", []),
                   "allowed_mentions": body.get("allowed_mentions")}
        self.sent.append(message)
        self.changed.set()
        self.changed = anyio.Event()
        return JSONResponse(message)

    async def _callback(self, request: Request) -> Response:
        interaction = request.path_params["interaction"]
        self.deferred.append(interaction)
        if "with_response" not in request.query_params:
            return Response(status_code=204)
        return JSONResponse({"interaction": {"id": interaction, "type": 3, "response_message_loading": False,
                                             "response_message_ephemeral": False},
                             "resource": {"type": 6}})


@asynccontextmanager
async def discord_api(token: str) -> AsyncIterator[DiscordApi]:
    api = DiscordApi(token)
    app = Starlette(routes=[
        Route("/api/v10/users/@me", api._me),
        Route("/api/v10/oauth2/applications/@me", api._application),
        Route("/api/v10/channels/{channel}", api._channel),
        Route("/api/v10/channels/{channel}/messages", api._send, methods=["POST"]),
        Route("/api/v10/interactions/{interaction}/{token}/callback", api._callback, methods=["POST"]),
    ])
    sock = bind_loopback()
    api.base = f"http://127.0.0.1:{sock.getsockname()[1]}/api/v10"
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, app, sock)
        yield api
        tasks.cancel_scope.cancel()
