"""The connection vocabulary, defined once: the states of one server's supervisor.

    idle -> starting -> ...         a built-in toolset: its tools are known, it starts on the first call
    starting -> connected -> (ended) -> restarting -> starting -> ...
    starting -> failed              the first attempt failed; waits for a reload
    restarting x budget -> parked   the crash budget is spent; waits for a reload
    disabled                        never started (config, a global switch, or the app gate)
    stopped                         the session stopped it
"""

from __future__ import annotations

from enum import StrEnum


class ConnectionState(StrEnum):
    IDLE = "idle"
    STARTING = "starting"
    CONNECTED = "connected"
    RESTARTING = "restarting"
    FAILED = "failed"
    PARKED = "parked"
    DISABLED = "disabled"
    STOPPED = "stopped"


# States in which the supervisor waits for `revive()` (a reload) before it tries again.
WAITING_FOR_RELOAD = frozenset({ConnectionState.FAILED, ConnectionState.PARKED})

# States in which a server's tools are on offer: connected, or known and started by the first call.
OFFERING_TOOLS = frozenset({ConnectionState.CONNECTED, ConnectionState.IDLE})
