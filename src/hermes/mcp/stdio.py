"""A stdio transport that owns its child process completely.

Why not the SDK's `stdio_client`: hermes needs the exact environment allowlist (the SDK adds its own
defaults), a child that dies with hermes (see `children`), stderr redacted line by line into the
server's log with a tail kept for error messages, the child's exit as an event the supervisor can
wait on (without polling), and stdout read in linear time (the SDK re-splits its whole buffer on
every chunk, which makes a 48 MB result take almost a minute).

Lifecycle, like the SDK's: `__aenter__` spawns the process and starts the two output readers and
an exit watcher in a task group (a request is written by its sender: `StdinWriter`); `__aexit__`
runs the shutdown under a shield — close stdin, give the server `_EXIT_GRACE` to exit, SIGTERM
its group, SIGKILL it — with every wait bounded, so a cancelled caller can neither leak a process
nor hang on one. The two output pipes are read to their end whatever happens to the caller (their
readers are shielded, stopped by `__aexit__`): asyncio closes a process's transport only once both
are, and a transport still open when the command's event loop closes ends in "Event loop is
closed" from its finalizer.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import os
import signal
from collections.abc import Callable
from types import TracebackType

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.message import SessionMessage

from hermes.files import TextSink
from hermes.mcp.children import SessionTable, Watchdog, kill_group, resolve_command, start_child, wait_for_exit
from hermes.mcp.sandbox import RELAY_DIR, RELAY_SCRIPT, Plan, SandboxRequest, bwrap_argv, host_side
from hermes.mcp.sandbox_denials import DenialWatch
from hermes.mcp.sandbox_hold import HeldBinds
from hermes.mcp.sandbox_relay import HostRelay
from hermes.mcp.sdk import TransportStreams
from hermes.mcp.stdin_writer import StdinWriter
from hermes.security.redact import Redactor

# A server gets this long to exit by itself after its stdin closes, then SIGTERM, then SIGKILL.
_EXIT_GRACE = 1.0
_TERM_GRACE = 1.0
_HURRIED_GRACE = 0.15  # each of the two graces, when the user interrupted
_KILL_REAP = 5.0
_PIPES_GRACE = 2.0  # for a writer that left the server's session (setsid): it may hold them for good
_STDERR_TAIL_LINES = 20
_MAX_STDERR_LINE = 4096
# One JSON-RPC message may be large (a tool result of many megabytes), but not unbounded.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024



class MessageTooLarge(ValueError):
    pass


class LineSplitter:
    """Splits a byte stream into lines in linear time: each byte is scanned and copied O(1) times."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        """The complete lines `chunk` finishes (without their newline); raises past `limit`."""
        scan_from = len(self._buffer)
        self._buffer += chunk
        last = self._buffer.rfind(b"\n", scan_from)
        if last == -1:
            if len(self._buffer) > self.limit:
                self._buffer.clear()
                raise MessageTooLarge(f"a message from the server is larger than {self.limit} bytes")
            return []
        complete = bytes(self._buffer[:last])
        del self._buffer[:last + 1]
        return complete.split(b"\n")


class StdioProcess:
    """The SDK `Transport` for one server process, with its pid, exit status and stderr tail."""

    def __init__(self, command: str, args: list[str], *, env: dict[str, str], cwd: str | None,
                 log: TextSink, redact: Redactor, watchdog: Watchdog | None = None,
                 sandbox: SandboxRequest | None = None, name: str = "server", sandbox_state: str | None = None,
                 on_denial: Callable[[tuple[str, ...]], None] | None = None, patience: float = 300.0) -> None:
        """`sandbox_state`: how its sandbox stands in words (set again once the start builds it);
        `on_denial`: told each time the sandbox refused the server something new; `patience`: how
        long a request may wait for a server far behind in reading its input (its calls' timeout)."""
        self.name = name
        self.patience = patience
        self.command = command
        self.args = args
        self.env = env
        self.cwd = cwd
        self._log = log
        self._redact = redact
        self._watchdog = watchdog
        self.process: anyio.abc.Process | None = None
        self.returncode: int | None = None
        self.exited = anyio.Event()
        self._watcher_gone = anyio.Event()  # the exit watcher has returned: the exit seen, or cancelled
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._tasks: anyio.abc.TaskGroup | None = None
        self._output_scope = anyio.CancelScope(shield=True)
        self._output_read = anyio.Event()  # both output pipes at their end: every writer is gone
        # Set once the handshake is done; a server stopped before that has nothing to save, and
        # gets the short grace (a listing that stops waiting for it must not wait for its exit).
        self.settled = False
        self._sandbox = sandbox
        self.plan: Plan | None = None  # the sandbox this start runs in, once built
        self.denials: DenialWatch | None = None
        self.on_denial = on_denial
        self._relay: HostRelay | None = None
        self.sandbox_state = sandbox_state or ("on" if sandbox is not None else "off")

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def sandbox_problem(self) -> str | None:
        """What bubblewrap said when it could not build the sandbox (the server never ran)."""
        if self.plan is None:
            return None
        return next((line for line in self.stderr_tail if line.startswith("bwrap: ")), None)

    async def _argv(self, program: str) -> tuple[list[str], dict[str, str], HeldBinds | None]:
        """The command line that starts the server, the environment it starts with, and the places its
        sandbox binds, held open until it has started."""
        request = self._sandbox
        if request is None:
            return [program, *self.args], self.env, None
        cwd = self.cwd or os.getcwd()
        with anyio.CancelScope(shield=True):  # the files it opens are closed below, never dropped
            plan, held = await anyio.to_thread.run_sync(request.prepare, program, self.args, self.env, cwd,
                                                        self.cwd is not None)
        try:
            return await self._sandboxed_argv(request, program, plan, held, cwd)
        except BaseException:
            held.close()
            raise

    async def _sandboxed_argv(self, request: SandboxRequest, program: str, plan: Plan, held: HeldBinds,
                              cwd: str) -> tuple[list[str], dict[str, str], HeldBinds | None]:
        self.plan = plan
        self.denials = DenialWatch(self.name, plan)
        self.sandbox_state = f"on (network {plan.network.value}" + \
            ("; a project's server, confined to its folder until `hermes mcp trust --grant`)" if plan.project else ")")
        relay: list[str] = []
        relay_dir = None
        if plan.ports and plan.relay_python:
            self._relay = HostRelay(plan.ports)
            relay_dir = await self._relay.open()
            relay = [plan.relay_python, "-I", str(RELAY_SCRIPT), RELAY_DIR, *map(str, plan.ports), "--"]
        outside, inside = host_side(self.env)
        return [*bwrap_argv(request.bwrap, plan, cwd, relay_dir=relay_dir, inside=inside, held=held), *relay,
                program, *self.args], outside, held

    def observe(self, text: str) -> None:
        """Name what the sandbox refused, from a server's words (a failed call's text)."""
        if self.denials is None:
            return
        found = self.denials.observe(text)
        for sentence in found:
            self._log_line(f"[hermes sandbox] {sentence}".encode(), watch=False)
        if found and self.on_denial is not None:
            self.on_denial(tuple(self.denials.seen))

    async def __aenter__(self) -> TransportStreams:
        program = resolve_command(self.command, self.env.get("PATH"), self.cwd)
        try:
            argv, env, held = await self._argv(program)
            try:
                self.process = await start_child(argv, env=env, cwd=self.cwd, pass_fds=held.fds if held else ())
            finally:
                if held is not None:
                    held.close()
        except BaseException:
            await self._close_relay()
            raise
        # Nothing between the spawn and the task group may leave the child behind: no await (a
        # cancellation would land there), and anything that raises kills the child's group first.
        try:
            if self._watchdog is not None:
                self._watchdog.watch(self.process.pid)
            incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](16)
            self._incoming, self._incoming_send = incoming, incoming_send
            assert self.process.stdin is not None
            outgoing = StdinWriter(self.process.stdin, patience=self.patience, broken=incoming_send.close)
            self._outgoing = outgoing
            self._tasks = anyio.create_task_group()
        except BaseException:
            kill_group(self.process.pid, signal.SIGKILL)
            raise
        await self._tasks.__aenter__()
        self._tasks.start_soon(self._read_output)
        self._tasks.start_soon(self._watch_exit)
        if self._relay is not None:
            self._relay.serve_in(self._tasks)
        return incoming, outgoing

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool | None:
        assert self._tasks is not None
        with anyio.CancelScope(shield=True):
            await self._shutdown()
        # Usually every pipe task has ended by now. A cancellation costs anyio a description of the
        # task (a tenth of a millisecond), and a session of a hundred servers stops them all at once.
        if not self._output_read.is_set():
            self._output_scope.cancel()
        if self._relay is not None or not (self._watcher_gone.is_set()
                                           and self._output_read.is_set()):
            self._tasks.cancel_scope.cancel()
        try:
            return await self._tasks.__aexit__(exc_type, exc, tb)
        finally:
            with anyio.CancelScope(shield=True):
                await self._close_relay()

    async def _close_relay(self) -> None:
        relay, self._relay = self._relay, None
        if relay is not None:
            await relay.close()

    # -- pipe tasks ------------------------------------------------------------------------------

    async def _read_output(self) -> None:
        # Entered before this task's first await: anyio delivers a cancellation only to started
        # tasks, so no caller's cancellation can reach the readers before the shield is up.
        with self._output_scope:
            async with anyio.create_task_group() as readers:
                readers.start_soon(self._read_stdout)
                readers.start_soon(self._read_stderr)
            self._output_read.set()

    async def _read_stdout(self) -> None:
        assert self.process and self.process.stdout
        splitter = LineSplitter(MAX_MESSAGE_BYTES)
        forwarding = True
        try:
            async for chunk in self.process.stdout:
                if forwarding:
                    forwarding = await self._forward(splitter, chunk)
                    if not forwarding:
                        self._incoming_send.close()  # the session sees the connection end now
                # Once the connection has ended, the rest is read and dropped: the pipe must reach its end.
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass  # the process went away, or the shutdown closed the stream
        finally:
            self._incoming_send.close()

    async def _forward(self, splitter: LineSplitter, chunk: bytes) -> bool:
        """Hand each whole message in `chunk` to the session; False once the connection must end."""
        try:
            lines = splitter.feed(chunk)
        except MessageTooLarge:
            self._unreadable(f"a message larger than {MAX_MESSAGE_BYTES} bytes")
            return False
        for line in lines:
            if not line.strip():
                continue
            message = _parse(line)
            if isinstance(message, SessionMessage):
                try:
                    await self._incoming_send.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return False  # the session went away
            elif line.lstrip().startswith(b"{"):
                # A JSON-RPC message hermes cannot read answers some request nobody can name:
                # waiting for it would last the whole timeout, so the connection ends now.
                self._unreadable(f"a message hermes could not read ({_why(message)})")
                return False
            else:
                self._log_line(b"[stdout, not MCP] " + line[:_MAX_STDERR_LINE])
        return True

    async def _read_stderr(self) -> None:
        assert self.process and self.process.stderr
        splitter = LineSplitter(1 << 20)
        try:
            async for chunk in self.process.stderr:
                try:
                    lines = splitter.feed(chunk)
                except MessageTooLarge:
                    lines = [b"[a stderr line longer than 1 MiB was dropped]"]
                for raw in lines:
                    self._log_line(raw)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass

    def _unreadable(self, what: str) -> None:
        """End the connection (the incoming stream closes when this task returns), saying why in its log."""
        self._log_line(f"[hermes] the server sent {what}; the connection was closed".encode())

    def _log_line(self, raw: bytes, *, watch: bool = True) -> None:
        # Redacted whole, then cut: a secret that straddled the cut would otherwise leave its start.
        line = self._redact(raw.decode(errors="replace").rstrip("\r"))
        if len(line) > _MAX_STDERR_LINE:
            line = line[:_MAX_STDERR_LINE] + " [...]"
        self.stderr_tail.append(line)
        with contextlib.suppress(OSError, ValueError):
            self._log.write(line + "\n")
            self._log.flush()
        if watch:
            self.observe(line)

    async def _watch_exit(self) -> None:
        try:
            await self._reap()
        finally:
            self._watcher_gone.set()

    async def _reap(self) -> None:
        process = self.process
        assert process is not None
        self.returncode = await wait_for_exit(process.pid, lambda: process.returncode)
        self.exited.set()

    async def _wait_exit(self, timeout: float = math.inf) -> None:
        """Wait (at most `timeout`) until the process has exited; then `exited` is set.

        While the exit watcher runs, this waits for it: a second pidfd per server would cost the
        stop of a session of 100 servers 100 more registrations with the event loop's poller. When
        the caller is cancelled, the exit watcher is cancelled with it (only the output readers are
        shielded), and the shielded shutdown then waits for the exit itself.
        """
        if self.exited.is_set():
            return
        with anyio.move_on_after(timeout):
            if self._tasks is not None:  # the watcher was started with the process
                await self._watcher_gone.wait()
            if not self.exited.is_set():
                await self._reap()

    # -- shutdown --------------------------------------------------------------------------------

    async def _shutdown(self) -> None:
        process = self.process
        assert process is not None
        self._outgoing.close()
        if process.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        hurry = not self.settled or (self._watchdog is not None and self._watchdog.hurry)
        await self._wait_exit(_HURRIED_GRACE if hurry else _EXIT_GRACE)
        if not self.exited.is_set():
            kill_group(process.pid, signal.SIGTERM)
            await self._wait_exit(_HURRIED_GRACE if hurry else _TERM_GRACE)
        # Whatever the server started goes too, even if the server itself exited: its group, and
        # whatever moved to another group within its session.
        kill_group(process.pid, signal.SIGKILL)
        sessions = self._watchdog.sessions if self._watchdog is not None else SessionTable()
        sessions.kill_survivors(process.pid)
        await self._wait_exit(_KILL_REAP)
        # Nobody reads messages now; closing here also frees a reader blocked handing one over.
        self._incoming.close()
        # A sandboxed server's processes die a moment after bwrap itself, and hold the pipes till then.
        with anyio.move_on_after(_PIPES_GRACE) as waited:
            await self._output_read.wait()
        if waited.cancelled_caught:
            _abandon_pipes(process)
        if self._watchdog is not None:
            self._watchdog.forget(process.pid)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.aclose()


def _abandon_pipes(process: anyio.abc.Process) -> None:
    """Close our end of the pipes that a writer outside the server's session still holds.

    asyncio closes a process's transport by itself only once both output pipes have reached their
    end; one still open when the loop closes prints "Exception ignored ... Event loop is closed" from
    its finalizer. Neither anyio nor asyncio closes it publicly, hence anyio's own attribute (absent
    on another backend or version: the finalizer's message is then all that is lost).
    """
    transport = getattr(process, "_transport", None)
    if isinstance(transport, asyncio.SubprocessTransport):
        transport.close()


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except (ValueError, RecursionError) as exc:
        return exc


def _why(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return "nested too deeply" if isinstance(exc, RecursionError) or any("recursion" in t.lower() for t in text) \
        else (text[0][:120] if text else type(exc).__name__)
