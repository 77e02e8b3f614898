"""A stdio transport that owns its child process completely.

Why not the SDK's `stdio_client`: hermes needs the exact environment allowlist (the SDK adds its own
defaults), a parent-death signal so children never outlive a killed host, stderr redacted line by
line into the server's log with a tail kept for error messages, and the child's exit as an event
the supervisor can wait on to restart the server.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from hermes.mcp.children import kill_group, resolve_command, spawn_plan

# A server gets this long to exit by itself after its stdin closes, then SIGTERM, then SIGKILL.
_EXIT_GRACE = 1.0
_TERM_GRACE = 1.0
_STDERR_TAIL_LINES = 20
_READ_CHUNK = 1 << 16
_EXIT_POLL = 0.05


class StdioTransport:
    def __init__(self, command: str, args: list[str], *, env: dict[str, str], cwd: str | None,
                 log: TextIO, redact: Callable[[str], str]) -> None:
        self.command = command
        self.args = args
        self.env = env
        self.cwd = cwd
        self._log = log
        self._redact = redact
        self.process: asyncio.subprocess.Process | None = None
        self.exited = anyio.Event()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._tasks: list[asyncio.Task[None]] = []
        self._incoming_send: MemoryObjectSendStream[SessionMessage | Exception]
        self._incoming: MemoryObjectReceiveStream[SessionMessage | Exception]
        self._outgoing: MemoryObjectSendStream[SessionMessage]
        self._outgoing_receive: MemoryObjectReceiveStream[SessionMessage]

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process else None

    async def __aenter__(self) -> tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                                        MemoryObjectSendStream[SessionMessage]]:
        program = resolve_command(self.command, self.env.get("PATH"), self.cwd)
        argv, preexec = spawn_plan(program, self.args)
        self.process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=self.env, cwd=self.cwd, start_new_session=True, preexec_fn=preexec,
            limit=_READ_CHUNK,
        )
        self._incoming_send, self._incoming = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        self._outgoing, self._outgoing_receive = anyio.create_memory_object_stream[SessionMessage](16)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read_stdout()), loop.create_task(self._write_stdin()),
                       loop.create_task(self._read_stderr()), loop.create_task(self._watch_exit())]
        return self._incoming, self._outgoing

    async def _read_stdout(self) -> None:
        assert self.process and self.process.stdout
        buffer = b""
        try:
            while chunk := await self.process.stdout.read(_READ_CHUNK):
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        await self._incoming_send.send(_parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass
        finally:
            self._incoming_send.close()

    async def _write_stdin(self) -> None:
        assert self.process and self.process.stdin
        stdin = self.process.stdin
        try:
            async for message in self._outgoing_receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                stdin.write(data.encode() + b"\n")
                await stdin.drain()
        except (ConnectionError, BrokenPipeError, anyio.ClosedResourceError):
            self._incoming_send.close()

    async def _read_stderr(self) -> None:
        assert self.process and self.process.stderr
        while raw := await self.process.stderr.readline():
            line = self._redact(raw.decode(errors="replace").rstrip("\n"))
            self.stderr_tail.append(line)
            self._log.write(line + "\n")
            self._log.flush()

    async def _watch_exit(self) -> None:
        # Poll the exit status rather than `process.wait()`, which also waits for the pipes to close;
        # a grandchild that inherited them would make an exited server look alive.
        assert self.process
        while self.process.returncode is None:
            await asyncio.sleep(_EXIT_POLL)
        self.exited.set()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        with anyio.CancelScope(shield=True):
            await self.close()

    async def close(self) -> None:
        process = self.process
        if process is None:
            return
        self._outgoing.close()
        if process.stdin:
            with contextlib.suppress(Exception):
                process.stdin.close()
        with anyio.move_on_after(_EXIT_GRACE):
            await self.exited.wait()
        if process.returncode is None:
            kill_group(process.pid, signal.SIGTERM)
            with anyio.move_on_after(_TERM_GRACE):
                await self.exited.wait()
        # Whatever the server started in its group goes too, even if the server itself exited.
        kill_group(process.pid, signal.SIGKILL)
        await self.exited.wait()
        for task in self._tasks:
            if not task.done():
                task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._incoming.close()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc
