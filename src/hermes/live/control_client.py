"""Finding live sessions through their runtime files and asking them to act.

A session file names a pid, a loopback URL, a token and when the process started. A file is
trusted only while that pid is alive *and* started at that time: a pid the system has since given
to another process (after a crash, a reboot) makes the file stale, and stale files are removed.
A session that does not answer is skipped with the reason, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from hermes.apps.runtimefile import RuntimeEndpoint, RuntimeFileError, read_runtime_file
from hermes.home import Home

# Two start times of the same process agree to within this; another process with the same pid differs.
_START_TOLERANCE = 1.0


@dataclass(frozen=True)
class LiveSession:
    path: Path
    endpoint: RuntimeEndpoint


def process_started(pid: int) -> float | None:
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OverflowError, ValueError):
        return None


def _is_that_process(endpoint: RuntimeEndpoint) -> bool:
    recorded, actual = endpoint.started, process_started(endpoint.pid)
    return recorded is not None and actual is not None and abs(recorded - actual) <= _START_TOLERANCE


def live_sessions(home: Home) -> list[LiveSession]:
    """Sessions whose runtime file is valid and whose process is the one that wrote it; stale files go."""
    found: list[LiveSession] = []
    for path in sorted(home.run.glob("session-*.json")):
        try:
            endpoint = read_runtime_file(path)
        except RuntimeFileError:
            continue
        if not _is_that_process(endpoint):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        found.append(LiveSession(path, endpoint))
    return found


_ANSWER_LIMIT = 4 * 1024 * 1024  # a status of many servers is a few hundred KB; more is not an answer
_WATCH_INTERVAL = 0.05


def _suspended(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_STOPPED)
    except psutil.Error:
        return False


def _suspended_error(pid: int) -> dict[str, Any]:
    return {"error": f"the session (pid {pid}) is suspended (stopped with Ctrl-Z or SIGSTOP); resume it "
                     f"with `kill -CONT {pid}` or `fg`"}


def ask(session: LiveSession, method: str, path: str, *, timeout: float = 120.0) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON object); status 0 with an `error` when the session cannot be reached or
    answers something that is not a bounded JSON object (a session file is only as honest as its port).

    A stopped process still accepts connections (the kernel queues them), so the request would
    wait its whole timeout for an answer that cannot come. The request runs in a worker thread
    while this one watches the process: one that is, or becomes, suspended is named at once.
    """
    pid = session.endpoint.pid
    if _suspended(pid):
        return 0, _suspended_error(pid)
    answer: list[tuple[int, dict[str, Any]]] = []
    worker = threading.Thread(target=lambda: answer.append(_request(session, method, path, timeout)),
                              name="hermes-control-request", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(_WATCH_INTERVAL)
        if worker.is_alive() and _suspended(pid):
            return 0, _suspended_error(pid)  # the worker ends with its timeout; nothing waits for it
    return answer[0] if answer else (0, {"error": f"the session (pid {pid}) did not answer"})


def _request(session: LiveSession, method: str, path: str, timeout: float) -> tuple[int, dict[str, Any]]:
    import httpx2

    pid = session.endpoint.pid
    headers = {"Authorization": f"Bearer {session.endpoint.token}"} if session.endpoint.token else {}
    try:
        with httpx2.stream(method, session.endpoint.url(path), headers=headers,
                           timeout=httpx2.Timeout(timeout, connect=2.0)) as response:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > _ANSWER_LIMIT:
                    return 0, {"error": f"the session (pid {pid}) answered more than {_ANSWER_LIMIT} bytes"}
                chunks.append(chunk)
            status = response.status_code
    except httpx2.HTTPError as exc:
        return 0, {"error": f"the session (pid {pid}) did not answer ({type(exc).__name__})"}
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, RecursionError):
        return 0, {"error": f"the session (pid {pid}) answered something that is not JSON"}
    return status, body if isinstance(body, dict) else {"error": "unexpected answer"}
