"""Trust records for project folders: what a folder's `.hermes/` may bring into a session.

A project's `.hermes/` (project-local skills, a project config) comes with the code someone checked
out, so hermes uses it only after the user trusts that folder once. The record keeps the folder's
path and a digest of what was trusted; when any of it changes, the folder is untrusted again and
the user is asked again. Records live in `HERMES_HOME/trusted-projects.json` (0600).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from hermes.files import UnreadableFile, atomic_write, file_lock, read_bounded, read_json_object
from hermes.home import Home

MAX_TRUSTED_BYTES = 16 * 1024 * 1024  # a .hermes folder bigger than this is refused, not hashed for minutes
MAX_TRUSTED_FILES = 512
_RECORDS_LIMIT = 4 * 1024 * 1024


class TooMuchToTrust(UnreadableFile):
    pass


def project_files(folder: Path) -> list[Path]:
    """The files of `folder/.hermes/` a trust decision covers: its config and its skills (not symlinks)."""
    dot = folder / ".hermes"
    found: list[Path] = []
    config = dot / "config.yaml"
    if config.is_file() and not config.is_symlink():
        found.append(config)
    skills = dot / "skills"
    if skills.is_dir() and not skills.is_symlink():
        for path in sorted(skills.rglob("*")):
            if len(found) > MAX_TRUSTED_FILES:
                raise TooMuchToTrust(skills, f"it holds more than {MAX_TRUSTED_FILES} files")
            if path.is_file() and not path.is_symlink():
                found.append(path)
    return found


def digest(folder: Path) -> str:
    """SHA-256 over the names and contents of the project's `.hermes` files."""
    total = 0
    hasher = hashlib.sha256()
    for path in project_files(folder):
        data = read_bounded(path, MAX_TRUSTED_BYTES - total, follow_symlinks=False)
        total += len(data)
        name = path.relative_to(folder).as_posix().encode()
        hasher.update(len(name).to_bytes(4, "big") + name + len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


@dataclass(frozen=True)
class TrustState:
    folder: Path
    trusted: bool
    why_not: str | None  # "never trusted", "changed since it was trusted"


class TrustStore:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.path = home.root / "trusted-projects.json"

    def _records(self) -> dict[str, str]:
        # No records (or a damaged file): nothing is trusted, so everything asks again.
        records = (read_json_object(self.path, _RECORDS_LIMIT) or {}).get("projects")
        return {k: v for k, v in records.items() if isinstance(k, str) and isinstance(v, str)} \
            if isinstance(records, dict) else {}

    def state(self, folder: Path) -> TrustState:
        folder = folder.resolve()
        recorded = self._records().get(str(folder))
        if recorded is None:
            return TrustState(folder, False, "this folder has never been trusted")
        try:
            current = digest(folder)
        except OSError as exc:
            return TrustState(folder, False, f"its .hermes folder cannot be read ({exc})")
        if current != recorded:
            return TrustState(folder, False, "its .hermes folder changed since it was trusted")
        return TrustState(folder, True, None)

    def trust_project(self, folder: Path) -> Path:
        """`trust` for a folder the user named: refused (with the rule) when there is nothing to trust."""
        from hermes.errors import UsageError

        target = folder.resolve()
        if not (target / ".hermes").is_dir():
            raise UsageError(f"{target} has no .hermes folder: nothing to trust.")
        try:
            self.trust(target)
        except OSError as exc:
            raise UsageError(f"{target}/.hermes cannot be trusted: {exc}") from None
        return target

    def trust(self, folder: Path) -> str:
        """Record `folder` (its current content) as trusted; returns the digest."""
        folder = folder.resolve()
        value = digest(folder)
        self.home.ensure()
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            records = self._records()
            records[str(folder)] = value
            atomic_write(self.path, json.dumps({"projects": records}, indent=2, sort_keys=True) + "\n")
        return value
