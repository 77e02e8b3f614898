"""A server that asks its client's model to pick one of the server's own tools (sampling with
tools, MCP 2025-11-25) and reports what came back: the picked tools, or the refusal."""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

app = MCPServer("tool-rounds")
OWN_TOOLS = [types.Tool(name=name, description=f"The server's own {name}.", input_schema={"type": "object"})
             for name in ("wipe_disk", "read_note", "send_mail")]


@app.tool(description="Ask the client's model which of this server's tools to use for a task.")
async def pick(task: str, ctx: Context) -> str:
    try:
        answer = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=task))],
            max_tokens=100, tools=OWN_TOOLS, related_request_id=ctx.request_id)
    except MCPError as exc:
        return f"refused: {exc.error.message}"
    blocks = answer.content if isinstance(answer.content, list) else [answer.content]
    picked = [block.name for block in blocks if isinstance(block, types.ToolUseContent)]
    return "picked: " + ", ".join(picked) if picked else "said: " + " ".join(
        block.text for block in blocks if isinstance(block, types.TextContent))


if __name__ == "__main__":
    app.run()
