"""Running a tool from the dashboard, and the pages of its result and of its MCP Apps view.

`/servers/NAME/tools/TOOL` runs the tool with the arguments typed there (the click is the user's
yes, as `hermes tools call --yes`); the result page shows the text and, when the tool declares a
`ui://` view, the view in a sandboxed frame (`apps.py` says what it may do). The frame's document
and the bridge's requests are the only routes here that answer a view; they are reached by the
page's script with the dashboard's cookie, never by the frame itself, whose origin is opaque.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import anyio
from anyio.abc import TaskGroup
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from hermes.dashboard.apps import APP_POLICY, View, ViewRefused, Views
from hermes.dashboard.forms import Notes, read_form, read_json
from hermes.errors import HermesError
from hermes.session.core import Session
from hermes.tools.views import ui_resource

Render = Callable[..., HTMLResponse]
MAX_TYPED = 64  # tools whose last typed arguments are kept for their page
WAIT_LIMIT = 60.0  # seconds a `?wait=1` state request waits for a run to end


class ToolPages:
    def __init__(self, session: Session, notes: Notes, render: Render, tasks: TaskGroup,
                 changed: Callable[[], None]) -> None:
        """`tasks` runs the tools; `changed` tells open pages a run ended."""
        self.session = session
        self.tasks = tasks
        self.changed = changed
        self.views = Views(session)
        self.notes = notes
        self.render = render
        self._typed: dict[tuple[str, str], str] = {}  # the arguments last typed for a tool, shown again

    def routes(self) -> list[Route]:
        return [
            Route("/servers/{name}/tools/{tool:path}", self.tool_page),
            Route("/servers/{name}/tools/{tool:path}", self.run, methods=["POST"]),
            Route("/views/{view}", self.view_page),
            Route("/views/{view}/frame", self.frame),
            Route("/views/{view}/state", self.state),
            Route("/views/{view}/call", self.call, methods=["POST"]),
            Route("/views/{view}/said", self.said, methods=["POST"]),
        ]

    async def tool_page(self, request: Request) -> Response:
        name, original = request.path_params["name"], request.path_params["tool"]
        tool = self.views.tool(name, original)
        if tool is None:
            return self.render("missing.html", request, status_code=404,
                               what=f"{name} has no tool named {original} on the model's list now: it is not "
                                    f"selected, it is denied, or {name} is not running.")
        # What a model's call meets, as the server's page and `hermes tools list` show it.
        verdict = self.session.tools.verdict(tool, cautious=True)
        return self.render("tool.html", request, server=name, tool=tool, verdict=verdict,
                           typed=self._typed.get((name, original), "{}"),
                           view_uri=ui_resource(tool.definition),
                           schema=json.dumps(tool.input_schema, indent=2, ensure_ascii=False))

    async def run(self, request: Request) -> Response:
        name, original = request.path_params["name"], request.path_params["tool"]
        back = f"/servers/{quote(name, safe='')}/tools/{quote(original, safe='')}"
        form = await read_form(request)
        if isinstance(form, Response):
            return form
        tool = self.views.tool(name, original)
        if tool is None:
            return self.render("missing.html", request, what=f"{name} has no tool named {original} now.",
                               status_code=404)
        typed = str(form.get("arguments") or "{}")
        self._typed[(name, original)] = typed
        while len(self._typed) > MAX_TYPED:
            self._typed.pop(next(iter(self._typed)))
        try:
            arguments = json.loads(typed)
        except (ValueError, RecursionError) as exc:
            said = f"The arguments are not JSON ({exc})." if isinstance(exc, ValueError) else \
                "The arguments are nested too deeply."
            return RedirectResponse(f"{back}?note={self.notes.add(False, said)}", status_code=303)
        if not isinstance(arguments, dict):
            return RedirectResponse(f"{back}?note={self.notes.add(False, 'The arguments must be a JSON object.')}",
                                    status_code=303)
        view = self.views.start(tool, arguments, self.tasks, self.changed)
        return RedirectResponse(f"/views/{view.id}", status_code=303)

    async def view_page(self, request: Request) -> Response:
        view = self.views.get(request.path_params["view"])
        if view is None:
            return self.render("missing.html", request, status_code=404,
                               what="That result is gone: the dashboard keeps the last 32 runs until it stops.")
        return self.render("view.html", request, view=view)

    async def frame(self, request: Request) -> Response:
        view = self.views.get(request.path_params["view"])
        if view is None:
            return PlainTextResponse("No such view.", status_code=404)
        try:
            html = await self.views.html(view)
        except HermesError as exc:
            return PlainTextResponse(self.session.redactor(str(exc)), status_code=502)
        # Its own policy, not the dashboard's: inline script runs, but only inside the sandboxed frame,
        # and nothing is fetched from anywhere.
        return HTMLResponse(html, headers={"content-security-policy": APP_POLICY,
                                           "x-frame-options": "SAMEORIGIN"})

    async def state(self, request: Request) -> Response:
        """The run's state; `?wait=1` answers once the run has ended (or after a minute, still running)."""
        view = self.views.get(request.path_params["view"])
        if view is None:
            return JSONResponse({"error": "No such view."}, status_code=404)
        if request.query_params.get("wait") == "1":
            with anyio.move_on_after(WAIT_LIMIT):
                await view.finished.wait()
        return JSONResponse(view.state())

    async def _posted(self, request: Request) -> tuple[View, dict[str, Any]] | Response:
        """The view a page's script posts for, and the JSON it posted."""
        view = self.views.get(request.path_params["view"])
        if view is None:
            return JSONResponse({"error": "No such view."}, status_code=404)
        body = await read_json(request)
        return body if isinstance(body, Response) else (view, body)

    async def call(self, request: Request) -> Response:
        posted = await self._posted(request)
        if isinstance(posted, Response):
            return posted
        view, body = posted
        name, arguments = body.get("name"), body.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return JSONResponse({"error": "A call names a tool and gives its arguments as an object."},
                                status_code=400)
        try:
            answer: dict[str, Any] = await self.views.call(view, name, arguments, body.get("approved") is True)
        except ViewRefused as exc:
            return JSONResponse({"error": self.session.redactor(str(exc))}, status_code=403)
        return JSONResponse(answer)

    async def said(self, request: Request) -> Response:
        posted = await self._posted(request)
        if isinstance(posted, Response):
            return posted
        view, body = posted
        kind, text = body.get("kind"), body.get("text")
        if kind not in ("message", "log", "link") or not isinstance(text, str):
            return JSONResponse({"error": "Say a message, a log line or a link, as text."}, status_code=400)
        self.views.said(view, kind, text)
        return JSONResponse({})
