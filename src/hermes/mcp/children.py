"""Keeping child processes from outliving hermes, and noticing when one exits.

Three layers, because each covers what the others cannot:
- Every stdio server starts in its own session and process group, so stopping it signals the
  whole group: the server and whatever it started (npx -> node, uv -> python).
- On Linux, util-linux's `setpriv --pdeathsig KILL` execs the server with a parent-death signal,
  so a SIGKILLed hermes still takes its direct children with it.
- A parent-death signal reaches direct children only. A *watchdog* (one small `/bin/sh` per
  session, reading from a pipe only hermes holds) kills every registered process group when
  that pipe closes — which the kernel does however hermes dies, SIGKILL included. Grandchildren
  that stay in their server's group therefore die too, and so do those that moved to a group of
  their own (setpgid): each server leads its own session, and every member of it is killed. (A
  grandchild that calls setsid() leaves the session on purpose; no unprivileged mechanism can
  follow it, and none of the servers we run do that.) A watchdog costs one shell per session; a
  subreaper cannot help here, because a subreaper's orphans are handed to init when the
  subreaper itself is killed.

Exit detection is event-driven: on Linux a pidfd becomes readable when the child exits, so an
idle session makes no wake-ups at all (the asyncio child watcher still reaps the child).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import anyio
import anyio.abc

_EXIT_POLL = 0.05  # only where pidfd is missing (macOS, old kernels)
_WATCHDOG = (
    # Lines "+ PGID" register a group, "- PGID" forget it; at EOF (hermes gone) kill what is left.
    'groups=" "; '
    'while read -r op group; do case "$op" in '
    '+) groups="$groups$group ";; '
    # Forgetting uses the shell's own pattern removal: no process is forked per server stopped.
    '-) case "$groups" in *" $group "*) groups="${groups%% $group *} ${groups#* $group }";; esac;; '
    "esac; done; "
    # Each server leads its own session too: a helper that moved to a group of its own is still in it.
    'for group in $groups; do kill -s KILL -- -"$group" 2>/dev/null; pkill -KILL -s "$group" 2>/dev/null; done'
)


# Where a system's package manager puts the programs hermes runs on the host around a server
# (bubblewrap, setpriv). Never PATH: a relative or user-writable entry (`node_modules/.bin`) would
# let a repository's own program run with the user's rights at every server start.
SYSTEM_PROGRAM_FOLDERS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/run/current-system/sw/bin")


@functools.cache
def _setpriv() -> str | None:
    if not sys.platform.startswith("linux"):
        return None
    return next((path for folder in SYSTEM_PROGRAM_FOLDERS
                 if os.access(path := os.path.join(folder, "setpriv"), os.X_OK)), None)


def spawn_argv(command: str, args: list[str]) -> list[str]:
    """The argv that starts a server so it dies with us (see the module docstring)."""
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--", command, *args]
    return [command, *args]


async def start_child(argv: list[str], *, env: dict[str, str], cwd: str | None,
                      stdin: int | None = subprocess.PIPE, pass_fds: tuple[int, ...] = ()) -> anyio.abc.Process:
    """Start `argv` in a session of its own, so that it dies with us.

    The start is shielded: a cancellation landing inside asyncio's spawn would leave a child that
    nobody holds, reaped only after the event loop has closed (asyncio then prints "Loop ... that
    handles pid ... is closed" on stderr, and the transport's finalizer raises "Event loop is closed").
    """
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(spawn_argv(argv[0], argv[1:]), env=env, cwd=cwd, stdin=stdin,
                                           start_new_session=True, pass_fds=pass_fds)
    return process


def resolve_command(command: str, path: str | None, cwd: str | None) -> str:
    """The program a server's `command` names, as the child would find it; FileNotFoundError if none."""
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = command if os.path.isabs(command) or cwd is None else os.path.join(cwd, command)
        found = shutil.which(candidate)
    else:
        found = shutil.which(command, path=path)
    if found is None:
        raise FileNotFoundError(command)
    return found


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by `pid` (our children lead their own groups)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill_members(sid: int, members: list[int]) -> None:
    for pid in members:
        if pid != sid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _sessions() -> dict[int, list[int]]:
    """Every process this user can see, by the session it belongs to (Linux: read from /proc)."""
    members: dict[int, list[int]] = {}
    if not sys.platform.startswith("linux"):
        return members
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):  # gone, or another user's
                    members.setdefault(os.getsid(int(entry.name)), []).append(int(entry.name))
    return members


class SessionTable:
    """Kills what a stopped server left in its session (processes that moved to a group of their own).

    That takes a reading of /proc, every process on the machine. One server stopping reads it at
    once; while a whole session stops (`together`), the stopped servers' sessions are collected
    and read once at the end, instead of 100 readings for 100 servers.
    """

    def __init__(self) -> None:
        self._collected: list[int] | None = None

    def kill_survivors(self, sid: int) -> None:
        """SIGKILL what is left of the session `sid` (its leader has exited or been killed)."""
        if self._collected is not None:
            self._collected.append(sid)
        else:
            _kill_members(sid, _sessions().get(sid, []))

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """Servers stopped inside this block have their leftovers killed when it ends, in one reading."""
        self._collected = []
        try:
            yield
        finally:
            collected, self._collected = self._collected, None
            members = _sessions() if collected else {}
            for sid in collected:
                _kill_members(sid, members.get(sid, []))


class Watchdog:
    """Kills registered process groups when hermes dies, however it dies; one per session.

    Started on the first `watch()`; `close()` (at session end) lets it exit once every group it
    was told about has been forgotten.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        # Set when the user interrupted (Ctrl-C): servers get a short grace instead of the usual one,
        # so that one Ctrl-C ends hermes within a second.
        self.hurry = False
        # What the session's stopped servers left behind, read from /proc once for servers stopping together.
        self.sessions = SessionTable()

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)

    def _pipe(self) -> subprocess.Popen[bytes] | None:
        if sys.platform == "win32" or not os.path.exists("/bin/sh"):
            return None
        if self._process is None or self._process.poll() is not None:
            # Its own session: a Ctrl-C to hermes's terminal group must not kill the watchdog
            # before hermes has stopped its servers.
            self._process = subprocess.Popen(["/bin/sh", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True, close_fds=True)
        return self._process

    def _send(self, line: str) -> None:
        with self._lock:
            try:
                process = self._pipe()
            except OSError:
                return  # no watchdog (fork refused): the parent-death signal and the group still apply
            if process is None or process.stdin is None:
                return
            with contextlib.suppress(OSError):
                process.stdin.write(line.encode())
                process.stdin.flush()

    def watch(self, group: int) -> None:
        self._send(f"+ {group}\n")

    def forget(self, group: int) -> None:
        self._send(f"- {group}\n")


async def wait_for_exit(pid: int, returncode: Callable[[], int | None]) -> int:
    """Wait until the child `pid` has exited and asyncio's child watcher has reaped it; its exit status.

    Not `process.wait()`: on asyncio that also waits for the pipes to close, and a grandchild
    holding them would make an exited server look alive. Not the pidfd's own status either: until
    the watcher has told the loop, the process's transport is open, and a command that ended then
    would close the loop under it ("Loop ... that handles pid ... is closed" on stderr, "Event loop
    is closed" from the transport's finalizer).
    """
    pidfd = _open_pidfd(pid)
    if pidfd is None:
        while (code := returncode()) is None:
            await anyio.sleep(_EXIT_POLL)
        return code
    try:
        await anyio.wait_readable(pidfd)
    finally:
        os.close(pidfd)
    while (code := returncode()) is None:
        await anyio.sleep(0.001)  # the child has exited: the watcher's thread reaps it at once
    return code


def _open_pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None or not hasattr(os, "P_PIDFD"):
        return None
    try:
        return int(opener(pid))
    except ProcessLookupError:
        return None  # already gone and reaped: the returncode is (about to be) known
    except OSError:
        return None
