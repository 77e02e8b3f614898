"""A small offline MCP server over stdio: text tools, a resource and a prompt.

Run it with `python -m hermes.examples.echo_server`; hermes starts it this way in `hermes demo`.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("hermes-example", instructions="Offline example tools bundled with hermes.")


@server.tool(description="Return the text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two numbers.")
def add(a: float, b: float) -> float:
    return a + b


@server.tool(name="word-count", description="Count the words in a text.")
def word_count(text: str) -> int:
    return len(text.split())


@server.resource("example://readme", description="What this example server is.")
def readme() -> str:
    return "The hermes example server: echo, add and word-count, all offline."


@server.prompt(description="Ask for a short summary of a text.")
def summarize(text: str) -> str:
    return f"Summarize in one sentence:\n\n{text}"


if __name__ == "__main__":
    server.run()
