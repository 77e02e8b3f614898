"""`hermes gateway start | stop | status`: the gateway as the user's own background service.

`start` runs `hermes gateway run` detached from the terminal (its output in
`HERMES_HOME/logs/gateway.log`) and returns once it is serving, or says why it ended. Where the
gateway should outlive a logout and a reboot, `install-service` writes a systemd user unit that
runs the same command (restarted on failure), for `systemctl --user enable --now`. The running
gateway keeps `HERMES_HOME/gateway/state.json` (its pid, since when, on which platforms); `status`
and `stop` trust it only while that pid is alive and is a hermes gateway, so a stale file after a
crash or a reboot never names (or signals) another process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes.errors import HermesError
from hermes.files import (
    atomic_write,
    file_lock,
    open_private_append,
    private_dir,
    read_head,
    read_json_object,
    read_tail,
)
from hermes.home import Home

START_SECONDS = 120.0  # servers and a homeserver sign-in can take a while on a slow machine
STOP_SECONDS = 30.0
POLL = 0.2  # a command waiting on another process (not a test waiting on an event)


@dataclass(frozen=True)
class Running:
    pid: int
    started: float
    platforms: tuple[str, ...]


def state_path(home: Home) -> Path:
    return home.gateway / "state.json"


def log_path(home: Home) -> Path:
    return home.logs / "gateway.log"


@contextmanager
def one_gateway(home: Home) -> Iterator[None]:
    """Held while a gateway serves: a second one for the same HERMES_HOME would answer every message
    (and run every tool) twice, or fight the first over a bot's updates."""
    from filelock import Timeout

    private_dir(home.gateway)
    lock = file_lock(home.gateway / "gateway", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        found = running(home)
        raise HermesError("A gateway is already running for this HERMES_HOME" +
                          (f" (pid {found.pid})" if found else "") + "; `hermes gateway stop` stops it.") from None
    except OSError as exc:  # after Timeout, which is one too
        raise HermesError(f"{lock.lock_file}: {exc.strerror or exc}; the gateway cannot start.") from None
    try:
        yield
    finally:
        lock.release()


def write_state(home: Home, platforms: list[str]) -> None:
    import psutil

    private_dir(home.gateway)
    atomic_write(state_path(home), json.dumps({"pid": os.getpid(), "created": psutil.Process().create_time(),
                                               "started": time.time(), "platforms": platforms}))


def clear_state(home: Home) -> None:
    data = read_json_object(state_path(home), 4096, follow_symlinks=False) or {}
    if data.get("pid") == os.getpid():
        try:
            state_path(home).unlink()
        except OSError:
            return


def running(home: Home) -> Running | None:
    """The gateway serving for this HERMES_HOME, if one is."""
    import psutil

    data = read_json_object(state_path(home), 4096, follow_symlinks=False) or {}
    pid, started, platforms = data.get("pid"), data.get("started"), data.get("platforms")
    created = data.get("created")
    if not isinstance(pid, int) or not isinstance(started, (int, float)) or not isinstance(platforms, list) \
            or not isinstance(created, (int, float)) or not 0 < started < 1e11:  # NaN and absurd times too
        return None
    try:
        process = psutil.Process(pid)
        # The same pid and the same start time: this process, not one that took its number later.
        command = process.cmdline()
        if abs(process.create_time() - created) > 0.01 or "gateway" not in command \
                or not any("hermes" in part for part in command):
            return None
    except (psutil.Error, OSError):
        return None
    return Running(pid, float(started), tuple(str(p) for p in platforms))


def start(home: Home) -> Running:
    found = running(home)
    if found is not None:
        raise HermesError(f"The gateway is already running (pid {found.pid}); `hermes gateway stop` stops it.")
    private_dir(home.logs)
    try:
        log = open_private_append(log_path(home), binary=True)  # never a FIFO's blocking open
    except OSError as exc:
        raise HermesError(f"The gateway's log cannot be written: {exc}") from None
    with log:
        child = subprocess.Popen([sys.executable, "-m", "hermes", "gateway", "run"], stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=log, start_new_session=True,
                                 env={**os.environ, "HERMES_HOME": str(home.root)})
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = running(home)
        if found is not None and found.pid == child.pid:
            return found
        if child.poll() is not None:
            tail = read_tail(log_path(home), 4000).decode("utf-8", "replace").strip().splitlines()
            starts = [index for index, line in enumerate(tail) if line.startswith("Error: ")]
            # The whole of the last error (a missing model's comes with the block to add), else the last line.
            said = "\n".join(tail[starts[-1]:]).removeprefix("Error: ") if starts else \
                (tail[-1] if tail else "no output")
            raise HermesError(f"The gateway stopped as it started: {said} (the whole log: {log_path(home)})")
        time.sleep(POLL)
    raise HermesError(f"The gateway did not report serving within {START_SECONDS:.0f} s; it is still starting "
                      f"(pid {child.pid}, log {log_path(home)}).")


def stop(home: Home) -> Running | None:
    """Stop the running gateway (None: none was running)."""
    import psutil

    found = running(home)
    if found is None:
        return None
    try:
        process = psutil.Process(found.pid)
        process.send_signal(signal.SIGTERM)
        process.wait(STOP_SECONDS)
    except psutil.NoSuchProcess:
        return found
    except psutil.TimeoutExpired:
        raise HermesError(f"The gateway (pid {found.pid}) did not stop within {STOP_SECONDS:.0f} s of SIGTERM; "
                          f"see {log_path(home)}.") from None
    return found


UNIT_NAME = "hermes-gateway.service"
UNIT_MARK = "# Written by `hermes gateway install-service`; `hermes gateway uninstall-service` removes it."


def unit_path(environ: Mapping[str, str]) -> Path:
    config = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(config) / "systemd" / "user" / UNIT_NAME


def unit_text(home: Home, python: str, path: str) -> str:
    """`path`: the PATH servers are found on (the installing shell's: a user unit's own is minimal)."""
    return "\n".join([
        UNIT_MARK,
        "[Unit]",
        "Description=hermes gateway: the agent and its MCP tools on messaging platforms",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        f"ExecStart={_quoted(python)} -m hermes gateway run",
        f"Environment={_quoted(f'HERMES_HOME={home.root}')} {_quoted(f'PATH={path}')}",
        "Restart=on-failure",
        "RestartSec=10",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ])


def _quoted(value: str) -> str:
    """A value as systemd reads it back whole: quoted, with its specifier and variable signs doubled."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def install_unit(home: Home, environ: Mapping[str, str]) -> Path:
    """Write the user unit (again, when it is hermes's own); a unit of that name written by someone else
    is left as it is."""
    path = unit_path(environ)
    if path.is_symlink() or (path.exists() and UNIT_MARK not in _head(path)):
        raise HermesError(f"{path} exists and was not written by hermes; it is left as it is (remove it, or "
                          f"run the gateway from it as it stands).")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, unit_text(home, sys.executable, environ.get("PATH", os.defpath)), mode=0o644)
    return path


def uninstall_unit(environ: Mapping[str, str]) -> Path | None:
    """Remove hermes's unit (None: there was none); someone else's is never removed."""
    path = unit_path(environ)
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or UNIT_MARK not in _head(path):
        raise HermesError(f"{path} was not written by hermes; it is left as it is.")
    path.unlink()
    return path


def _head(path: Path) -> str:
    try:
        return read_head(path, 4096, follow_symlinks=False).decode("utf-8", "replace")
    except OSError:
        return ""
