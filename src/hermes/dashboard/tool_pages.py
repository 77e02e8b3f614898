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

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from hermes.dashboard.apps import APP_POLICY, View, ViewRefused, Views
from hermes.dashboard.forms import Notes, read_form, read_json
from hermes.errors import HermesError
from hermes.session.core import Session
from hermes.tools.views import ui_resource

Render = Callable[..., HTMLResponse]


class ToolPages:
    def __init__(self, session: Session, notes: Notes, render: Render) -> None:
        self.session = session
        self.views = Views(session)
        self.notes = notes
        self.render = render

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
            return self.render("missing.html", request, name=f"{name}: {original}", status_code=404)
        verdict = self.session.tools.verdict(tool, cautious=False)
        return self.render("tool.html", request, server=name, tool=tool, verdict=verdict,
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
            return self.render("missing.html", request, name=f"{name}: {original}", status_code=404)
        try:
            arguments = json.loads(str(form.get("arguments") or "{}"))
        except (ValueError, RecursionError) as exc:
            said = f"The arguments are not JSON ({exc})." if isinstance(exc, ValueError) else \
                "The arguments are nested too deeply."
            return RedirectResponse(f"{back}?note={self.notes.add(False, said)}", status_code=303)
        if not isinstance(arguments, dict):
            return RedirectResponse(f"{back}?note={self.notes.add(False, 'The arguments must be a JSON object.')}",
                                    status_code=303)
        try:
            view = await self.views.run(tool, arguments)
        except HermesError as exc:
            return RedirectResponse(f"{back}?note={self.notes.add(False, self.session.redactor(str(exc)))}",
                                    status_code=303)
        return RedirectResponse(f"/views/{view.id}", status_code=303)

    async def view_page(self, request: Request) -> Response:
        view = self.views.get(request.path_params["view"])
        if view is None:
            return self.render("missing.html", request, name="that result (results are kept for the last 32 runs)",
                               status_code=404)
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
        view = self.views.get(request.path_params["view"])
        if view is None:
            return JSONResponse({"error": "No such view."}, status_code=404)
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
