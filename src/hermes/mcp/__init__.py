"""Connections to MCP servers over the official SDK: transports and one supervisor per server.

Importing this package imports the `mcp` SDK (about half a second); only code paths that really
connect import it.
"""
