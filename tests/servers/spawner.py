"""A stdio MCP server that starts a helper process of its own (a grandchild of hermes) on request."""

from __future__ import annotations

import subprocess

from mcp.server.mcpserver import MCPServer

app = MCPServer("spawner")


@app.tool(name="spawn-helper", description="Start a long-lived helper process; returns its pid.")
def spawn_helper(own_group: bool = False) -> int:
    """`own_group`: the helper moves to a process group of its own (setpgid), as some launchers do."""
    helper = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, process_group=0 if own_group else None)
    return helper.pid


if __name__ == "__main__":
    app.run()
