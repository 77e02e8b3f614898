"""The structured answer to a call of a tool whose server can't be used, with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes.apps.states import Retry
from hermes.mcp.states import ConnectionState

_FIX = "Fix the cause (see the server's log in HERMES_HOME/logs), then run `hermes mcp reload`."
# An HTTP server has no log on this machine; its answer is all there is.
_FIX_REMOTE = "Fix the cause (the reason above is what the server answered), then run `hermes mcp reload`."
_ACTIONS = {
    ConnectionState.FAILED: _FIX,
    ConnectionState.PARKED: _FIX,
    ConnectionState.DISABLED: "Run `hermes mcp enable {server}` (running sessions reload by themselves).",
    ConnectionState.STARTING: "Wait until the server has started, then try again.",
    ConnectionState.RESTARTING: "Wait until the server has restarted, then try again.",
    ConnectionState.STOPPED: "Run `hermes mcp reload` to start it again.",
    ConnectionState.CONNECTED: "Run `hermes mcp reload`, then try again.",
    ConnectionState.IDLE: "Try again: the first call starts it.",
}
_PHRASES = {
    ConnectionState.FAILED: "could not be connected",
    ConnectionState.PARKED: "is parked",
    ConnectionState.DISABLED: "is disabled",
    ConnectionState.STARTING: "is still starting",
    ConnectionState.RESTARTING: "is restarting",
    ConnectionState.STOPPED: "is stopped",
    ConnectionState.CONNECTED: "is not connected",
    ConnectionState.IDLE: "has not started yet",
}


# What npm prints when npx's own cache (~/.npm/_npx) is half-written: it then fails the same way
# on every start until the folder is deleted.
_NPX_CACHE_SIGNS = ("ENOTEMPTY", "ENOENT", "Cannot find module", "EINTEGRITY", "TAR_ENTRY", "Unexpected end of JSON")


def npx_cache_advice(stderr: str, server: str) -> str | None:
    """What to do when a server's stderr shows npx's cache half-written; None when it does not."""
    if "_npx" not in stderr or not any(sign in stderr for sign in _NPX_CACHE_SIGNS):
        return None
    return (f"npx's package cache looks broken (a first start cut off mid-install leaves it so): delete it with "
            f"`rm -rf ~/.npm/_npx`, then run `hermes mcp test {server}`.")


@dataclass(frozen=True)
class Unavailable:
    """A server that is not connected, with its state's reason (undeclared servers, SPEC 5.5)."""

    server: str
    state: ConnectionState
    reason: str
    stderr_tail: str = ""
    remote: bool = False  # an HTTP server (no local log to point at)
    untrusted: bool = False  # a project's server waiting for the user to trust its folder
    withheld: tuple[str, ...] = ()  # variables it says it lacks, which the shell has and its entry does not pass

    @property
    def user_action(self) -> str:
        if self.untrusted:
            return "Trust the project folder as the reason says, then run `hermes mcp reload`."
        advice = npx_cache_advice(self.stderr_tail, self.server)
        if advice:
            return advice
        if self.withheld:
            lines = ", ".join(f"{name}: ${{{name}}}" for name in self.withheld)
            return (f"hermes passes a server only the variables its entry names, and your shell has "
                    f"{', '.join(self.withheld)}: add `env: {{{lines}}}` to '{self.server}' in config.yaml "
                    f"(or put the values in HERMES_HOME/.env), then run `hermes mcp reload`.")
        if self.remote and self.state in (ConnectionState.FAILED, ConnectionState.PARKED):
            return _FIX_REMOTE
        return _ACTIONS[self.state].format(server=self.server)

    @property
    def sentence(self) -> str:
        return f"MCP server '{self.server}' {_PHRASES[self.state]}: {self.reason.rstrip('.')}. {self.user_action}"

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "error": self.sentence,
            "server": self.server,
            "state": self.state.value,
            "reason": self.reason,
            "user_action": self.user_action,
            "retry": Retry.AFTER_USER_ACTION.value,
        }
        if self.stderr_tail:
            data["stderr_tail"] = self.stderr_tail
        return data
