"""A low-level test server that offers tools only (no resources, no prompts capability)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[
        types.Tool(name="ping", description="Answer pong.", input_schema={"type": "object", "properties": {}}),
        types.Tool(name="a.b", description="Sanitizes to a_b.", input_schema={"type": "object"}),
        types.Tool(name="a-b", description="Also sanitizes to a_b.", input_schema={"type": "object"}),
    ])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"pong from {params.name}")])


server: Server[Any] = Server("tools-only", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
