"""Finding live sessions through their runtime files and asking them to act.

A session file names a pid, a loopback URL, a token and when the process started. A file is
trusted only while that pid is alive *and* started at that time: a pid the system has since given
to another process (after a crash, a reboot) makes the file stale, and stale files are removed.
A session that does not answer is skipped with the reason, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
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
    wait its whole timeout for an answer that cannot come. The request runs beside a watch on the
    process, in one task group: one that is, or becomes, suspended is named at once, and the
    request is cancelled with the group.
    """
    pid = session.endpoint.pid
    if _suspended(pid):
        return 0, _suspended_error(pid)
    return anyio.run(_ask, session, method, path, timeout)


async def ask_async(session: LiveSession, method: str, path: str, *, timeout: float = 120.0
                    ) -> tuple[int, dict[str, Any]]:
    """`ask` from inside an event loop (the dashboard telling other sessions to reload)."""
    if _suspended(session.endpoint.pid):
        return 0, _suspended_error(session.endpoint.pid)
    return await _ask(session, method, path, timeout)


async def _ask(session: LiveSession, method: str, path: str, timeout: float) -> tuple[int, dict[str, Any]]:
    pid = session.endpoint.pid
    answer: tuple[int, dict[str, Any]] = (0, _suspended_error(pid))

    async def request(tasks: anyio.abc.TaskGroup) -> None:
        nonlocal answer
        answer = await _request(session, method, path, timeout)
        tasks.cancel_scope.cancel()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(request, tasks)
        while not _suspended(pid):
            await anyio.sleep(_WATCH_INTERVAL)
        tasks.cancel_scope.cancel()  # suspended: the answer stays the sentence that says so
    return answer


async def _request(session: LiveSession, method: str, path: str, timeout: float) -> tuple[int, dict[str, Any]]:
    import httpx2

    pid = session.endpoint.pid
    headers = {"Authorization": f"Bearer {session.endpoint.token}"} if session.endpoint.token else {}
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, connect=2.0)) as client, \
                client.stream(method, session.endpoint.url(path), headers=headers) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
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
