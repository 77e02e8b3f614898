"""The team gateway: `hermes mcp serve --http --team`, one MCP endpoint shared by many users.

Each user is authenticated (a static key, or an OAuth 2.1 access token from the team's identity
provider), gets upstream servers of their own (their own processes, sessions and credentials), sees
only what the team's policy gives them, and every call is audited. The state every replica shares
(users, policy, credentials, audit) lives behind the `TeamStore` seam: SQLite for one machine,
PostgreSQL for many.
"""
