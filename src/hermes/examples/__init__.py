"""Example MCP servers bundled with hermes, used by `hermes demo` and the Quickstart."""
