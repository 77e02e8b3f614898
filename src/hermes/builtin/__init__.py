"""The agent's own toolsets (`file`, `terminal`), each a stdio MCP server hermes runs in its sandbox.

They import the SDK and the standard library only: a session starts them like any stdio server,
by the path of their file, so the sandbox, the approval gate, redaction and the "why unavailable"
sentences apply to them exactly as to a server the user configured.
"""
