"""Trust records for project folders: what a folder's `.hermes/` may bring into a session.

A project's `.hermes/` (project-local skills, a project config) comes with the code someone checked
out, so hermes uses it only after the user trusts that folder once. The record keeps the folder's
path and a digest of what was trusted; when any of it changes, the folder is untrusted again and
the user is asked again. Records live in `HERMES_HOME/trusted-projects.json` (0600).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from hermes.config.yamltext import read_yaml_text
from hermes.files import UnreadableFile, atomic_write, file_lock, read_bounded, read_json_object
from hermes.home import Home

MAX_TRUSTED_BYTES = 16 * 1024 * 1024  # a .hermes folder bigger than this is refused, not hashed for minutes
MAX_TRUSTED_FILES = 512
_RECORDS_LIMIT = 4 * 1024 * 1024


class TooMuchToTrust(UnreadableFile):
    pass


CONFIG_NAME = ".hermes/config.yaml"


def project_files(folder: Path) -> list[Path]:
    """Every entry under `folder/.hermes/` a trust decision covers: all its files and links, in
    order (anything there may change what hermes does, and a file added later must count too)."""
    dot = folder / ".hermes"
    if dot.is_symlink() or not dot.is_dir():
        return [dot] if dot.is_symlink() else []
    found: list[Path] = []
    for path in sorted(dot.rglob("*")):  # rglob does not descend into linked folders
        if path.is_symlink() or path.is_file():
            found.append(path)
            if len(found) > MAX_TRUSTED_FILES:
                raise TooMuchToTrust(dot, f"it holds more than {MAX_TRUSTED_FILES} files")
    return found


def digest(folder: Path, config_text: str | None = None) -> str:
    """SHA-256 over the names and contents of everything under the project's `.hermes`.

    A link counts as where it points; the project config counts as the text hermes reads from it,
    through a link too (`config_text`, when the caller has read it already: what is checked is then
    exactly what is used, with no moment between the two for the file to change)."""
    total = 0
    hasher = hashlib.sha256()

    def add(kind: bytes, name: str, data: bytes) -> None:
        encoded = name.encode("utf-8", "surrogateescape")
        hasher.update(kind + len(encoded).to_bytes(4, "big") + encoded + len(data).to_bytes(8, "big") + data)

    for path in project_files(folder):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            add(b"L", name, os.fsencode(os.readlink(path)))
            if name != CONFIG_NAME:
                continue
        if name == CONFIG_NAME:
            text = config_text if config_text is not None else read_yaml_text(path)
            data = text.encode("utf-8", "surrogatepass")
        else:
            data = read_bounded(path, MAX_TRUSTED_BYTES - total, follow_symlinks=False)
        total += len(data)
        add(b"F", name, data)
    return hasher.hexdigest()


@dataclass(frozen=True)
class TrustState:
    folder: Path
    trusted: bool
    why_not: str | None  # "never trusted", "changed since it was trusted"


class TrustKind(StrEnum):
    """What a trust record lets a project folder bring: each is asked and recorded on its own, so
    trusting a folder's skills never starts its servers, nor the other way round."""

    SERVERS = "servers"  # its .hermes/config.yaml servers start (`hermes mcp trust`)
    SKILLS = "skills"  # its .hermes/skills load into chat (`hermes skills trust`, chat's question)
    GRANTS = "grants"  # its servers get what they ask beyond the folder (`hermes mcp trust --grant`)


# The records file keeps each kind under its own key ("projects" holds the servers' records).
_SECTIONS = {TrustKind.SERVERS: "projects", TrustKind.SKILLS: "skills", TrustKind.GRANTS: "grants"}


class TrustStore:
    def __init__(self, home: Home, kind: TrustKind) -> None:
        self.home = home
        self.kind = kind
        self.path = home.root / "trusted-projects.json"

    def _all(self) -> dict[str, dict[str, str]]:
        # No records (or a damaged file): nothing is trusted, so everything asks again.
        data = read_json_object(self.path, _RECORDS_LIMIT) or {}
        sections: dict[str, dict[str, str]] = {}
        for section in _SECTIONS.values():
            records = data.get(section)
            sections[section] = {k: v for k, v in records.items() if isinstance(k, str) and isinstance(v, str)} \
                if isinstance(records, dict) else {}
        return sections

    def _records(self) -> dict[str, str]:
        return self._all()[_SECTIONS[self.kind]]

    def state(self, folder: Path, config_text: str | None = None) -> TrustState:
        """Whether `folder` is trusted as it is now (with its config as `config_text`, when read already)."""
        folder = folder.resolve()
        recorded = self._records().get(str(folder))
        if recorded is None:
            return TrustState(folder, False, "this folder has never been trusted")
        try:
            current = digest(folder, config_text)
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

    def forget(self, folder: Path) -> None:
        """Drop the record of `folder`, if any (a grant the user did not give again)."""
        folder = folder.resolve()
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            sections = self._all()
            if sections[_SECTIONS[self.kind]].pop(str(folder), None) is not None:
                atomic_write(self.path, json.dumps(sections, indent=2, sort_keys=True) + "\n")

    def trust(self, folder: Path) -> str:
        """Record `folder` (its current content) as trusted; returns the digest."""
        folder = folder.resolve()
        value = digest(folder)
        self.home.ensure()
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            sections = self._all()
            sections[_SECTIONS[self.kind]][str(folder)] = value
            atomic_write(self.path, json.dumps(sections, indent=2, sort_keys=True) + "\n")
        return value
