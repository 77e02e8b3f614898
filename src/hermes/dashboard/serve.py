"""`hermes dashboard`: one session, its control endpoint, and the dashboard on a loopback port.

With a model configured, the session is `hermes chat`'s own (`open_chat`: the CLI platform's
tools, the chat's provider, skills and transcripts), so the chat page and the MCP menu show one
set of servers. Without one, the menu runs over a plain session and the chat page says how to
configure a model.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from anyio.abc import TaskStatus

from hermes.agent.chat import Chat, ChatOptions, NoModel, model_settings, open_chat
from hermes.dashboard.app import Dashboard
from hermes.dashboard.changes import Changes
from hermes.dashboard.chat_ui import WebChatUI
from hermes.dashboard.guard import DashboardGuard
from hermes.errors import HermesError
from hermes.home import Home
from hermes.live.control import publish_control
from hermes.loopback import bind_loopback, serve_asgi
from hermes.mcp.handlers import ClientHandlers
from hermes.security.redact import Redactor
from hermes.session.core import Session, SessionSettings


@dataclass(frozen=True)
class DashboardOptions:
    port: int = 0
    open_browser: bool = True
    # Servers that take longer than this to start join the menu when they are ready.
    start_wait: float = 2.0


@asynccontextmanager
async def _session(home: Home, options: DashboardOptions, ui: WebChatUI, redactor: Redactor
                   ) -> AsyncIterator[tuple[Session, Chat | None, str]]:
    """The session the dashboard shows, the chat on it (or None), and why there is none."""
    chat_options = ChatOptions(platform="cli", wait=options.start_wait)
    why: str | None  # why there is no chat ("": no model configured); None: there is one
    try:
        model_settings(home, chat_options)
    except NoModel:
        why = ""  # the chat page says how to configure one
    except HermesError as exc:
        why = str(exc)
    else:
        why = None
    if why is not None:
        # No model: a server may still ask the user to fill in a form (the page asks it).
        handlers = ClientHandlers(elicitation=ui.elicit)
        async with Session(home, SessionSettings(platform=None, start_wait=options.start_wait), handlers=handlers,
                           redactor=redactor) as session, anyio.create_task_group() as tasks:
            await tasks.start(publish_control, session)  # `hermes mcp reload` and the CLI's edits reach it
            yield session, None, why
            tasks.cancel_scope.cancel()
        return
    async with open_chat(home, chat_options, ui, redactor=redactor) as chat:  # it publishes its control endpoint
        yield chat.session, chat, ""


async def run_dashboard(home: Home, options: DashboardOptions,
                        *, task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED) -> None:
    token = secrets.token_urlsafe(32)
    redactor = Redactor()
    redactor.register(token)
    ui = WebChatUI(redactor)
    changes = Changes(echo=lambda version: ui.events.publish("changed", version=version))
    async with _session(home, options, ui, redactor) as (session, chat, why_none), \
            anyio.create_task_group() as tasks:
        session.lifecycle.listen(changes.bump)
        session.tools.listen(changes.bump)
        tasks.start_soon(changes.watch_files, home)
        sock = bind_loopback(options.port)
        port = sock.getsockname()[1]
        dashboard = Dashboard(session, changes, chat=chat, chat_ui=ui, why_no_chat=why_none, tasks=tasks)
        await tasks.start(serve_asgi, DashboardGuard(dashboard.app(), token, port), sock)
        url = f"http://127.0.0.1:{port}/?token={token}"
        print(f"hermes dashboard: {url}", flush=True)
        print("Open that link (it carries the dashboard's token); Ctrl-C stops the dashboard and its servers.",
              file=sys.stderr, flush=True)
        if options.open_browser:
            import webbrowser

            opened = await anyio.to_thread.run_sync(webbrowser.open, url)
            if not opened:
                print("No browser could be opened here; open the link above in one.", file=sys.stderr, flush=True)
        task_status.started(url)
        try:
            await anyio.sleep_forever()
        finally:
            changes.pulse.close()  # open pages' streams end, so the server stops without waiting for them
            ui.events.pulse.close()
