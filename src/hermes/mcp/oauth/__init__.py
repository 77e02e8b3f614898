"""OAuth 2.1 for remote MCP servers, on the SDK's OAuth client provider."""
