"""Finding installed copies of an app and reading their versions, through a `Host`.

Locations are tried in declaration order; a `*` segment expands to every match, highest version
first. Version sources never execute the app: they read plists, the Uninstall registry, PE
resources, or (on Linux) package metadata: the dpkg status database, a snap's `meta/snap.yaml`,
a flatpak's AppStream metainfo, or the rpm database.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from fnmatch import fnmatchcase

from hermes.apps.declaration import AppBlock, Candidate, VersionSource
from hermes.apps.host import Host
from hermes.apps.kinds import CandidateKind, VersionKind
from hermes.apps.versions import debian_upstream, sort_key

_ENV_REFERENCE = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)%|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
MAX_MATCHES = 64
GLOB_SECONDS = 0.5
_FLATPAK_ROOTS = ("/var/lib/flatpak/app", "~/.local/share/flatpak/app")


@dataclass(frozen=True)
class Found:
    """One installed copy: where it is, and what the lookup learned on the way."""

    path: str
    registry_version: str | None = None
    snap: str | None = None
    flatpak: str | None = None


def _separator(host: Host) -> str:
    return "\\" if host.os_name == "win32" else "/"


def join(host: Host, base: str, *parts: str) -> str:
    sep = _separator(host)
    text = base.rstrip("\\/")
    for part in parts:
        text += sep + part.strip("\\/")
    return text


def unset_variables(host: Host, text: str) -> list[str]:
    """The `%VAR%` / `$VAR` / `${VAR}` names in `text` that are not set on this host."""
    names = [m.group(1) or m.group(2) or m.group(3) for m in _ENV_REFERENCE.finditer(text)]
    return [name for name in dict.fromkeys(names) if host.env(name) is None]


def expand(host: Host, text: str) -> str | None:
    """`~`, `%VAR%`, `$VAR` and `${VAR}`; None if a variable is not set (never a literal guess)."""
    if unset_variables(host, text):
        return None
    if text.startswith("~"):
        text = host.home() + text[1:]
    return _ENV_REFERENCE.sub(lambda m: host.env(m.group(1) or m.group(2) or m.group(3)) or "", text)


def _glob(host: Host, pattern: str) -> list[str]:
    """Expand `*` within single segments, highest version first at each level.

    Bounded: at most MAX_MATCHES paths are kept at any level (the highest versions) and the walk
    stops after GLOB_SECONDS, so no folder layout can make a lookup slow or large.
    """
    parts = re.split(r"[\\/]", pattern)
    sep = _separator(host)
    deadline = time.monotonic() + GLOB_SECONDS
    results = [parts[0] if parts[0] else ""]
    for part in parts[1:]:
        nxt: list[str] = []
        for base in results:
            if "*" in part:
                if time.monotonic() > deadline:
                    break
                names = [n for n in host.list_dir(base or sep) if fnmatchcase(n, part)]
                names.sort(key=lambda n: (sort_key(n), n), reverse=True)
                nxt.extend(f"{base}{sep}{n}" for n in names[:MAX_MATCHES])
            else:
                nxt.append(f"{base}{sep}{part}")
        results = nxt[:MAX_MATCHES]
    return results


def _present(host: Host, block: AppBlock, path: str) -> bool:
    if block.presence == "bundle":
        return host.is_dir(path) and host.is_file(join(host, path, "Contents", "Info.plist"))
    return host.is_executable(path)


def candidate_paths(host: Host, block: AppBlock, candidate: Candidate) -> list[Found]:
    """Every path this candidate points at, existing or not (the first one names a miss)."""
    if candidate.kind is CandidateKind.PATH:
        expanded = expand(host, candidate.path or "")
        if expanded is None:
            return []
        return [Found(p) for p in (_glob(host, expanded) if "*" in expanded else [expanded])]
    if candidate.kind is CandidateKind.COMMAND:
        found = host.which(candidate.name or "")
        return [Found(found)] if found else []
    if candidate.kind is CandidateKind.APP_BUNDLE:
        name = candidate.name or ""
        bundle = name if name.endswith(".app") else f"{name}.app"
        return [Found(f"/Applications/{bundle}"), Found(join(host, host.home(), "Applications", bundle))]
    if candidate.kind is CandidateKind.FLATPAK:
        app_id = candidate.app_id or ""
        return [Found(join(host, expand(host, root) or root, app_id, "current", "active"), flatpak=app_id)
                for root in _FLATPAK_ROOTS]
    if candidate.kind is CandidateKind.SNAP:
        name = candidate.name or ""
        return [Found(f"/snap/{name}/current", snap=name)]
    if candidate.kind is CandidateKind.UNINSTALL_REGISTRY:
        prefix = candidate.display_name_prefix or ""
        return [Found(join(host, entry.install_location, candidate.file or ""), registry_version=entry.display_version)
                for entry in host.uninstall_entries()
                if entry.display_name.startswith(prefix) and entry.install_location]
    return []


def _exists(host: Host, block: AppBlock, found: Found) -> bool:
    # Package-managed installs are folders whatever `presence` says about the app itself.
    if found.snap or found.flatpak:
        return host.is_dir(found.path)
    return _present(host, block, found.path)


def locate(host: Host, block: AppBlock) -> tuple[list[Found], str | None]:
    """Installed copies in candidate order, and the first path tried (for a `missing_app` message)."""
    installed: list[Found] = []
    first_tried: str | None = None
    for candidate in block.candidates:
        paths = candidate_paths(host, block, candidate)
        if first_tried is None:
            first_tried = paths[0].path if paths else candidate.describe()
        installed.extend(f for f in paths if _exists(host, block, f) and f not in installed)
    return installed, first_tried


def _plist_version(host: Host, path: str) -> str | None:
    data = host.read_plist(join(host, path, "Contents", "Info.plist"))
    if data is None:
        return None
    for key in ("CFBundleShortVersionString", "CFBundleVersion"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _registry_version(host: Host, prefix: str) -> str | None:
    for entry in host.uninstall_entries():
        if entry.display_name.startswith(prefix):
            return entry.display_version
    return None


def dpkg_version(host: Host, package: str) -> str | None:
    status = host.read_text("/var/lib/dpkg/status")
    if status is None:
        return None
    for stanza in status.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            key, sep, value = line.partition(":")
            if sep and not line.startswith((" ", "\t")):
                fields[key.strip()] = value.strip()
        if fields.get("Package") == package and fields.get("Status", "").endswith(" installed"):
            version = fields.get("Version")
            return debian_upstream(version) if version else None
    return None


def snap_version(host: Host, name: str) -> str | None:
    meta = host.read_text(f"/snap/{name}/current/meta/snap.yaml")
    if meta is None:
        return None
    for line in meta.splitlines():
        key, sep, value = line.partition(":")
        if sep and key == "version":
            return value.strip().strip("'\"") or None
    return None


def flatpak_version(host: Host, app_dir: str, app_id: str) -> str | None:
    """The newest `<release version=...>` of the app's AppStream metainfo (releases come newest first)."""
    for folder, suffix in (("metainfo", "metainfo.xml"), ("metainfo", "appdata.xml"), ("appdata", "appdata.xml")):
        text = host.read_text(join(host, app_dir, "files", "share", folder, f"{app_id}.{suffix}"))
        if text is None:
            continue
        try:
            root = ElementTree.fromstring(text)
        except ElementTree.ParseError:
            return None
        release = root.find("./releases/release")
        version = release.get("version") if release is not None else None
        return version or None
    return None


def _flatpak_dir(host: Host, app_id: str) -> str | None:
    for root in _FLATPAK_ROOTS:
        folder = join(host, expand(host, root) or root, app_id, "current", "active")
        if host.is_dir(folder):
            return folder
    return None


def read_version(host: Host, source: VersionSource, found: Found) -> str | None:
    kind = source.kind
    if kind is VersionKind.PLIST:
        return _plist_version(host, found.path)
    if kind is VersionKind.UNINSTALL_REGISTRY:
        return _registry_version(host, source.display_name_prefix or "")
    if kind is VersionKind.PE_RESOURCE:
        return host.pe_file_version(found.path)
    if kind is VersionKind.DPKG:
        return dpkg_version(host, source.package or "")
    if kind is VersionKind.RPM:
        return host.rpm_version(source.package or "")
    if kind is VersionKind.SNAP:
        name = source.name or found.snap
        return snap_version(host, name) if name else None
    if kind is VersionKind.FLATPAK:
        app_id = source.app_id or found.flatpak
        if not app_id:
            return None
        folder = found.path if found.flatpak == app_id else _flatpak_dir(host, app_id)
        return flatpak_version(host, folder, app_id) if folder else None
    return None
