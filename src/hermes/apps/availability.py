"""Is a declared server's app here, in a good enough version? Never a bare boolean.

For the host OS: no app requirement -> `no_requirements` (no I/O at all); no block for this OS ->
`unsupported_os`; not found -> `missing_app` (with the first path tried); found but every copy
older than `min_version` -> `version_too_old` (with the version found); else `available`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes.apps.declaration import ServerDeclaration
from hermes.apps.host import Host
from hermes.apps.locate import locate, read_version
from hermes.apps.states import USABLE, AppState
from hermes.apps.versions import at_least


@dataclass(frozen=True)
class Availability:
    state: AppState
    os_name: str
    version: str | None = None
    path: str | None = None
    version_enforced: bool = True

    @property
    def ok(self) -> bool:
        return self.state in USABLE

    def describe(self) -> str:
        """`missing_app, path /usr/bin/blender` / `available, version 5.1.0, path …`."""
        parts = [self.state.value]
        if self.version:
            parts.append(f"version {self.version}")
        if self.path:
            parts.append(f"path {self.path}")
        return ", ".join(parts)


def check_availability(declaration: ServerDeclaration, host: Host) -> Availability:
    os_name = host.os_name
    if not declaration.requires.app:
        return Availability(AppState.NO_REQUIREMENTS, os_name)
    block = declaration.app.blocks.get(os_name) if declaration.app else None
    if block is None:
        return Availability(AppState.UNSUPPORTED_OS, os_name)
    installed, first_tried = locate(host, block)
    if not installed:
        return Availability(AppState.MISSING_APP, os_name, path=first_tried)
    minimum = declaration.requires.min_version
    enforced = declaration.version_enforced_on(os_name)
    if minimum is None or not enforced:
        found = installed[0]
        return Availability(AppState.AVAILABLE, os_name, read_version(host, block.version, found), found.path,
                            version_enforced=enforced or minimum is None)
    first_version: str | None = None
    for found in installed:
        version = read_version(host, block.version, found)
        if first_version is None:
            first_version = version
        if at_least(version, minimum):
            return Availability(AppState.AVAILABLE, os_name, version, found.path)
    return Availability(AppState.VERSION_TOO_OLD, os_name, first_version or "unknown", installed[0].path)
