"""The app vocabulary, defined once: availability and unavailability states, and retry advice.

The values are the strings the JSON output and the documents use (SPEC §5.2, §5.5, §10); code
compares members, never literals.
"""

from __future__ import annotations

from enum import StrEnum


class AppState(StrEnum):
    # What an availability check finds (SPEC 5.2).
    NO_REQUIREMENTS = "no_requirements"
    AVAILABLE = "available"
    MISSING_APP = "missing_app"
    VERSION_TOO_OLD = "version_too_old"
    UNSUPPORTED_OS = "unsupported_os"
    # Why a declared server's tools are unavailable at run time (SPEC 5.5).
    APP_NOT_RUNNING = "app_not_running"
    ENDPOINT_UNAVAILABLE = "endpoint_unavailable"
    NO_INTERACTIVE_SESSION = "no_interactive_session"
    HERMES_NOT_CONNECTED = "hermes_not_connected"


# Availability that lets a server start; anything else is a reason it cannot.
USABLE = frozenset({AppState.NO_REQUIREMENTS, AppState.AVAILABLE})
# What the plugin installer refuses (SPEC 5.3): installing could never work on this machine.
REFUSED_AT_INSTALL = frozenset({AppState.MISSING_APP, AppState.VERSION_TOO_OLD, AppState.UNSUPPORTED_OS})


class Retry(StrEnum):
    """Whether retrying can help: after the user did something, or never on this machine."""

    AFTER_USER_ACTION = "after_user_action"
    NEVER_HERE = "never_here"


NEVER_HERE_STATES = frozenset({AppState.UNSUPPORTED_OS, AppState.NO_INTERACTIVE_SESSION})
