"""App-bound servers: which desktop app a server needs, whether it is here, and where it listens.

Nothing in this package knows about MCP. `mcp/` asks it for a live endpoint, `plugins/` asks it
for availability. Data (`app`: where the app is) and policy (`requires`: do we insist) stay in
separate types. Every operating-system fact comes through the `Host` seam.
"""
