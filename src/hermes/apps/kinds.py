"""The vocabularies of an app declaration's `location` and `version` objects: each kind, the OS it
belongs to, and the fields it takes (SPEC 5.1)."""

from __future__ import annotations

from enum import StrEnum


class CandidateKind(StrEnum):
    """Where an app may be found: a path, or a lookup of some kind."""

    PATH = "path"  # written as a plain string in the declaration
    COMMAND = "command"
    APP_BUNDLE = "app_bundle"
    FLATPAK = "flatpak"
    SNAP = "snap"
    UNINSTALL_REGISTRY = "uninstall_registry"


class VersionKind(StrEnum):
    """Where an app's installed version is read from."""

    NONE = "none"
    PLIST = "plist"
    UNINSTALL_REGISTRY = "uninstall_registry"
    PE_RESOURCE = "pe_resource"
    DPKG = "dpkg"
    RPM = "rpm"
    SNAP = "snap"
    FLATPAK = "flatpak"


# Which OS each location kind and version kind belongs to (None: any OS); a path takes no object form.
CANDIDATE_OS: dict[CandidateKind, str | None] = {
    CandidateKind.COMMAND: None, CandidateKind.APP_BUNDLE: "darwin", CandidateKind.FLATPAK: "linux",
    CandidateKind.SNAP: "linux", CandidateKind.UNINSTALL_REGISTRY: "win32"}
CANDIDATE_FIELDS: dict[CandidateKind, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # kind: (required fields, optional fields)
    CandidateKind.COMMAND: (("name",), ()), CandidateKind.APP_BUNDLE: (("name",), ()),
    CandidateKind.FLATPAK: (("app_id",), ()), CandidateKind.SNAP: (("name",), ()),
    CandidateKind.UNINSTALL_REGISTRY: (("display_name_prefix", "file"), ()),
}
VERSION_OS: dict[VersionKind, str | None] = {
    VersionKind.PLIST: "darwin", VersionKind.UNINSTALL_REGISTRY: "win32", VersionKind.PE_RESOURCE: "win32",
    VersionKind.NONE: None, VersionKind.DPKG: "linux", VersionKind.RPM: "linux", VersionKind.SNAP: "linux",
    VersionKind.FLATPAK: "linux"}
VERSION_FIELDS: dict[VersionKind, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # kind: (required fields, optional fields)
    VersionKind.PLIST: ((), ()), VersionKind.PE_RESOURCE: ((), ()), VersionKind.NONE: ((), ()),
    VersionKind.UNINSTALL_REGISTRY: (("display_name_prefix",), ()),
    VersionKind.DPKG: (("package",), ()), VersionKind.RPM: (("package",), ()),
    VersionKind.SNAP: ((), ("name",)), VersionKind.FLATPAK: ((), ("app_id",)),
}
