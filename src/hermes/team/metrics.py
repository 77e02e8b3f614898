"""The replica's Prometheus metrics, in a registry of its own (served at `/metrics`)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        self.calls = Counter("hermes_team_tool_calls", "Tool calls by outcome", ["outcome"], registry=registry)
        self.call_seconds = Histogram("hermes_team_tool_call_seconds", "How long tool calls took",
                                      registry=registry)
        self.requests = Counter("hermes_team_http_requests", "MCP requests by status class", ["status"],
                                registry=registry)
        self.users = Gauge("hermes_team_users_running", "Users whose upstream servers run on this replica",
                           registry=registry)
        self.audit_pending = Gauge("hermes_team_audit_pending", "Audit records not yet written",
                                   registry=registry)
        self.audit_dropped = Counter("hermes_team_audit_dropped", "Audit records dropped while the database "
                                     "was away and the queue was full", registry=registry)

    def text(self) -> bytes:
        return generate_latest(self.registry)
