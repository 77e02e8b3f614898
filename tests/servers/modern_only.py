"""An SDK server that speaks only MCP 2026-07-28: it refuses the `initialize` handshake.

Everything a client needs comes the 2026 way: `server/discover`, tools, a resource, a prompt; `ask`
needs the user, the client's model and its roots, asked as one input-required round (SEP-2322)
and answered on the retry; `grow` adds a tool and announces it on `subscriptions/listen`. Over
stdio by default; `--http PORTFILE` serves Streamable HTTP on a free loopback port.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.shared.exceptions import MCPError

parser = argparse.ArgumentParser()
parser.add_argument("--http", metavar="PORTFILE")
parser.add_argument("--never-discover", action="store_true",
                    help="never answer `server/discover` (a server too slow for the client's probe), and refuse "
                         "`initialize` as the official conformance suite's stateless server does: -32020, "
                         "Missing MCP-Protocol-Version header")
options = parser.parse_args()


async def refuse_the_handshake(ctx: Any, call_next: Any) -> Any:
    if ctx.method == "server/discover" and options.never_discover:
        import anyio

        await anyio.sleep_forever()
    if ctx.method == "initialize" and options.never_discover:
        raise MCPError(code=-32020, message="Missing MCP-Protocol-Version header")
    if ctx.method == "initialize":
        raise MCPError(code=types.UNSUPPORTED_PROTOCOL_VERSION, message="this server speaks only MCP 2026-07-28",
                       data={"supported": ["2026-07-28"], "requested": "2025-11-25"})
    return await call_next(ctx)


app = MCPServer("modern-only", middleware=[refuse_the_handshake])


@app.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@app.tool(description="Ask the user, the client's model and its roots, then answer with all three.")
async def ask(ctx: Context) -> str | types.InputRequiredResult:
    answers = ctx.input_responses or {}
    if not answers:
        return types.InputRequiredResult(input_requests={
            "who": types.ElicitRequest(params=types.ElicitRequestFormParams(
                message="Who is asking?", requested_schema={"type": "object", "properties": {
                    "name": {"type": "string", "default": "Ada"}}})),
            "llm": types.CreateMessageRequest(params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text="6x7?"))],
                max_tokens=20)),
            "roots": types.ListRootsRequest()}, request_state="round-1")
    who, llm, roots = answers["who"], answers["llm"], answers["roots"]
    assert isinstance(who, types.ElicitResult) and isinstance(llm, types.CreateMessageResult)
    assert isinstance(roots, types.ListRootsResult)
    said = llm.content.text if isinstance(llm.content, types.TextContent) else "?"
    return f"name={(who.content or {}).get('name')} model={said} roots={len(roots.roots)} state={ctx.request_state}"


@app.tool(description="Add the tool 'grown' and announce it.")
async def grow(ctx: Context) -> str:
    app.add_tool(lambda: "grown result", name="grown", description="Added at run time.")
    await ctx.notify_tools_changed()
    return "grown"


@app.tool(description="Add the prompt 'farewell' and announce it.")
async def grow_prompt(ctx: Context) -> str:
    app.add_prompt(Prompt.from_function(lambda name: f"Say goodbye to {name}.", name="farewell",
                                        description="Say goodbye."))
    await ctx.notify_prompts_changed()
    return "grown"


@app.tool(description="Announce that note://first changed.")
async def touch(ctx: Context) -> str:
    await ctx.notify_resource_updated("note://first")
    return "touched"


@app.resource("note://first", mime_type="text/plain", description="A note.")
def first_note() -> str:
    return "the first note"


@app.prompt(description="Greet someone.")
def greet(name: str) -> str:
    return f"Say hello to {name}."


async def serve_http(portfile: str) -> None:
    import asyncio
    import os

    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app.streamable_http_app(), log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve([sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    Path(portfile + ".tmp").write_text(str(sock.getsockname()[1]))
    os.replace(portfile + ".tmp", portfile)
    await task


if __name__ == "__main__":
    if options.http:
        import asyncio

        asyncio.run(serve_http(options.http))
    else:
        print("modern-only starting", file=sys.stderr, flush=True)
        app.run()
