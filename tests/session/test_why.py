"""Why a server's tools are unavailable, as a pure function of hand-built snapshots (no process).

Every state of SPEC 5.5 and the plain connection states, decided from what was observed: the
connection snapshot, the declaration and its gate, the clock (for the publish grace).
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes.apps.availability import Availability
from hermes.apps.declaration import LivenessKind, LivenessSpec, Requirements, ServerDeclaration
from hermes.apps.gate import Gate
from hermes.apps.liveness import AppFacts, Finding
from hermes.apps.states import AppState, Retry
from hermes.apps.status import AppStatus
from hermes.config.model import ServerConfig
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.mcp.states import ConnectionState
from hermes.session.servers import DesiredServer
from hermes.session.why import PUBLISH_GRACE, why_unavailable
from hermes.tools.unavailable import Unavailable

NOW = 1000.0
HTTP = ServerConfig(url="http://127.0.0.1:9/mcp")
STDIO = ServerConfig(command="bridge")
DECLARED = ServerDeclaration("blender", None, Requirements(app=True, min_version="5.1"),
                             LivenessSpec(LivenessKind.SERVER_JSON, path="~/.blender/server.json"))
OPEN = Gate(Availability(AppState.AVAILABLE, "linux", "5.1.2", "/usr/bin/blender"), None)


def _server(config: ServerConfig = HTTP, declaration: ServerDeclaration | None = DECLARED, **extra: Any
            ) -> DesiredServer:
    return DesiredServer("blender", config, "plugin:blender", declaration=declaration, app_name="Blender", **extra)


def _snapshot(state: ConnectionState = ConnectionState.FAILED, *, app: AppFacts | None = None,
              app_bound: bool = True, **extra: Any) -> ConnectionSnapshot:
    return ConnectionSnapshot("blender", state, app=app, app_bound=app_bound, **extra)


def _why(snapshot: ConnectionSnapshot, server: DesiredServer | None = None, gate: Gate | None = OPEN,
         now: float = NOW) -> Unavailable | AppStatus:
    return why_unavailable(snapshot, server or _server(), gate, os_name="linux", now=now)


def _state(answer: Unavailable | AppStatus) -> str:
    return answer.state.value


def test_an_undeclared_server_is_its_connection_state_with_reason_and_stderr() -> None:
    snapshot = ConnectionSnapshot("files", ConnectionState.PARKED, reason="crashed 4 times", stderr_tail="boom")
    answer = why_unavailable(snapshot, DesiredServer("files", STDIO, "config.yaml"), None, os_name="linux", now=NOW)
    assert isinstance(answer, Unavailable) and _state(answer) == "parked"
    assert answer.payload()["stderr_tail"] == "boom" and "crashed 4 times" in answer.sentence
    assert "HERMES_HOME/logs" in answer.user_action


def test_an_untrusted_project_server_says_to_trust_the_folder() -> None:
    server = DesiredServer("p", STDIO, "project", disabled_reason="untrusted", untrusted=True)
    answer = why_unavailable(ConnectionSnapshot("p", ConnectionState.DISABLED, reason="untrusted: ..."), server,
                             None, os_name="linux", now=NOW)
    assert isinstance(answer, Unavailable) and "Trust the project folder" in answer.user_action


@pytest.mark.parametrize("state", [AppState.MISSING_APP, AppState.VERSION_TOO_OLD, AppState.UNSUPPORTED_OS,
                                   AppState.NO_INTERACTIVE_SESSION])
def test_the_gate_refusal_comes_first(state: AppState) -> None:
    refusal = AppStatus("blender", state, "Blender", min_version="5.1", os_name="linux")
    gate = Gate(Availability(state, "linux"), refusal)
    answer = _why(_snapshot(ConnectionState.DISABLED, app=AppFacts(Finding.LIVE, "live")), gate=gate)
    assert answer is refusal


def test_a_dead_pid_in_the_runtime_file_is_app_not_running() -> None:
    answer = _why(_snapshot(app=AppFacts(Finding.PID_DEAD, "the process 42 named in f is not running")))
    assert isinstance(answer, AppStatus) and _state(answer) == "app_not_running"
    assert answer.user_action == "Start Blender, then try again." and answer.retry is Retry.AFTER_USER_ACTION


@pytest.mark.parametrize(("facts", "expected"), [
    (AppFacts(Finding.FILE_MISSING, "f: the file does not exist", app_running=False), "app_not_running"),
    # A normal quit: the app removed its file and the process the last file named is gone.
    (AppFacts(Finding.FILE_MISSING, "f: the file does not exist", last_pid_alive=False), "app_not_running"),
    # Nothing to tell whether the app runs: the endpoint is what is missing.
    (AppFacts(Finding.FILE_MISSING, "f: the file does not exist"), "endpoint_unavailable"),
    (AppFacts(Finding.FILE_MISSING, "f: the file does not exist", app_running=True, unpublished_since=NOW - 1),
     "endpoint_unavailable"),
    (AppFacts(Finding.FILE_INVALID, "f: the file is not valid JSON"), "endpoint_unavailable"),
    (AppFacts(Finding.URL_INVALID, "endpoint path changes the URL's authority"), "endpoint_unavailable"),
    (AppFacts(Finding.PATH_UNUSABLE, "the runtime file path uses %APPDATA%"), "endpoint_unavailable"),
], ids=["app gone", "normal quit", "unknown", "within grace", "invalid", "bad url", "unexpandable"])
def test_runtime_file_findings(facts: AppFacts, expected: str) -> None:
    answer = _why(_snapshot(app=facts))
    assert isinstance(answer, AppStatus) and _state(answer) == expected
    assert answer.user_action and answer.retry is Retry.AFTER_USER_ACTION


def test_a_live_file_whose_endpoint_does_not_answer_says_what_the_connect_found() -> None:
    answer = _why(_snapshot(reason="the app's endpoint http://127.0.0.1:9 does not answer",
                            app=AppFacts(Finding.LIVE, "runtime file f: live (pid 7)", endpoint_answers=False)))
    assert isinstance(answer, AppStatus) and _state(answer) == "endpoint_unavailable"
    assert "http://127.0.0.1:9 does not answer" in answer.sentence
    assert answer.user_action == "Restart the MCP bridge from inside Blender, then try again."


def test_an_app_running_past_the_grace_without_its_file_says_to_enable_the_bridge() -> None:
    facts = AppFacts(Finding.FILE_MISSING, "f: the file does not exist", app_running=True,
                     unpublished_since=NOW - PUBLISH_GRACE - 1)
    answer = _why(_snapshot(app=facts))
    assert isinstance(answer, AppStatus) and _state(answer) == "endpoint_unavailable"
    assert "running but has not published its endpoint; enable the bridge in its settings" in answer.sentence


def test_a_live_endpoint_that_answers_with_a_failed_http_connection_is_hermes_not_connected() -> None:
    answer = _why(_snapshot(ConnectionState.FAILED, reason="the server answered HTTP 500",
                            app=AppFacts(Finding.LIVE, "live", endpoint_answers=True)))
    assert isinstance(answer, AppStatus) and _state(answer) == "hermes_not_connected"
    assert "hermes mcp reload" in answer.user_action and "HTTP 500" in answer.sentence


def test_a_failing_stdio_bridge_is_a_plain_failed_server_never_hermes_not_connected() -> None:
    snapshot = _snapshot(ConnectionState.PARKED, reason="crashed 4 times", stderr_tail="Traceback ...",
                         app=AppFacts(Finding.LIVE, "live"))
    answer = _why(snapshot, _server(STDIO))
    assert isinstance(answer, Unavailable) and _state(answer) == "parked"
    assert answer.payload()["stderr_tail"] == "Traceback ..."


def test_a_declared_server_without_liveness_fails_plainly() -> None:
    declaration = ServerDeclaration("blender", None, Requirements(app=True))
    answer = _why(_snapshot(ConnectionState.FAILED, reason="exit code 1", app_bound=False),
                  _server(STDIO, declaration))
    assert isinstance(answer, Unavailable) and _state(answer) == "failed"


def test_still_starting_is_said_as_such() -> None:
    answer = _why(_snapshot(ConnectionState.STARTING, app=AppFacts(Finding.LIVE, "live")))
    assert isinstance(answer, Unavailable) and _state(answer) == "starting"
    assert answer.user_action == "Wait until the server has started, then try again."


def test_the_app_answer_names_the_app_and_what_the_gate_found() -> None:
    answer = _why(_snapshot(app=AppFacts(Finding.PID_DEAD, "dead")))
    payload = answer.payload()
    assert payload["app"] == {"name": "Blender", "version": "5.1.2", "path": "/usr/bin/blender"}
    assert payload["server"] == "blender" and payload["retry"] == "after_user_action"


def test_a_variable_the_shell_has_but_the_entry_does_not_pass_is_named_with_the_env_line(home: Any) -> None:
    """A real server that exits with "WIDGET_TOKEN is not set": the shell has it, hermes withheld it."""
    import json

    from tests.support import PYTHON, hermes, write_config

    script = "import os, sys\nif 'WIDGET_TOKEN' not in os.environ: sys.exit('error: WIDGET_TOKEN is not set')"
    write_config(home, {"mcp_servers": {"widget": {"command": PYTHON, "args": ["-c", script]}}})
    listed = hermes("tools", "list", "--json", home=home, env={"WIDGET_TOKEN": "in-the-shell", "OTHER_SET": "x"})
    missing = json.loads(listed.stdout)["unavailable"][0]
    assert "your shell has WIDGET_TOKEN: add `env: {WIDGET_TOKEN: ${WIDGET_TOKEN}}` to 'widget'" \
        in missing["user_action"]
    assert "in-the-shell" not in listed.stdout + listed.stderr and "OTHER_SET" not in missing["user_action"]
    # Without it in the shell, it really is missing: no such hint.
    plain = json.loads(hermes("tools", "list", "--json", home=home).stdout)["unavailable"][0]
    assert "WIDGET_TOKEN: ${WIDGET_TOKEN}" not in plain["user_action"]
