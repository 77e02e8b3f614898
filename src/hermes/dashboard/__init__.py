"""`hermes dashboard`: the MCP menu in a browser, over one running session, on loopback."""
