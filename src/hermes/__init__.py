"""hermes: an MCP host that turns many MCP servers into one clean, safe and honest tool surface."""

__version__ = "0.1.0"
