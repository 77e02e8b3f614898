"""`hermes dashboard`: one session, its control endpoint, and the dashboard on a loopback port."""

from __future__ import annotations

import secrets
import sys
from dataclasses import dataclass

import anyio
from anyio.abc import TaskStatus

from hermes.dashboard.app import Dashboard
from hermes.dashboard.changes import Changes
from hermes.dashboard.guard import DashboardGuard
from hermes.home import Home
from hermes.live.control import publish_control
from hermes.loopback import bind_loopback, serve_asgi
from hermes.session.core import Session, SessionSettings


@dataclass(frozen=True)
class DashboardOptions:
    port: int = 0
    open_browser: bool = True
    # Servers that take longer than this to start join the menu when they are ready.
    start_wait: float = 2.0


async def run_dashboard(home: Home, options: DashboardOptions,
                        *, task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED) -> None:
    token = secrets.token_urlsafe(32)
    changes = Changes()
    # Every configured server, whatever platform it is offered on: this is the settings menu.
    settings = SessionSettings(platform=None, start_wait=options.start_wait)
    async with Session(home, settings) as session, anyio.create_task_group() as tasks:
        session.redactor.register(token)
        session.lifecycle.listen(changes.bump)
        session.tools.listen(changes.bump)
        await tasks.start(publish_control, session)  # `hermes mcp reload` and the CLI's edits reach it
        tasks.start_soon(changes.watch_files, home)
        sock = bind_loopback(options.port)
        port = sock.getsockname()[1]
        await tasks.start(serve_asgi, DashboardGuard(Dashboard(session, changes).app(), token, port), sock)
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
        await anyio.sleep_forever()
