"""`hermes gateway`: the agent and its MCP tools on messaging platforms, one conversation per room."""
