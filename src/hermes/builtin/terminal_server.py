"""The `terminal` toolset: the agent runs shell commands, in the foreground or in the background.

Run by hermes as a stdio MCP server in the session's sandbox (`python terminal_server.py`), so a
command sees what a stdio server sees: the working folder writable, secret stores hidden, the
environment hermes gives every server (no API keys). It imports the SDK and the standard library
only, never hermes.

- `run`: a command to its end, or until its timeout (then its whole process group is killed); its
  output (stdout and stderr together) is kept up to MAX_KEPT bytes, the head and the tail.
- `start`, `output`, `stop`: a long-running command (a dev server, a watcher) in the background;
  its output is kept (the last MAX_KEPT bytes) and read later. Background commands end with the
  session: they are this server's children, in groups this server kills when it exits.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio
import anyio.abc
from anyio.streams.text import TextReceiveStream
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

RUNS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)
READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)

MAX_KEPT = 256 * 1024  # characters of output kept per command
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 3600.0
MAX_BACKGROUND = 16
STOP_GRACE = 2.0


class TerminalError(ToolError):
    """A refusal worded for the model."""


def _shell() -> list[str]:
    return [shutil.which("bash") or "/bin/sh", "-c"]


@dataclass
class Output:
    """What a command printed: its first MAX_KEPT // 2 characters and its latest ones, with a count of
    what fell in between."""

    head: str = ""
    tail: str = ""
    dropped: int = 0
    read_up_to: int = 0  # characters already handed to the model (background commands)
    total: int = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        room = MAX_KEPT // 2 - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        self.tail += text
        if len(self.tail) > MAX_KEPT // 2:
            self.dropped += len(self.tail) - MAX_KEPT // 2
            self.tail = self.tail[-(MAX_KEPT // 2):]

    def whole(self) -> str:
        gap = f"\n[... {self.dropped} characters of output not kept ...]\n" if self.dropped else ""
        return self.head + gap + self.tail

    def since_last_read(self) -> str:
        """What was printed since the last call; what scrolled out of the kept tail is counted."""
        start = self.read_up_to
        self.read_up_to = self.total
        kept_from = self.total - len(self.tail)
        if start >= kept_from:
            return self.tail[start - kept_from:]
        head_part = self.head[start:] if start < len(self.head) else ""
        lost = kept_from - max(start, len(self.head))
        gap = f"[... {lost} characters not kept ...]\n" if lost > 0 else ""
        return head_part + gap + self.tail


@dataclass
class Job:
    number: int
    command: str
    process: anyio.abc.Process
    output: Output = field(default_factory=Output)
    finished: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)
    returncode: int | None = None

    def status(self) -> str:
        return "running" if self.returncode is None else f"exited with code {self.returncode}"


async def _open(command: str, cwd: str) -> anyio.abc.Process:
    if not os.path.isdir(cwd):
        raise TerminalError(f"the folder {cwd} does not exist")
    # Never the server's own stdin: that is the protocol's pipe.
    return await anyio.open_process([*_shell(), command], cwd=cwd, stdin=subprocess.DEVNULL,
                                    stderr=subprocess.STDOUT, start_new_session=True)


def _kill_group(process: anyio.abc.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _collect(process: anyio.abc.Process, output: Output, on_text: Callable[[], None] | None = None) -> None:
    assert process.stdout is not None
    async for text in TextReceiveStream(process.stdout, errors="replace"):
        output.add(text)
        if on_text is not None:
            on_text()


class Jobs:
    """The background commands of this session, read by number; their readers live in `tasks`."""

    def __init__(self, tasks: anyio.abc.TaskGroup) -> None:
        self._tasks = tasks
        self._jobs: dict[int, Job] = {}
        self._next = 1

    async def start(self, command: str, cwd: str) -> Job:
        if sum(job.returncode is None for job in self._jobs.values()) >= MAX_BACKGROUND:
            raise TerminalError(f"{MAX_BACKGROUND} background commands are running; stop one first")
        job = Job(self._next, command, await _open(command, cwd))
        self._jobs[job.number] = job
        self._next += 1
        self._tasks.start_soon(self._follow, job)
        return job

    async def _follow(self, job: Job) -> None:
        try:
            await _collect(job.process, job.output, lambda: job.changed.set())
            job.returncode = await job.process.wait()
        finally:
            _kill_group(job.process, signal.SIGKILL)  # what it left behind goes with it
            job.finished.set()
            job.changed.set()

    def get(self, number: int) -> Job:
        if number not in self._jobs:
            known = ", ".join(str(n) for n in self._jobs) or "none"
            raise TerminalError(f"there is no background command {number} (known: {known})")
        return self._jobs[number]

    def listing(self) -> str:
        if not self._jobs:
            return "No background commands."
        return "\n".join(f"{job.number}: {job.status()}: {job.command}" for job in self._jobs.values())

    def stop_all(self) -> None:
        for job in self._jobs.values():
            if job.returncode is None:
                _kill_group(job.process, signal.SIGKILL)


def build(jobs: Jobs) -> MCPServer:
    app = MCPServer("terminal", instructions="Run shell commands in the working folder.")

    @app.tool(name="run", annotations=RUNS, description=(
        "Run a shell command in the working folder (or `cwd`) and return its output (stdout and stderr "
        f"together) and exit code. It is stopped after `timeout` seconds (default {DEFAULT_TIMEOUT:g}, at most "
        f"{MAX_TIMEOUT:g}); for a server or a watcher use terminal_start."))
    async def run(command: str, timeout: float = DEFAULT_TIMEOUT, cwd: str = ".") -> str:
        limit = max(0.1, min(float(timeout), MAX_TIMEOUT))
        process = await _open(command, cwd)
        output = Output()
        code: int | None = None
        try:
            with anyio.move_on_after(limit):
                await _collect(process, output)
                code = await process.wait()
        finally:
            _kill_group(process, signal.SIGKILL)
            with anyio.CancelScope(shield=True):
                await process.wait()
        text = output.whole() or "(no output)"
        if code is None:
            return f"{text}\n[stopped after {limit:g} s: the command had not finished; for long commands use " \
                   f"terminal_start]"
        return f"{text}\n[exit code {code}]"

    @app.tool(name="start", annotations=RUNS, description=(
        "Start a long-running shell command in the background (a dev server, a build, a watcher); returns "
        "its number. Read what it prints with terminal_output, end it with terminal_stop."))
    async def start(command: str, cwd: str = ".") -> str:
        job = await jobs.start(command, cwd)
        return f"Started background command {job.number} (pid {job.process.pid}): {command}"

    @app.tool(name="output", annotations=READS, description=(
        "What a background command printed since the last look, and whether it still runs. `wait` "
        "(seconds, at most 60) waits for new output or its end first. Without a number: every background "
        "command and its state."))
    async def output(number: int | None = None, wait: float = 0.0) -> str:
        if number is None:
            return jobs.listing()
        job = jobs.get(number)
        if wait > 0 and job.returncode is None and job.output.read_up_to == job.output.total:
            job.changed = anyio.Event()
            with anyio.move_on_after(min(wait, 60.0)):
                await job.changed.wait()
        text = job.output.since_last_read()
        return f"{text or '(nothing new)'}\n[{job.status()}]"

    @app.tool(name="stop", annotations=RUNS, description="Stop a background command (and what it started).")
    async def stop(number: int) -> str:
        job = jobs.get(number)
        if job.returncode is None:
            _kill_group(job.process, signal.SIGTERM)
            with anyio.move_on_after(STOP_GRACE):
                await job.finished.wait()
            _kill_group(job.process, signal.SIGKILL)
            await job.finished.wait()
        return f"Background command {number} {job.status()}.\n{job.output.since_last_read()}".rstrip()

    return app


@contextlib.asynccontextmanager
async def _jobs() -> AsyncIterator[Jobs]:
    async with anyio.create_task_group() as tasks:
        jobs = Jobs(tasks)
        try:
            yield jobs
        finally:
            jobs.stop_all()


async def main() -> None:
    async with _jobs() as jobs:
        await build(jobs).run_stdio_async()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
