"""Why a server's tools are unavailable, decided in one place, from what was observed (SPEC 5.5).

Pure: a function of the server's connection snapshot, its declaration and app gate, and two host
facts (the clock, for the publish grace, and the OS name). No process, no file, no SDK call, so
every rule is tested on hand-built snapshots (`tests/session/test_why.py`).

The rules, in order:

1. A server that is no app-bound declaration's (or is switched off) is a plain connection state:
   failed, parked, starting, disabled, ... with its reason and its stderr (`Unavailable`).
2. The app gate refuses: `missing_app`, `version_too_old`, `unsupported_os`,
   `no_interactive_session` (found before anything started).
3. The last look at the runtime file:
   - the process it names is dead, or the file is gone and so is the app (or the process the
     last file named) -> `app_not_running`;
   - the file is missing while the app runs, unreadable, or names an unusable URL ->
     `endpoint_unavailable`; past the publish grace, "running but has not published its endpoint";
   - the file is live but nothing accepts connections where it points -> `endpoint_unavailable`.
4. The file is live and the endpoint answers, yet this session's HTTP connection failed ->
   `hermes_not_connected`. A stdio bridge that fails is a plain failed server (rule 1's shape),
   with its stderr: its process, not the app, is what broke.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from hermes.apps.gate import Gate
from hermes.apps.liveness import AppFacts, Finding
from hermes.apps.states import AppState
from hermes.apps.status import AppStatus
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.mcp.states import WAITING_FOR_RELOAD, ConnectionState
from hermes.session.servers import DesiredServer
from hermes.tools.unavailable import Unavailable

# How long an app may run before it is expected to have published its runtime file.
PUBLISH_GRACE = 10.0
_FAILING = WAITING_FOR_RELOAD | {ConnectionState.RESTARTING}


def app_state(facts: AppFacts, app_name: str, *, now: float, grace: float = PUBLISH_GRACE) -> tuple[AppState, str]:
    """(state, detail) for what a look at the runtime file found (the file was not usable, or the
    endpoint it names did not answer)."""
    finding = facts.finding
    if finding is Finding.PID_DEAD:
        return AppState.APP_NOT_RUNNING, facts.detail
    if finding is Finding.FILE_MISSING:
        if facts.app_running is False or (facts.app_running is None and facts.last_pid_alive is False):
            return AppState.APP_NOT_RUNNING, f"{app_name} is not running"
        if facts.app_running and facts.unpublished_since is not None and now - facts.unpublished_since >= grace:
            return AppState.ENDPOINT_UNAVAILABLE, (f"{app_name} is running but has not published its endpoint; "
                                                   f"enable the bridge in its settings")
    return AppState.ENDPOINT_UNAVAILABLE, facts.detail


def why_unavailable(snapshot: ConnectionSnapshot, server: DesiredServer | None, gate: Gate | None, *,
                    os_name: str, now: float, grace: float = PUBLISH_GRACE) -> Unavailable | AppStatus:
    """Why `snapshot`'s server offers no tools now (it is not connected)."""
    declared = server is not None and server.declaration is not None and server.disabled_reason is None
    if declared and server is not None:
        app_name = server.app_name or server.name
        if gate is not None and gate.refusal is not None:
            return gate.refusal
        facts = snapshot.app
        if facts is not None and facts.finding is not Finding.LIVE:
            state, detail = app_state(facts, app_name, now=now, grace=grace)
            return _app_status(server, gate, state, detail, os_name)
        if facts is not None and facts.endpoint_answers is False:
            # The file is live, yet nothing accepts connections where it points: the connect said so.
            return _app_status(server, gate, AppState.ENDPOINT_UNAVAILABLE, snapshot.reason or facts.detail, os_name)
        if snapshot.app_bound and not server.config.is_stdio and snapshot.state in _FAILING:
            return _app_status(server, gate, AppState.HERMES_NOT_CONNECTED, snapshot.reason, os_name)
    withheld = withheld_variables(f"{snapshot.reason}\n{snapshot.stderr_tail}", server.config.env, os.environ) \
        if server is not None and server.config.is_stdio and snapshot.state in _FAILING else ()
    return Unavailable(snapshot.name, snapshot.state, snapshot.reason or "it has not connected yet",
                       snapshot.stderr_tail, remote=server is not None and not server.config.is_stdio,
                       untrusted=server is not None and server.untrusted, withheld=withheld)


# A line of a failed start that says a variable is missing ("GITHUB_TOKEN is not set", "Missing
# required environment variable: API_KEY", "process.env.X is undefined").
_MISSING_SIGNS = re.compile(r"not set|is required|required environment|missing|must be set|undefined|not defined|"
                            r"not provided|no .{0,20}(key|token)", re.IGNORECASE)
_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")


def withheld_variables(said: str, configured: Mapping[str, str], shell: Mapping[str, str]) -> tuple[str, ...]:
    """Variables a failed stdio server says it lacks that the user's shell has and its entry does
    not pass: hermes gives a server only what its entry names, so these were withheld, not missing."""
    found: dict[str, None] = {}
    for line in said.splitlines()[-40:]:
        # hermes's own "uses ${X}, but X is not set" names X where to set it (and HERMES_HOME):
        # neither was withheld from the server.
        if _MISSING_SIGNS.search(line) and "uses ${" not in line:
            for name in _VARIABLE.findall(line):
                if name in shell and name not in configured:
                    found[name] = None
    return tuple(found)[:5]


def _app_status(server: DesiredServer, gate: Gate | None, state: AppState, detail: str, os_name: str) -> AppStatus:
    assert server.declaration is not None
    availability = gate.availability if gate is not None else None
    return AppStatus(server.name, state, server.app_name or server.name,
                     availability.version if availability else None, availability.path if availability else None,
                     server.declaration.requires.min_version, os_name, detail or None)
