"""A stand-in for Telegram's Bot API on loopback, for the gateway's Telegram tests.

Telegram's servers cannot be reached from here, so the tests meet python-telegram-bot at its own
seam: the HTTP API it calls (`base_url`, which real deployments point at a self-hosted Bot API
server). This answers the methods the gateway uses, as the Bot API documents them: `getMe`,
`getUpdates` (long polling, `offset` confirming what was seen), `sendMessage` (with an inline
keyboard), `answerCallbackQuery`; a wrong token gets 401 as Telegram answers it. A test plays
the people: `message` and `press` queue updates; `sent` is what the bot sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hermes.loopback import bind_loopback, serve_asgi
from tests.support import PATIENCE

BOT = {"id": 5000, "is_bot": True, "first_name": "hermes", "username": "hermes_test_bot"}


@dataclass
class BotApi:
    token: str
    url: str = ""
    updates: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    answered_presses: list[str] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)
    next_update: int = 100
    next_message: int = 1
    broken: bool = False  # every method fails, its error quoting the path asked for (token and all)

    def _changed(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def _chat(self, chat_id: int) -> dict[str, Any]:
        return {"id": chat_id, "type": "private" if chat_id > 0 else "group", "title": "a group"}

    def message(self, chat_id: int, user_id: int, text: str) -> None:
        self.next_update += 1
        self.next_message += 1
        user = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
        self.updates.append({"update_id": self.next_update, "message": {
            "message_id": self.next_message, "date": 1_700_000_000, "chat": self._chat(chat_id), "from": user,
            "text": text}})
        self._changed()

    def press(self, chat_id: int, user_id: int, label: str) -> None:
        """A press on the button `label` of the bot's last message with buttons in the chat."""
        message = next(m for m in reversed(self.sent) if m["chat"]["id"] == chat_id and m.get("reply_markup"))
        data = next(b["callback_data"] for row in message["reply_markup"]["inline_keyboard"] for b in row
                    if b["text"] == label)
        self.next_update += 1
        user = {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}
        self.updates.append({"update_id": self.next_update, "callback_query": {
            "id": f"press{self.next_update}", "from": user, "chat_instance": "1", "data": data, "message": message}})
        self._changed()

    async def reply(self, chat_id: int, *, after: int = 0, containing: str = "") -> dict[str, Any]:
        with anyio.fail_after(PATIENCE):
            while True:
                for sent in self.sent[after:]:
                    if sent["chat"]["id"] == chat_id and containing in sent["text"]:
                        return sent
                await self.changed.wait()

    async def _method(self, request: Request) -> JSONResponse:
        if request.path_params["token"] != self.token:
            return JSONResponse({"ok": False, "error_code": 401, "description": "Unauthorized"}, status_code=401)
        if self.broken:
            return JSONResponse({"ok": False, "error_code": 500, "description": f"broken at {request.url.path}"},
                                status_code=500)
        params = await _params(request)
        method = request.path_params["method"]
        if method == "getMe":
            return _ok(BOT)
        if method == "getUpdates":
            return _ok(await self._updates(params))
        if method == "sendMessage":
            self.next_message += 1
            sent = {"message_id": self.next_message, "date": 1_700_000_000, "from": BOT,
                    "chat": self._chat(int(params["chat_id"])), "text": params["text"]}
            if params.get("reply_markup"):
                sent["reply_markup"] = params["reply_markup"]
            self.sent.append(sent)
            self._changed()
            return _ok(sent)
        if method == "answerCallbackQuery":
            self.answered_presses.append(str(params["callback_query_id"]))
            return _ok(True)
        return JSONResponse({"ok": False, "error_code": 404, "description": "Not Found: method not found"},
                            status_code=404)

    async def _updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        if offset < 0:  # the last one only: how a client skips what waited before it started
            return self.updates[offset:]
        self.updates = [u for u in self.updates if u["update_id"] >= offset]  # confirmed ones are gone
        if not self.updates:
            with anyio.move_on_after(float(params.get("timeout") or 0)):
                await self.changed.wait()
        return [u for u in self.updates if u["update_id"] >= offset]


async def _params(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await request.body()
        return json.loads(body) if body else {}
    form = await request.form()
    found: dict[str, Any] = {}
    for key, value in form.items():
        text = value if isinstance(value, str) else ""
        try:
            found[key] = json.loads(text) if text[:1] in "{[" else text
        except ValueError:
            found[key] = text
    return found


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"ok": True, "result": result})


@asynccontextmanager
async def bot_api(token: str) -> AsyncIterator[BotApi]:
    api = BotApi(token)
    app = Starlette(routes=[Route("/bot{token}/{method}", api._method, methods=["GET", "POST"])])
    sock = bind_loopback()
    api.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_asgi(app, sock))
        yield api
        tasks.cancel_scope.cancel()
