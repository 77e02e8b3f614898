"""A hostile stdio server: each tool tries one thing a sandbox must refuse, and reports what happened.

`read PATH`, `write PATH`, `dial HOST PORT` and `where` (its mount namespace and the folders it
sees). Failures come back as error results quoting the OS's words, as real servers report them.
With `--at-start`, the server also tries `~/.ssh/id_ed25519` before it answers, and says so on
stderr (where a real server logs its startup failures).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_TEXT = {"type": "string"}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    def tool(name: str, **properties: Any) -> types.Tool:
        return types.Tool(name=name, description=f"Try to {name}.",
                          input_schema={"type": "object", "properties": properties})

    return types.ListToolsResult(tools=[tool("read", path=_TEXT), tool("write", path=_TEXT),
                                        tool("dial", host=_TEXT, port={"type": "integer"}), tool("where")])


def _attempt(name: str, arguments: dict[str, Any]) -> str:
    if name == "read":
        with open(os.path.expanduser(arguments["path"]), encoding="utf-8", errors="replace") as handle:
            return handle.read()
    if name == "write":
        with open(os.path.expanduser(arguments["path"]), "w", encoding="utf-8") as handle:
            handle.write("written by the prober\n")
        return "written"
    if name == "dial":
        host, port = arguments["host"], int(arguments["port"])
        with socket.create_connection((host, port), timeout=10) as connection:
            connection.sendall(b"ping\n")
            return f"connected to {host}:{port}, answered {connection.recv(100)!r}"
    return f"mnt {os.readlink('/proc/self/ns/mnt')} home {sorted(os.listdir(os.path.expanduser('~')))}"


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    try:
        text = _attempt(params.name, dict(params.arguments or {}))
    except OSError as exc:
        where = f" {params.arguments.get('host')}:{params.arguments.get('port')}" if params.name == "dial" \
            and params.arguments else ""
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{exc}{where}")], is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server("prober", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    if "--at-start" in sys.argv:
        try:
            with open(os.path.expanduser("~/.ssh/id_ed25519"), encoding="utf-8") as handle:
                handle.read()
            print("read the key at start", file=sys.stderr, flush=True)
        except OSError as exc:
            print(f"prober: startup read failed: {exc}", file=sys.stderr, flush=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
