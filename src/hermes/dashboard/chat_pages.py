"""The dashboard's chat page: `hermes chat`'s own agent (provider, tool loop, skills, transcripts)
on the dashboard's session, with approvals as buttons and servers' forms as forms.

One conversation at a time, as in a terminal; a turn runs in the dashboard's task group and is
cancelled with it, or by the page's Stop. Transcripts are the chat's own files, so a conversation
started here is taken up with `hermes chat --resume`, and one from the terminal here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from hermes.agent.chat import Chat
from hermes.dashboard.chat_ui import WebChatUI
from hermes.dashboard.forms import read_json
from hermes.dashboard.streams import event_stream
from hermes.errors import HermesError
from hermes.home import Home

Render = Callable[..., HTMLResponse]
MAX_MESSAGE = 100_000  # characters a user may send in one message


class ChatPages:
    def __init__(self, home: Home, chat: Chat | None, ui: WebChatUI, why_none: str, tasks: TaskGroup,
                 render: Render) -> None:
        """`ui` exists with or without a chat: a server's questions reach every page through it."""
        self.home = home
        self.chat = chat
        self.ui = ui
        self.why_none = why_none  # what the page says when there is no model to chat with
        self.tasks = tasks
        self.render = render
        self._turn: anyio.CancelScope | None = None
        self._switching = False  # New or Resume under way: no turn may start on the conversation meanwhile

    def routes(self) -> list[Route]:
        return [Route("/chat", self.page), Route("/chat/events", self.events), Route("/questions", self.questions),
                Route("/chat/send", self.send, methods=["POST"]), Route("/chat/answer", self.answer, methods=["POST"]),
                Route("/chat/stop", self.stop, methods=["POST"]), Route("/chat/new", self.new, methods=["POST"]),
                Route("/chat/resume", self.resume, methods=["POST"])]

    async def page(self, request: Request) -> Response:
        from hermes.agent.transcripts import recent

        saved = await anyio.to_thread.run_sync(lambda: recent(self.home, limit=10)) if self.chat else []
        from hermes.config.model_settings import MODEL_BLOCK

        return self.render("chat.html", request, chat=self.chat, why_none=self.why_none, saved=saved,
                           model_block=MODEL_BLOCK, config=str(self.home.config),
                           seq=self.ui.events.seq, active="chat")

    async def questions(self, request: Request) -> Response:
        """The questions waiting for an answer, for a page that just opened (its stream starts after)."""
        return JSONResponse(self.ui.pending())

    async def events(self, request: Request) -> Response:
        ui = self.ui
        after = request.query_params.get("after", "0")
        start = int(after) if after.isascii() and after.isdigit() and len(after) <= 18 else 0

        seen = start

        async def fresh() -> bytes | None:
            nonlocal seen
            events = await ui.events.after(seen)
            if events is None:
                return None
            seen = events[-1]["seq"]
            return b"".join(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode() for event in events)

        return event_stream(fresh)

    async def send(self, request: Request) -> Response:
        if self.chat is None:
            return JSONResponse({"error": self.why_none}, status_code=409)
        body = await read_json(request)
        if isinstance(body, Response):
            return body
        text = body.get("text")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_MESSAGE:
            return JSONResponse({"error": f"Say something (at most {MAX_MESSAGE} characters)."}, status_code=400)
        if self._turn is not None or self._switching:
            return JSONResponse({"error": "The model is still answering; wait, or stop it."}, status_code=409)
        self._turn = anyio.CancelScope()
        self.tasks.start_soon(self._run_turn, self.chat, self.ui, text, self._turn)
        return JSONResponse({"seq": self.ui.events.seq}, status_code=202)

    async def _run_turn(self, chat: Chat, ui: WebChatUI, text: str, scope: anyio.CancelScope) -> None:
        ui.events.publish("user", text=chat.session.redactor(text))
        try:
            with scope:
                turn = await chat.turn(text, stream=True)
                ui.events.publish("answer", text=turn.answer, cut_off=turn.cut_off)
            if scope.cancelled_caught:
                ui.events.publish("stopped", text="The turn was stopped; its running tools were cancelled.")
        except HermesError as exc:
            ui.events.publish("error", text=chat.session.redactor(str(exc)))
        except Exception as exc:  # the page must hear that the turn ended, whatever ended it
            ui.events.publish("error", text=chat.session.redactor(f"The turn failed: {exc}"))
        finally:
            self._turn = None
            ui.waiting(None)

    async def answer(self, request: Request) -> Response:
        body = await read_json(request)
        if isinstance(body, Response):
            return body
        values: Any = body.get("values") or {}
        if not isinstance(values, dict):
            return JSONResponse({"error": "The values of a form are an object."}, status_code=400)
        try:
            self.ui.answer(str(body.get("id", "")), str(body.get("choice", "")), values)
        except HermesError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({})

    async def stop(self, request: Request) -> Response:
        if self._turn is not None:
            self._turn.cancel()
        return JSONResponse({})

    async def new(self, request: Request) -> Response:
        if self.chat is None or self._turn is not None or self._switching:
            return JSONResponse({"error": "Not now: no chat, or the model is answering."}, status_code=409)
        self.chat.new()
        self.ui.events.publish("new")
        return JSONResponse({})

    async def resume(self, request: Request) -> Response:
        from hermes.agent.transcripts import find

        if self.chat is None or self._turn is not None or self._switching:
            return JSONResponse({"error": "Not now: no chat, or the model is answering."}, status_code=409)
        self._switching = True
        try:
            body = await read_json(request)
            if isinstance(body, Response):
                return body
            chat = self.chat
            summary = await anyio.to_thread.run_sync(find, chat.home, str(body.get("id", "")))
            count = await anyio.to_thread.run_sync(chat.resume, summary)
        except HermesError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        finally:
            self._switching = False
        self.ui.events.publish("resumed", id=summary.id, messages=count, first=summary.first)
        return JSONResponse({"messages": count})
