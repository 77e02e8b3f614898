"""Runtime liveness: the only endpoint trusted for an app-bound server is the app's runtime file.

On every connect the file is read afresh: its pid must be alive, its URL plain http on loopback
with a port, and the endpoint is rebuilt from host:port plus the declared `endpoint_path` and
checked again. Any failure raises `LiveEndpointUnavailable`; there is never a fallback to the
URL written in mcp.json or config.yaml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import Host
from hermes.apps.locate import expand, unset_variables
from hermes.apps.runtimefile import RuntimeFileError, RuntimeFileMissing, read_runtime_file
from hermes.apps.states import AppState
from hermes.apps.status import os_title
from hermes.errors import HermesError


class LiveEndpointUnavailable(HermesError):
    """The app's live endpoint cannot be used; `state` says which link is broken."""

    def __init__(self, server: str, state: AppState, reason: str) -> None:
        self.server = server
        self.state = state
        self.reason = reason
        super().__init__(f"Server '{server}' has no live endpoint: {reason}.")


class EndpointNotPublished(LiveEndpointUnavailable):
    """The app runs, but its runtime file is not there (yet): the bridge may be off in its settings."""


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
    path = runtime_file_path(spec, host)
    if path is None:
        raise LiveEndpointUnavailable(server, AppState.ENDPOINT_UNAVAILABLE,
                                      unexpandable(spec, host) or f"the runtime file path {spec.path} is not usable")
    try:
        runtime = read_runtime_file(Path(path), pid_key=spec.pid_key, url_key=spec.url_key,
                                    token_key=spec.token_key)
    except RuntimeFileMissing:
        missing = f"runtime file {path}: the file does not exist"
        if app_path is None:
            raise LiveEndpointUnavailable(server, AppState.ENDPOINT_UNAVAILABLE, missing) from None
        if not host.process_running(app_path):
            raise LiveEndpointUnavailable(server, AppState.APP_NOT_RUNNING, "the app is not running") from None
        raise EndpointNotPublished(server, AppState.ENDPOINT_UNAVAILABLE, missing) from None
    except RuntimeFileError as exc:
        raise LiveEndpointUnavailable(server, AppState.ENDPOINT_UNAVAILABLE,
                                      f"runtime file {path}: {exc.reason}") from None
    if not host.pid_alive(runtime.pid):
        raise LiveEndpointUnavailable(server, AppState.APP_NOT_RUNNING,
                                      f"the process {runtime.pid} named in {path} is not running")
    try:
        url = runtime.url(spec.endpoint_path)
    except ValueError as exc:
        raise LiveEndpointUnavailable(server, AppState.ENDPOINT_UNAVAILABLE, str(exc)) from None
    return LiveEndpoint(url, runtime.pid, runtime.token, path, runtime.host, runtime.port)
