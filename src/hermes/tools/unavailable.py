"""The structured answer to a call of a tool whose server can't be used, with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AFTER_USER_ACTION = "after_user_action"
NEVER_HERE = "never_here"

_ACTIONS = {
    "failed": "Fix the cause (see the server's log in HERMES_HOME/logs), then run `hermes mcp reload`.",
    "parked": "Fix the cause (see the server's log in HERMES_HOME/logs), then run `hermes mcp reload`.",
    "disabled": "Enable the server in config.yaml, then run `hermes mcp reload`.",
    "connecting": "Wait until the server has started, then try again.",
    "restarting": "Wait until the server has restarted, then try again.",
    "stopped": "Run `hermes mcp reload` to start it again.",
}


_PHRASES = {
    "failed": "could not be connected",
    "parked": "is parked",
    "disabled": "is disabled",
    "connecting": "is still connecting",
    "restarting": "is restarting",
    "stopped": "is stopped",
}


@dataclass(frozen=True)
class Unavailable:
    server: str
    state: str
    reason: str
    stderr_tail: str = ""

    @property
    def user_action(self) -> str:
        return _ACTIONS.get(self.state, "Run `hermes mcp reload`, then try again.")

    @property
    def sentence(self) -> str:
        what = _PHRASES.get(self.state, f"is {self.state}")
        return f"MCP server '{self.server}' {what}: {self.reason.rstrip('.')}. {self.user_action}"

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "error": self.sentence,
            "server": self.server,
            "state": self.state,
            "reason": self.reason,
            "user_action": self.user_action,
            "retry": AFTER_USER_ACTION,
        }
        if self.stderr_tail:
            data["stderr_tail"] = self.stderr_tail
        return data
