"""The control endpoint of a running session, published as a runtime file under HERMES_HOME/run/.

`hermes mcp reload` and `hermes mcp status` find live sessions through these files and talk to
them over loopback HTTP with the file's bearer token. The file is 0600 and removed on a clean exit;
a file left by a killed session is recognised by its dead pid and cleaned up by the next reader.
"""

from __future__ import annotations

import os
import secrets

import anyio
from anyio.abc import TaskStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hermes.apps.runtimefile import remove_runtime_file, write_runtime_file
from hermes.errors import HermesError
from hermes.live.control_client import process_started
from hermes.loopback import BearerGuard, bind_loopback, serve_asgi
from hermes.session.core import Session


def control_app(session: Session, token: str) -> BearerGuard:
    async def status(request: Request) -> JSONResponse:
        return JSONResponse({"pid": os.getpid(), "servers": [s.to_json() for s in session.status()]})

    async def reload(request: Request) -> JSONResponse:
        try:
            report = await session.reload()
        except HermesError as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        return JSONResponse({"pid": os.getpid(), "report": report.to_json()})

    app = Starlette(routes=[Route("/status", status), Route("/reload", reload, methods=["POST"])])
    return BearerGuard(app, token)


async def publish_control(session: Session, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve the control endpoint and keep its runtime file in place until cancelled."""
    token = secrets.token_urlsafe(32)
    session.redactor.register(token)
    sock = bind_loopback()
    port = sock.getsockname()[1]
    path = session.home.run / f"session-{os.getpid()}.json"
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, control_app(session, token), sock)
        write_runtime_file(path, pid=os.getpid(), url=f"http://127.0.0.1:{port}", token=token, kind="session",
                           started=process_started(os.getpid()))
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            remove_runtime_file(path)
            tasks.cancel_scope.cancel()

