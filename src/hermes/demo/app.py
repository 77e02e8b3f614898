"""A demo desktop app with an MCP bridge, the way a real app should publish it.

It serves MCP (Streamable HTTP) on a loopback port the OS picks at each start, demands a bearer
token that is new at each start, and publishes pid, URL and token with the bridge kit. So every
restart moves it to a new port with a new token, which is exactly what a static URL in a config
file can never follow.

    python -m hermes.demo.app --runtime-file PATH
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

SCENE = ["Camera", "Cube", "Light"]


def build_app(token: str) -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    server = MCPServer("hermes-demo-app", instructions="A demo 3D scene app.")
    # Said, as a real app should: a one-shot run may read without asking, never change the scene.
    reads = ToolAnnotations(read_only_hint=True)

    @server.tool(description="List the objects in the current scene.", annotations=reads)
    def scene_summary() -> str:
        return f"{len(SCENE)} objects: {', '.join(SCENE)}"

    @server.tool(description="Add an object to the scene.")
    def add_object(name: str) -> str:
        SCENE.append(name)
        return f"added {name}; the scene has {len(SCENE)} objects"

    @server.tool(description="Which process of the app answered.", annotations=reads)
    def app_info() -> dict[str, int]:
        return {"pid": os.getpid()}

    from hermes.loopback import BearerGuard

    return BearerGuard(server.streamable_http_app(), token)


async def run(runtime_file: str) -> None:
    import anyio

    from hermes.apps.bridge import new_token, publish_endpoint
    from hermes.loopback import bind_loopback, serve_asgi

    token = new_token()
    sock = bind_loopback()
    port = sock.getsockname()[1]
    async with anyio.create_task_group() as tasks:
        await tasks.start(serve_asgi, build_app(token), sock)
        # On SIGTERM or SIGINT the endpoint is withdrawn first, then connections drain: a client
        # watching the file learns at once that this incarnation is going away.
        try:
            with publish_endpoint(runtime_file, port=port, token=token):
                print(f"demo app {os.getpid()} listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
                await anyio.sleep_forever()
        finally:
            tasks.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="hermes demo desktop app")
    parser.add_argument("--runtime-file", required=True)
    args = parser.parse_args(argv)
    from hermes import interrupts

    with contextlib.suppress(KeyboardInterrupt):
        interrupts.run(run, args.runtime_file, stop_on_signal=True)


if __name__ == "__main__":
    main()
