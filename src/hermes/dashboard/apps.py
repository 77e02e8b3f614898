"""MCP Apps: a tool's `ui://` view, shown in a sandboxed frame, with the host side kept here.

A tool declares its view in `_meta.ui.resourceUri` (older servers: `_meta["ui/resourceUri"]`).
When the dashboard runs such a tool, it keeps a `View`: the server, the tool, the arguments and
the result. The page shows the result and a frame whose document is the server's `ui://` HTML,
served from this origin with a policy of its own (inline script allowed inside the frame, nothing
loaded from anywhere, no network at all) and `sandbox="allow-scripts"` on the frame, so the view
runs in an opaque origin: it cannot read the dashboard, its cookie or any other server's data.

Everything a view asks goes through the page's bridge (`static/apps.js`) to the routes here: a tool
call reaches only its own server's tools, through the same permission rules a model meets (a tool
that asks shows the user a question in the page, outside the frame, before it runs); a message is
shown to the user, never sent anywhere by itself.
"""

from __future__ import annotations

import base64
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup

from hermes.errors import HermesError
from hermes.session.core import Session
from hermes.tools.naming import registered_name
from hermes.tools.permissions import Permission, Verdict
from hermes.tools.surface import SurfaceTool
from hermes.tools.views import ui_resource

MAX_VIEWS = 32  # views kept for open pages; the oldest goes first
MAX_VIEW_HTML = 5_000_000  # a view's document (single-file bundles of a few hundred KB are usual)
MAX_MESSAGES = 50  # messages and log lines a view may leave for the user
# `sandbox allow-scripts` in the policy itself, not only on the frame: a view's document opened on
# its own (a new tab, a link to it) runs in an opaque origin too, never as the dashboard.
APP_POLICY = ("sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; form-action 'none'; "
              "base-uri 'none'; frame-ancestors 'self'")


class ViewRefused(HermesError):
    """What a view asked for and may not have (another server's tool, a denied tool)."""


@dataclass
class View:
    """One run of a tool from the dashboard: running until `finished` is set, then its result."""

    id: str
    server: str
    tool: SurfaceTool
    arguments: dict[str, Any]
    uri: str | None
    result: dict[str, Any] = field(default_factory=dict)  # the CallToolResult as the view receives it
    text: str = ""  # the result as the page shows it
    is_error: bool = False
    said: list[dict[str, str]] = field(default_factory=list)  # messages and log lines, oldest first
    finished: anyio.Event = field(default_factory=anyio.Event)

    @property
    def done(self) -> bool:
        return self.finished.is_set()

    def finish(self, result: dict[str, Any], text: str, is_error: bool) -> None:
        """The run ended: its result, once; pages waiting on it hear so."""
        self.result, self.text, self.is_error = result, text, is_error
        self.finished.set()

    def state(self) -> dict[str, Any]:
        """What the page's bridge hands the view: the tool, its input and its result."""
        definition = self.tool.definition
        tool = definition.model_dump(by_alias=True, exclude_none=True, mode="json") if definition else \
            {"name": self.tool.original, "inputSchema": self.tool.input_schema}
        return {"tool": tool, "arguments": self.arguments, "result": self.result, "said": self.said,
                "done": self.done}


class Views:
    def __init__(self, session: Session) -> None:
        self.session = session
        self._views: OrderedDict[str, View] = OrderedDict()

    def get(self, view_id: str) -> View | None:
        return self._views.get(view_id)

    def tool(self, server: str, original: str) -> SurfaceTool | None:
        return self.session.surface().tools.get(registered_name(server, original))

    def start(self, tool: SurfaceTool, arguments: dict[str, Any], tasks: TaskGroup, done: Callable[[], None]
              ) -> View:
        """The user ran `tool` from its page (their click is the yes an `ask` rule wants). The call runs
        in `tasks` (a long tool, or one whose server asks the user something, never holds the page);
        `done` hears when it ends."""
        view = View(secrets.token_urlsafe(12), tool.server, tool, self.session.redactor.value(arguments),
                    ui_resource(tool.definition))
        self._views[view.id] = view
        while len(self._views) > MAX_VIEWS:
            self._views.popitem(last=False)
        tasks.start_soon(self._run, view, arguments, done)
        return view

    async def _run(self, view: View, arguments: dict[str, Any], done: Callable[[], None]) -> None:
        async def yes(_tool: SurfaceTool, _arguments: dict[str, Any], _verdict: Verdict) -> str | None:
            return None

        try:
            result = await self.session.call(view.tool.name, arguments, asker=yes)
            view.finish(_as_view_result(result.to_mcp()), result.text, result.is_error)
        except HermesError as exc:
            view.finish({}, self.session.redactor(str(exc)), True)
        except Exception as exc:  # a run that failed in a way nobody foresaw must not stop the dashboard
            logging.getLogger(__name__).exception("a tool run from the dashboard failed")
            view.finish({}, self.session.redactor(f"The run failed: {exc}"), True)
        finally:
            if not view.done:  # cancelled: the dashboard is stopping
                view.finish({}, "The run was stopped.", True)
            done()

    async def html(self, view: View) -> str:
        """The view's document, read from its own server."""
        if view.uri is None:
            raise ViewRefused("This tool has no view.")
        result = await self.session.upstream.read_resource(view.server, view.uri)
        for content in result.contents:
            if isinstance(content, types.TextResourceContents):
                text = content.text
            elif isinstance(content, types.BlobResourceContents):
                text = base64.b64decode(content.blob).decode("utf-8", "replace")
            else:
                continue
            if len(text) > MAX_VIEW_HTML:
                raise ViewRefused(f"The view {view.uri} is larger than {MAX_VIEW_HTML} characters.")
            return text
        raise ViewRefused(f"{view.server} answered {view.uri} with no document.")

    async def call(self, view: View, name: str, arguments: dict[str, Any], approved: bool) -> dict[str, Any]:
        """A view's `tools/call`: its own server's tools only, under the rules a model meets."""
        tool = self.tool(view.server, name)
        # The registered name alone is not proof: server `a` with tool `b__echo` and server `a__b`
        # with tool `echo` share one.
        if tool is None or tool.server != view.server:
            raise ViewRefused(f"'{name}' is not a tool of {view.server} on the surface; a view calls only its "
                              f"own server's tools.")
        verdict = self.session.tools.verdict(tool, cautious=True)
        if verdict.permission is Permission.DENY:
            raise ViewRefused(f"{tool.name} is denied ({verdict.because}).")
        if verdict.permission is Permission.ASK and not approved:
            return {"needsApproval": True, "tool": tool.name, "because": verdict.because}

        async def answer(_tool: SurfaceTool, _arguments: dict[str, Any], _verdict: Verdict) -> str | None:
            return None if approved else "the user did not approve it"

        result = await self.session.call(tool.name, arguments, asker=answer, cautious=True)
        return {"result": _as_view_result(result.to_mcp())}

    def said(self, view: View, kind: str, text: str) -> None:
        """A message or a log line from the view, for the user to read (redacted, bounded)."""
        view.said.append({"kind": kind, "text": self.session.redactor(text)[:4_000]})
        del view.said[:-MAX_MESSAGES]


def _as_view_result(result: types.CallToolResult) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped
