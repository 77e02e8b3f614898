"""The `Host` seam: every operating-system fact the app checks need, in one small interface.

The real host is chosen by `sys.platform` in `local_host()`; tests build hosts from real fixture
files (plists, dpkg status files, snap.yaml, AppStream metainfo) plus small tables for what
cannot exist on Linux (the Windows registry, PE version resources), so the darwin and win32 logic
runs on any machine. Nothing else in `apps/` looks at `sys.platform`.
"""

from __future__ import annotations

import contextlib
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

from hermes.apps.windows import (
    UninstallEntry,
    has_interactive_session,
    read_pe_file_version,
    read_uninstall_entries,
)
from hermes.files import read_bounded

__all__ = ["Host", "LocalHost", "UninstallEntry", "linux_interactive_session", "local_host"]

_MAX_READ = 1 << 20


class Host(Protocol):
    os_name: str  # "linux" | "darwin" | "win32"

    def env(self, name: str) -> str | None: ...
    def home(self) -> str: ...
    def is_file(self, path: str) -> bool: ...
    def is_executable(self, path: str) -> bool: ...
    def is_dir(self, path: str) -> bool: ...
    def list_dir(self, path: str) -> list[str]: ...
    def read_text(self, path: str) -> str | None: ...
    def read_plist(self, path: str) -> dict[str, Any] | None: ...
    def which(self, name: str) -> str | None: ...
    def uninstall_entries(self) -> list[UninstallEntry]: ...
    def pe_file_version(self, path: str) -> str | None: ...
    def rpm_version(self, package: str) -> str | None: ...
    def pid_alive(self, pid: int) -> bool: ...
    def process_running(self, path: str) -> bool: ...
    def interactive_session(self) -> bool: ...


def _os_name() -> str:
    if sys.platform == "win32":
        return "win32"
    if sys.platform == "darwin":
        return "darwin"
    return "linux"


class LocalHost:
    """This machine."""

    def __init__(self) -> None:
        self.os_name = _os_name()

    def env(self, name: str) -> str | None:
        return os.environ.get(name)

    def home(self) -> str:
        return str(Path.home())

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def is_executable(self, path: str) -> bool:
        """A file this user may run: the execute bit on POSIX, an `.exe` on Windows."""
        if not os.path.isfile(path):
            return False
        if self.os_name == "win32":
            return path.lower().endswith(".exe")
        return os.access(path, os.X_OK)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def list_dir(self, path: str) -> list[str]:
        try:
            return os.listdir(path)
        except OSError:
            return []

    def read_text(self, path: str) -> str | None:
        # Bounded and never blocking: a FIFO or a device where a version file should be reads as nothing.
        try:
            return read_bounded(Path(path), _MAX_READ).decode("utf-8", errors="replace")
        except OSError:
            return None

    def read_plist(self, path: str) -> dict[str, Any] | None:
        try:
            data = plistlib.loads(read_bounded(Path(path), _MAX_READ))
        except (OSError, plistlib.InvalidFileException, ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) else None

    def which(self, name: str) -> str | None:
        return shutil.which(name)

    def uninstall_entries(self) -> list[UninstallEntry]:
        return read_uninstall_entries() if sys.platform == "win32" else []

    def pe_file_version(self, path: str) -> str | None:
        return read_pe_file_version(path) if sys.platform == "win32" else None

    def rpm_version(self, package: str) -> str | None:
        rpm = shutil.which("rpm")
        if rpm is None:
            return None
        # Queries the package database only; the app itself is never run.
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            result = subprocess.run([rpm, "-q", "--qf", "%{VERSION}", package], capture_output=True, text=True,
                                    timeout=10, check=False)
            if result.returncode == 0 and result.stdout.strip():
                return result.stdout.strip()
        return None

    def pid_alive(self, pid: int) -> bool:
        import psutil

        try:
            return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
        except (psutil.Error, OverflowError, ValueError):
            return False

    def process_running(self, path: str) -> bool:
        import psutil

        target = os.path.normcase(os.path.realpath(path))
        for process in psutil.process_iter(["exe", "cmdline"]):
            info = process.info
            seen = [info.get("exe") or "", *(info.get("cmdline") or [])[:2]]
            if any(item and os.path.normcase(os.path.realpath(item)) == target for item in seen):
                return True
        return False

    def interactive_session(self) -> bool:
        if sys.platform == "win32":
            return has_interactive_session()
        if sys.platform == "darwin":
            return True  # no way to ask without a subprocess; see SPEC 5.5
        return linux_interactive_session(self)


def linux_interactive_session(host: Host) -> bool:
    """`/proc/self/sessionid` readable and not the 'unset' value, and `/run/user/<uid>` exists."""
    session = (host.read_text("/proc/self/sessionid") or "").strip()
    if not session or session == "4294967295":
        return False
    uid = os.getuid() if hasattr(os, "getuid") else -1
    return host.is_dir(f"/run/user/{uid}")


def local_host() -> Host:
    return LocalHost()
