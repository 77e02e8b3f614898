"""`serve --http`: the aggregator's Streamable HTTP app on a loopback port, behind the bearer guard."""

from __future__ import annotations

import sys
from typing import Any

import anyio
from anyio.abc import TaskStatus

from hermes.loopback import BearerGuard, bind_loopback, serve_asgi


async def serve_http(app: Any, port: int, token: str | None,
                     *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    if token is not None:
        app = BearerGuard(app, token, refusal="unauthorized: use the bearer token hermes mcp serve printed")
    sock = bind_loopback(port)
    actual = sock.getsockname()[1]
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, app, sock)
        print(f"hermes MCP server on http://127.0.0.1:{actual}/mcp", file=sys.stderr, flush=True)
        if token is not None:
            print(f"Authorization: Bearer {token}", file=sys.stderr, flush=True)
        else:
            print("warning: no authorization (--no-auth): any process on this machine can use these tools",
                  file=sys.stderr, flush=True)
        task_status.started()
        await anyio.sleep_forever()
