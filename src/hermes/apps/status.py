"""Why a declared server's tools are unavailable: state, one sentence, the user's action, retry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AFTER_USER_ACTION = "after_user_action"
NEVER_HERE = "never_here"

MISSING_APP = "missing_app"
VERSION_TOO_OLD = "version_too_old"
APP_NOT_RUNNING = "app_not_running"
ENDPOINT_UNAVAILABLE = "endpoint_unavailable"
NO_INTERACTIVE_SESSION = "no_interactive_session"
UNSUPPORTED_OS = "unsupported_os"
HERMES_NOT_CONNECTED = "hermes_not_connected"

APP_STATES = (MISSING_APP, VERSION_TOO_OLD, APP_NOT_RUNNING, ENDPOINT_UNAVAILABLE, NO_INTERACTIVE_SESSION,
              UNSUPPORTED_OS, HERMES_NOT_CONNECTED)
_OS_NAMES = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


@dataclass(frozen=True)
class AppStatus:
    server: str
    state: str
    app_name: str
    version: str | None = None
    path: str | None = None
    min_version: str | None = None
    os_name: str | None = None
    detail: str | None = None

    @property
    def problem(self) -> str:
        app = self.app_name
        if self.state == MISSING_APP:
            return f"{app} is not installed" + (f" (looked for {self.path})" if self.path else "") + "."
        if self.state == VERSION_TOO_OLD:
            found = f"{app} {self.version}" if self.version else app
            return f"{found} is installed, but version {self.min_version} or newer is needed."
        if self.state == APP_NOT_RUNNING:
            return f"{app} is not running."
        if self.state == ENDPOINT_UNAVAILABLE:
            return f"{app}'s MCP bridge has not published a usable endpoint" + \
                (f" ({self.detail})" if self.detail else "") + "."
        if self.state == NO_INTERACTIVE_SESSION:
            return f"{app} needs a graphical desktop session, and hermes is running without one."
        if self.state == UNSUPPORTED_OS:
            return f"{app} is not supported on {_OS_NAMES.get(self.os_name or '', self.os_name)} by this plugin."
        return f"{app} is running and its endpoint is live, but hermes is not connected to it" + \
            (f" ({self.detail})" if self.detail else "") + "."

    @property
    def user_action(self) -> str:
        app = self.app_name
        return {
            MISSING_APP: f"Install {app}, then install or enable the plugin again.",
            VERSION_TOO_OLD: f"Update {app} to version {self.min_version} or newer, then try again.",
            APP_NOT_RUNNING: f"Start {app}, then try again.",
            ENDPOINT_UNAVAILABLE: f"Restart the MCP bridge from inside {app}, then try again.",
            NO_INTERACTIVE_SESSION: "Run hermes in a desktop session, not as a headless service.",
            UNSUPPORTED_OS: "",
            HERMES_NOT_CONNECTED: "Run `hermes mcp reload`, then try again.",
        }[self.state]

    @property
    def retry(self) -> str:
        return NEVER_HERE if self.state in (UNSUPPORTED_OS, NO_INTERACTIVE_SESSION) else AFTER_USER_ACTION

    @property
    def sentence(self) -> str:
        return f"{self.problem} {self.user_action}".strip()

    def payload(self) -> dict[str, Any]:
        return {
            "error": self.sentence,
            "server": self.server,
            "state": self.state,
            "app": {"name": self.app_name, "version": self.version, "path": self.path},
            "user_action": self.user_action,
            "retry": self.retry,
        }
