"""Test hosts built from real fixture files, so darwin and win32 logic runs on Linux.

A `FixtureHost` maps the paths of the OS it pretends to be onto a folder: `/Applications/X.app`
becomes `<root>/Applications/X.app`, `C:\\Program Files\\X` becomes `<root>/C/Program Files/X`.
Files in it are real (plists written with plistlib, dpkg status files, snap.yaml, metainfo XML);
only what cannot exist on Linux, the registry and PE version resources, are tables.
"""

from __future__ import annotations

import plistlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.apps.host import UninstallEntry


@dataclass
class FixtureHost:
    os_name: str
    root: Path
    environ: dict[str, str] = field(default_factory=dict)
    home_dir: str = "/home/user"
    path_dirs: list[str] = field(default_factory=list)
    registry: list[UninstallEntry] = field(default_factory=list)
    pe_versions: dict[str, str] = field(default_factory=dict)
    alive: set[int] = field(default_factory=set)
    running: set[str] = field(default_factory=set)
    session: bool = True

    def real(self, path: str) -> Path:
        if self.os_name == "win32":
            match = re.match(r"^([A-Za-z]):[\\/]?(.*)$", path)
            if not match:
                return self.root / "__not_rooted__"
            parts = [p for p in re.split(r"[\\/]", match.group(2)) if p]
            return self.root.joinpath(match.group(1).upper(), *parts)
        return self.root.joinpath(*[p for p in path.split("/") if p])

    # -- building fixtures -------------------------------------------------------------------

    def make_file(self, path: str, text: str = "", *, executable: bool = True) -> Path:
        real = self.real(path)
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text(text)
        if executable:
            real.chmod(0o755)
        return real

    def make_bundle(self, path: str, info: dict[str, Any]) -> None:
        contents = self.real(path) / "Contents"
        contents.mkdir(parents=True, exist_ok=True)
        with (contents / "Info.plist").open("wb") as handle:
            plistlib.dump(info, handle)

    # -- the Host interface ------------------------------------------------------------------

    def env(self, name: str) -> str | None:
        return self.environ.get(name)

    def home(self) -> str:
        return self.home_dir

    def is_file(self, path: str) -> bool:
        return self.real(path).is_file()

    def is_executable(self, path: str) -> bool:
        real = self.real(path)
        if not real.is_file():
            return False
        if self.os_name == "win32":
            return path.lower().endswith(".exe")
        return bool(real.stat().st_mode & 0o111)

    def is_dir(self, path: str) -> bool:
        return self.real(path).is_dir()

    def list_dir(self, path: str) -> list[str]:
        real = self.real(path)
        return sorted(p.name for p in real.iterdir()) if real.is_dir() else []

    def read_text(self, path: str) -> str | None:
        real = self.real(path)
        return real.read_text() if real.is_file() else None

    def read_plist(self, path: str) -> dict[str, Any] | None:
        real = self.real(path)
        if not real.is_file():
            return None
        with real.open("rb") as handle:
            data = plistlib.load(handle)
        return data if isinstance(data, dict) else None

    def which(self, name: str) -> str | None:
        sep = "\\" if self.os_name == "win32" else "/"
        for folder in self.path_dirs:
            candidate = f"{folder}{sep}{name}"
            if self.is_file(candidate):
                return candidate
        return None

    def uninstall_entries(self) -> list[UninstallEntry]:
        return list(self.registry)

    def pe_file_version(self, path: str) -> str | None:
        return self.pe_versions.get(path) if self.is_file(path) else None

    def rpm_version(self, package: str) -> str | None:
        return None

    def pid_alive(self, pid: int) -> bool:
        return pid in self.alive

    def process_running(self, path: str) -> bool:
        return path in self.running

    def interactive_session(self) -> bool:
        return self.session
