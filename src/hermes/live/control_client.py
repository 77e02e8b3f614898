"""Finding live sessions through their runtime files and asking them to act."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from hermes.apps.runtimefile import RuntimeEndpoint, RuntimeFileError, read_runtime_file
from hermes.home import Home


@dataclass(frozen=True)
class LiveSession:
    path: Path
    endpoint: RuntimeEndpoint


def live_sessions(home: Home) -> list[LiveSession]:
    """Sessions whose runtime file is valid and whose pid is alive; stale files are removed."""
    found: list[LiveSession] = []
    for path in sorted(home.run.glob("session-*.json")):
        try:
            endpoint = read_runtime_file(path)
        except RuntimeFileError:
            continue
        if not psutil.pid_exists(endpoint.pid):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        found.append(LiveSession(path, endpoint))
    return found


def ask(session: LiveSession, method: str, path: str, *, timeout: float = 120.0) -> tuple[int, dict[str, Any]]:
    import httpx2

    headers = {"Authorization": f"Bearer {session.endpoint.token}"} if session.endpoint.token else {}
    response = httpx2.request(method, session.endpoint.url(path), headers=headers, timeout=timeout)
    try:
        body = response.json()
    except ValueError:
        body = {"error": response.text[:200]}
    return response.status_code, body if isinstance(body, dict) else {"error": "unexpected answer"}
