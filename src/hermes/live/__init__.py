"""A session that other processes reach: its control endpoint and `hermes mcp serve`."""
