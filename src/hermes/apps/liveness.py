"""Runtime liveness: the only endpoint trusted for an app-bound server is the app's runtime file.

On every connect the file is read afresh: its pid must be alive, its URL plain http on loopback
with a port, and the endpoint is rebuilt from host:port plus the declared `endpoint_path` and
checked again. Any failure raises `LiveEndpointUnavailable` with the facts seen (`AppFacts`);
there is never a fallback to the URL written in mcp.json or config.yaml. Which state those facts
mean (`app_not_running`, `endpoint_unavailable`, ...) is decided in one place, `hermes.session.why`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import Host
from hermes.apps.locate import expand, unset_variables
from hermes.apps.runtimefile import RuntimeFileError, RuntimeFileMissing, read_runtime_file
from hermes.apps.status import os_title
from hermes.errors import HermesError


class Finding(StrEnum):
    """What the runtime file showed at one look: facts, not a verdict (`session.why` decides the state)."""

    LIVE = "live"  # the file is usable and the process it names is alive
    PATH_UNUSABLE = "path_unusable"  # the declared path cannot be expanded on this host
    FILE_MISSING = "file_missing"
    FILE_INVALID = "file_invalid"  # unreadable, not JSON, a broken field
    PID_DEAD = "pid_dead"  # the process the file names is not running
    URL_INVALID = "url_invalid"  # the endpoint cannot be composed from the file's URL


@dataclass(frozen=True)
class AppFacts:
    """Everything observed about an app's endpoint at one look, for whoever explains it."""

    finding: Finding
    detail: str  # the reader's words: which file, which rule
    app_running: bool | None = None  # the app's own process, looked for by its path (None: not looked)
    last_pid_alive: bool | None = None  # with no file: whether the pid the last file named still runs
    unpublished_since: float | None = None  # monotonic time since which the app runs without its file
    endpoint_answers: bool | None = None  # for a live file: whether anything accepts connections there


class LiveEndpointUnavailable(HermesError):
    """The app's live endpoint cannot be used; `facts` say what was seen."""

    def __init__(self, server: str, facts: AppFacts) -> None:
        self.server = server
        self.facts = facts
        self.reason = facts.detail
        super().__init__(f"Server '{server}' has no live endpoint: {facts.detail}.")


@dataclass(frozen=True)
class LiveEndpoint:
    url: str
    pid: int
    token: str | None
    runtime_file: str
    host: str = "127.0.0.1"
    port: int = 0

    @property
    def identity(self) -> tuple[str, int, str | None]:
        """What changes when the app restarts: a new pid, port or token means reconnect."""
        return self.url, self.pid, self.token

    def __repr__(self) -> str:
        return f"LiveEndpoint(url={self.url!r}, pid={self.pid}, token={'<hidden>' if self.token else None})"


# `${runtime.url}` and friends: what a stdio bridge needs to reach the app, from its runtime file.
RUNTIME_FIELDS = ("url", "host", "port", "token", "pid")
_RUNTIME_REFERENCE = re.compile(r"\$\{runtime\.([A-Za-z_][A-Za-z0-9_]*)\}")


def runtime_references(text: str) -> list[str]:
    """The field names of every `${runtime.<field>}` in `text` (known or not)."""
    return _RUNTIME_REFERENCE.findall(text)


def fill_runtime(text: str, live: LiveEndpoint) -> str:
    """`text` with every `${runtime.<field>}` replaced by the app's current value."""
    values = {"url": live.url, "host": live.host, "port": str(live.port), "token": live.token or "",
              "pid": str(live.pid)}
    return _RUNTIME_REFERENCE.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def runtime_file_path(spec: LivenessSpec, host: Host) -> str | None:
    return expand(host, spec.path) if spec.path else None


def unexpandable(spec: LivenessSpec, host: Host) -> str | None:
    """Why the runtime file path cannot be expanded on this host (names the variables), or None."""
    missing = unset_variables(host, spec.path or "")
    if not missing:
        return None
    names = ", ".join(missing)
    return f"the runtime file path {spec.path} uses {names}, which {'is' if len(missing) == 1 else 'are'} not " \
           f"set on {os_title(host.os_name)}"


def resolve_live_endpoint(server: str, spec: LivenessSpec, host: Host, *,
                          app_path: str | None = None) -> LiveEndpoint:
    def unavailable(finding: Finding, detail: str, **facts: Any) -> LiveEndpointUnavailable:
        return LiveEndpointUnavailable(server, AppFacts(finding, detail, **facts))

    path = runtime_file_path(spec, host)
    if path is None:
        raise unavailable(Finding.PATH_UNUSABLE,
                          unexpandable(spec, host) or f"the runtime file path {spec.path} is not usable")
    try:
        runtime = read_runtime_file(Path(path), pid_key=spec.pid_key, url_key=spec.url_key,
                                    token_key=spec.token_key)
    except RuntimeFileMissing:
        running = host.process_running(app_path) if app_path is not None else None
        raise unavailable(Finding.FILE_MISSING, f"runtime file {path}: the file does not exist",
                          app_running=running) from None
    except RuntimeFileError as exc:
        raise unavailable(Finding.FILE_INVALID, f"runtime file {path}: {exc.reason}") from None
    if not host.pid_alive(runtime.pid):
        raise unavailable(Finding.PID_DEAD, f"the process {runtime.pid} named in {path} is not running")
    try:
        url = runtime.url(spec.endpoint_path)
    except ValueError as exc:
        raise unavailable(Finding.URL_INVALID, str(exc)) from None
    return LiveEndpoint(url, runtime.pid, runtime.token, path, runtime.host, runtime.port)
