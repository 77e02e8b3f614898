"""The curated MCP catalog: one manifest per entry, and the one-command install."""
