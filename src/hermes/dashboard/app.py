"""The dashboard's pages and form posts over one running session (Starlette, Jinja2, no build step).

Pages are rendered on the server with autoescaping, so every name, description and log line a
server sends is text, never markup; the one script is a file of ours (`static/dashboard.js`) that
only refreshes the menu when the event stream says something changed and asks before a removal.
Forms work without it: each post answers with a redirect to the page it came from, carrying the
id of a note that says what happened (the sentence the matching CLI command prints, or its error).
"""

from __future__ import annotations

import json
from functools import partial
from importlib import resources
from typing import Any
from urllib.parse import quote

import anyio
from anyio.abc import TaskGroup
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from hermes.agent.chat import Chat
from hermes.dashboard.actions import PERMISSION_CHOICES, Actions, NewServer
from hermes.dashboard.catalog_pages import CatalogPages
from hermes.dashboard.changes import Changes
from hermes.dashboard.chat_pages import ChatPages
from hermes.dashboard.chat_ui import WebChatUI
from hermes.dashboard.forms import Notes, read_form
from hermes.dashboard.streams import event_stream
from hermes.dashboard.tool_pages import ToolPages
from hermes.dashboard.view import ServerRow, menu, tool_rows
from hermes.errors import HermesError
from hermes.session.core import Session

STATIC_TYPES = {"dashboard.css": "text/css; charset=utf-8", "dashboard.js": "text/javascript; charset=utf-8",
                "apps.js": "text/javascript; charset=utf-8", "chat.js": "text/javascript; charset=utf-8",
                "questions.js": "text/javascript; charset=utf-8"}


class Dashboard:
    def __init__(self, session: Session, changes: Changes, *, chat: Chat | None, chat_ui: WebChatUI,
                 why_no_chat: str, tasks: TaskGroup) -> None:
        self.session = session
        self.changes = changes
        self.actions = Actions(session)
        self.notes = Notes()
        self.probes = Notes()  # test reports (JSON), apart from the notes (sentences) a key could be mixed with
        self._draft: dict[str, Any] = {}  # the add form as last typed, when adding failed (no secrets)
        self.tool_pages = ToolPages(session, self.notes, self._page, tasks, changes.bump)
        self.catalog_pages = CatalogPages(session, self.notes, self._page, self.actions.reload)
        self.chat_pages = ChatPages(session.home, chat, chat_ui, why_no_chat, tasks, self._page)
        self.pages = Environment(loader=PackageLoader("hermes.dashboard", "templates"),
                                 autoescape=select_autoescape(default=True, default_for_string=True))
        # One path segment of a URL: a server's or a tool's name with `/`, `?` and `#` encoded too
        # (Jinja's urlencode leaves `/`, which would split a tool's name into two segments).
        self.pages.filters["part"] = lambda value: quote(str(value), safe="")

    def app(self) -> Starlette:
        return Starlette(exception_handlers={HermesError: self._failed}, routes=[
            Route("/", self.index),
            Route("/fragment/menu", self.menu_fragment),
            Route("/fragment/servers/{name}", self.server_fragment),
            Route("/events", self.events),
            Route("/static/{file}", self.static),
            Route("/servers", self.add, methods=["POST"]),
            Route("/servers/{name}", self.server),
            Route("/servers/{name}/{action}", self.server_action, methods=["POST"]),
            Route("/permission", self.permission, methods=["POST"]),
            *self.tool_pages.routes(),
            *self.catalog_pages.routes(),
            *self.chat_pages.routes(),
        ])

    # -- pages -----------------------------------------------------------------------------------

    async def index(self, request: Request) -> HTMLResponse:
        found = await anyio.to_thread.run_sync(menu, self.session)
        draft, self._draft = self._draft, {}
        return self._page("index.html", request, menu=found, version=self.changes.version, draft=draft)

    async def menu_fragment(self, request: Request) -> HTMLResponse:
        found = await anyio.to_thread.run_sync(menu, self.session)
        return self._page("menu.html", request, menu=found)

    async def server(self, request: Request) -> Response:
        from hermes.dashboard.view import log_tail

        name = request.path_params["name"]
        row = await self._row(name)
        if row is None:
            return self._page("missing.html", request, name=name, status_code=404)
        tail = await anyio.to_thread.run_sync(log_tail, self.session, name)
        return self._page("server.html", request, server=row, tools=tool_rows(self.session, name), log=tail,
                          permissions=PERMISSION_CHOICES, version=self.changes.version,
                          probe=self._probe_shown(request))

    async def server_fragment(self, request: Request) -> Response:
        """The part of a server's page that follows its state (the forms below it are left alone)."""
        row = await self._row(request.path_params["name"])
        if row is None:
            return PlainTextResponse("No such server.", status_code=404)
        return self._page("server_status.html", request, server=row)

    async def _row(self, name: str) -> ServerRow | None:
        found = await anyio.to_thread.run_sync(partial(menu, self.session, with_plugins=False))
        return next((s for s in found.servers if s.name == name and s.shadowed_by is None), None)

    async def events(self, request: Request) -> StreamingResponse:
        version = self.changes.version

        async def changed() -> bytes | None:
            nonlocal version
            newer = await self.changes.after(version)
            if newer is None:
                return None
            version = newer
            return f"event: changed\ndata: {version}\n\n".encode()

        return event_stream(changed)

    async def static(self, request: Request) -> Response:
        file = request.path_params["file"]
        if file not in STATIC_TYPES:
            return PlainTextResponse("No such file.", status_code=404)
        body = (resources.files("hermes.dashboard") / "static" / file).read_bytes()
        return Response(body, media_type=STATIC_TYPES[file])

    # -- actions ---------------------------------------------------------------------------------

    async def add(self, request: Request) -> Response:
        form = await read_form(request)
        if isinstance(form, Response):
            return form
        new = NewServer(name=form.get("name", ""), command_line=form.get("command_line", ""),
                        env=form.get("env", ""), url=form.get("url", ""), headers=form.get("headers", ""),
                        scope=form.get("scope", "user"))
        try:
            said = await self.actions.add(new)
        except HermesError as exc:
            # What was typed comes back to fix, but the environment and headers: they may hold secrets,
            # and a secret is never written into a page.
            self._draft = {"name": new.name, "command_line": new.command_line, "url": new.url, "scope": new.scope,
                           "secrets_typed": bool(new.env.strip() or new.headers.strip())}
            key = self.notes.add(False, self.session.redactor(str(exc)))
            return RedirectResponse(f"/?note={key}#add-title", status_code=303)
        self._draft = {}
        self.changes.bump()
        return RedirectResponse(f"/?note={self.notes.add(True, said)}", status_code=303)

    async def server_action(self, request: Request) -> Response:
        name, action = request.path_params["name"], request.path_params["action"]
        form = await read_form(request)
        if isinstance(form, Response):
            return form
        scope = form.get("scope", "user")
        back = form.get("back", "/")
        back = back if back in ("/", f"/servers/{name}") else "/"
        if action in ("enable", "disable"):
            return await self._done(request, back, lambda: self.actions.set_enabled(name, action == "enable", scope))
        if action == "remove":
            return await self._done(request, "/", lambda: self.actions.remove(name, scope))
        if action == "tools":
            picked = form.getlist("tool") if hasattr(form, "getlist") else []
            return await self._done(request, back, lambda: self.actions.select_tools(name, scope, picked))
        if action == "test":
            return await self._test(name)
        return PlainTextResponse("No such action.", status_code=404)

    async def permission(self, request: Request) -> Response:
        form = await read_form(request)
        if isinstance(form, Response):
            return form
        back = form.get("back", "/")
        back = back if back.startswith("/servers/") and "//" not in back and "?" not in back else "/"
        pattern = str(form.get("pattern", ""))
        return await self._done(request, back, lambda: self.actions.permit(pattern, form.get("permission", "")),
                                anchor=f"tool-{quote(pattern, safe='')}")

    async def _test(self, name: str) -> Response:
        from hermes.session.probe import probe

        page = f"/servers/{quote(name, safe='')}"
        try:
            report = await probe(self.session.home, name)
        except HermesError as exc:
            key = self.notes.add(False, self.session.redactor(str(exc)))
            return RedirectResponse(f"{page}?note={key}", status_code=303)
        key = self.probes.add(report.ok, json.dumps(self.session.redactor.value(report.to_json())))
        return RedirectResponse(f"{page}?probe={key}", status_code=303)

    async def _done(self, request: Request, back: str, action: Any, *, anchor: str = "") -> Response:
        """Run `action`; back to `back` (at `anchor`, where the user was) with the note it left."""
        try:
            said = await action()
            key = self.notes.add(True, said)
        except HermesError as exc:
            key = self.notes.add(False, self.session.redactor(str(exc)))
        self.changes.bump()
        return RedirectResponse(f"{back}?note={key}" + (f"#{anchor}" if anchor else ""), status_code=303)

    # -- rendering -------------------------------------------------------------------------------

    async def _failed(self, request: Request, exc: Exception) -> Response:
        """What a page cannot show because a file is broken (a hand edit of config.yaml, say): the
        one sentence that names the file, the line and the rule, instead of an error page."""
        sentence = self.session.redactor(str(exc))
        if request.url.path.startswith(("/fragment/", "/views/", "/chat/")):
            return PlainTextResponse(sentence, status_code=409)
        return self._page("failed.html", request, sentence=sentence, status_code=409)

    def _probe_shown(self, request: Request) -> dict[str, Any] | None:
        taken = self.probes.take(request.query_params.get("probe"))
        if taken is None:
            return None
        report: dict[str, Any] = json.loads(taken[1])
        return report

    def _page(self, template: str, request: Request, *, status_code: int = 200, **values: Any) -> HTMLResponse:
        note = self.notes.take(request.query_params.get("note"))
        # Where the page's event stream starts: nothing that happens after this render is missed.
        body = self.pages.get_template(template).render(note=note, events_seq=self.chat_pages.ui.events.seq, **values)
        return HTMLResponse(body, status_code=status_code)
