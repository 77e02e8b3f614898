"""Test MCP server (stdio, or Streamable HTTP with --http PORTFILE) with tools that exercise hermes.

Options: --require-bearer TOKEN (HTTP only), --ready-delay S (sleep before serving),
--stderr-secret (print FAKE_API_KEY to stderr at start).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import time

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="toolbox")
parser.add_argument("--http", metavar="PORTFILE")
parser.add_argument("--sse", action="store_true", help="with --http: serve legacy SSE at /sse")
parser.add_argument("--require-bearer")
parser.add_argument("--port", type=int, default=0, help="with --http: a fixed port (0 picks one)")
parser.add_argument("--ready-delay", type=float, default=0.0)
parser.add_argument("--stderr-secret", action="store_true")
parser.add_argument("--hang", action="store_true", help="never answer the handshake")
options = parser.parse_args()

app = MCPServer(options.name)
# Tools that change nothing say so, as a careful server does: a host may run them without asking.
READ_ONLY = ToolAnnotations(read_only_hint=True)
STATE = {"calls": 0, "cancelled": 0}
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


@app.tool(description="Return the text unchanged.", annotations=READ_ONLY)
def echo(text: str) -> str:
    STATE["calls"] += 1
    return text


@app.tool(name="get-weather", description="A tool whose name has a hyphen.", annotations=READ_ONLY)
def get_weather(city: str) -> str:
    return f"sunny in {city}"


@app.tool(name="env-report", description="Names of every environment variable, and one value.", annotations=READ_ONLY)
def env_report(name: str = "") -> dict[str, object]:
    return {"names": sorted(os.environ), "value": os.environ.get(name)}


@app.tool(name="env-digest", description="The SHA-256 of one environment variable's value (never the value).",
          annotations=READ_ONLY)
def env_digest(name: str) -> str:
    import hashlib

    value = os.environ.get(name)
    return "unset" if value is None else hashlib.sha256(value.encode()).hexdigest()


@app.tool(description="Fail with a message that contains the given text.", annotations=READ_ONLY)
def fail(text: str) -> str:
    raise ToolError(f"failure while using {text}")


@app.tool(description="Return a large text.", annotations=READ_ONLY)
def big(size: int) -> str:
    return "a" * (size // 2) + "b" * (size - size // 2)


@app.tool(description="Sleep, then answer; records cancellation.", annotations=READ_ONLY)
async def slow(seconds: float, marker: str = "") -> str:
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if marker:
            with open(marker, "w") as handle:
                handle.write("cancelled")
        raise
    return "done"


@app.tool(description="Return a tiny PNG image.", annotations=READ_ONLY)
def picture() -> Image:
    return Image(data=PNG, format="png")


@app.tool(description="Exit the server process at once.")
def crash() -> str:
    os._exit(3)


@app.tool(name="add-tool", description="Add a tool named 'fresh' and announce the change.")
async def add_tool(ctx: Context) -> str:
    app.add_tool(lambda: "fresh result", name="fresh", description="Added at run time.")
    # Both eras: a 2026-07-28 client hears it on its `subscriptions/listen` stream, a 2025 one on the session.
    await ctx.notify_tools_changed()
    await ctx.session.send_tool_list_changed()
    return "added"


@app.tool(description="Ask the client a question the 2025-11-25 way (on the session), in any era.")
async def ask_old_way(ctx: Context) -> str:
    answer = await ctx.session.elicit_form("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}},
                                           related_request_id=ctx.request_id)
    return f"answered: {answer.action}"


@app.tool(description="Report this process id.", annotations=READ_ONLY)
def whoami() -> int:
    return os.getpid()


@app.resource("test://hello", description="A greeting.")
def hello() -> str:
    return "hello resource"


@app.prompt(description="A greeting prompt.")
def greet(who: str) -> str:
    return f"Say hello to {who}."


def main() -> None:
    if options.stderr_secret:
        print(f"starting with key {os.environ.get('FAKE_API_KEY')}", file=sys.stderr, flush=True)
    print("toolbox starting", file=sys.stderr, flush=True)
    if options.ready_delay:
        time.sleep(options.ready_delay)
    if options.hang:
        for _ in sys.stdin:
            pass
        return
    if options.http:
        asyncio.run(serve_http(options.http))
    else:
        app.run()


async def serve_http(portfile: str) -> None:
    import socket

    import uvicorn
    from starlette.responses import JSONResponse

    inner = app.sse_app() if options.sse else app.streamable_http_app()

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and options.require_bearer:
            headers = dict(scope["headers"])
            if headers.get(b"authorization", b"") != f"Bearer {options.require_bearer}".encode():
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await inner(scope, receive, send)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stall on keep-alive answers
    sock.bind(("127.0.0.1", options.port))
    sock.listen(64)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(guarded, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve([sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    with open(portfile + ".tmp", "w") as handle:
        handle.write(str(port))
    os.replace(portfile + ".tmp", portfile)
    await task


if __name__ == "__main__":
    main()
