"""Why a declared server's tools are unavailable: state, one sentence, the user's action, retry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes.apps.states import NEVER_HERE_STATES, AppState, Retry

OS_NAMES = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


def os_title(os_name: str | None) -> str:
    return OS_NAMES.get(os_name or "", os_name or "this system")


@dataclass(frozen=True)
class AppStatus:
    server: str
    state: AppState
    app_name: str
    version: str | None = None
    path: str | None = None
    min_version: str | None = None
    os_name: str | None = None
    detail: str | None = None
    supported: tuple[str, ...] = ()  # the OSes the plugin declares, for unsupported_os

    @property
    def problem(self) -> str:
        app = self.app_name
        state = self.state
        if state is AppState.MISSING_APP:
            return f"{app} is not installed" + (f" (looked for {self.path})" if self.path else "") + "."
        if state is AppState.VERSION_TOO_OLD:
            found = f"{app} {self.version}" if self.version else app
            return f"{found} is installed, but version {self.min_version} or newer is needed."
        if state is AppState.APP_NOT_RUNNING:
            return f"{app} is not running."
        if state is AppState.ENDPOINT_UNAVAILABLE:
            return f"{app}'s MCP bridge is not usable: {self.detail}." if self.detail else \
                f"{app}'s MCP bridge has not published a usable endpoint."
        if state is AppState.NO_INTERACTIVE_SESSION:
            return f"{app} needs a graphical desktop session, and hermes is running without one."
        if state is AppState.UNSUPPORTED_OS:
            return f"{app} is not supported on {os_title(self.os_name)} by this plugin."
        return f"{app} is running and its endpoint is live, but hermes is not connected to it" + \
            (f" ({self.detail})" if self.detail else "") + "."

    @property
    def user_action(self) -> str:
        app = self.app_name
        state = self.state
        if state is AppState.MISSING_APP:
            return f"Install {app}, then install or enable the plugin again."
        if state is AppState.VERSION_TOO_OLD:
            return f"Update {app} to version {self.min_version} or newer, then try again."
        if state is AppState.APP_NOT_RUNNING:
            return f"Start {app}, then try again."
        if state is AppState.ENDPOINT_UNAVAILABLE:
            return f"Restart the MCP bridge from inside {app}, then try again."
        if state is AppState.NO_INTERACTIVE_SESSION:
            return "Run hermes in a desktop session, not as a headless service."
        if state is AppState.UNSUPPORTED_OS:
            names = ", ".join(os_title(o) for o in self.supported)
            return f"Use {app} with this plugin on a supported system" + (f" ({names})." if names else ".")
        return "Run `hermes mcp reload`, then try again."

    @property
    def retry(self) -> Retry:
        return Retry.NEVER_HERE if self.state in NEVER_HERE_STATES else Retry.AFTER_USER_ACTION

    @property
    def sentence(self) -> str:
        return f"{self.problem} {self.user_action}".strip()

    def payload(self) -> dict[str, Any]:
        return {
            "error": self.sentence,
            "server": self.server,
            "state": self.state.value,
            "reason": self.detail or self.problem,
            "app": {"name": self.app_name, "version": self.version, "path": self.path},
            "user_action": self.user_action,
            "retry": self.retry.value,
        }
