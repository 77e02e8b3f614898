"""Installing a plugin as one transaction: nothing that cannot work, nothing half installed.

    resolve the source -> (catalog: check platforms before anything is cloned or written)
    -> stage: clone into plugins/.staging-<id> and check out the exact commit (or copy a folder)
    -> validate plugin.json and mcp.json strictly -> app gate on the staged copy
    -> write the provenance record -> swap into place -> remove what it replaced

The swap moves an installed plugin aside (`.old-<name>-<id>`) before the new one takes its name,
so an interruption at any point leaves either the old plugin or the new one. `recover()` finishes
the job on the next run: staging folders are deleted, and a plugin set aside is put back unless
its replacement made it into place. Every step holds the plugins folder's lock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import secrets
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.apps.availability import check_availability
from hermes.apps.host import Host
from hermes.apps.states import REFUSED_AT_INSTALL, AppState
from hermes.errors import HermesError
from hermes.files import atomic_write, private_dir, private_umask, read_json_object
from hermes.home import Home
from hermes.plugins import git
from hermes.plugins.catalog import CatalogEntry, load_catalog
from hermes.plugins.manifest import Plugin, load_plugin

PROVENANCE = ".hermes-install.json"
_STAGING = ".staging-"
_ASIDE = ".old-"
_GITHUB_SHORTHAND = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
# Fault injection for the interruption tests: the install SIGKILLs itself right after this step.
_FAULT_ENV = "HERMES_TEST_KILL_AFTER_STEP"


class PluginInstallError(HermesError):
    pass


@dataclass(frozen=True)
class Source:
    kind: str  # "catalog" | "git" | "folder"
    location: str  # a git URL or a folder path
    ref: str | None
    entry: CatalogEntry | None = None

    def describe(self) -> str:
        if self.entry is not None:
            return f"catalog entry '{self.entry.name}' ({self.entry.repo} @ {self.entry.sha[:12]})"
        return self.location + (f" @ {self.ref}" if self.ref else "")


@dataclass(frozen=True)
class InstallResult:
    name: str
    version: str | None
    commit: str | None
    replaced: bool
    path: Path
    warnings: tuple[str, ...] = ()


def _checkpoint(step: str) -> None:
    if os.environ.get(_FAULT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def plugins_lock(home: Home, *, timeout: float = 600) -> Iterator[None]:
    from filelock import FileLock

    home.ensure()
    private_dir(home.plugins)
    with FileLock(str(home.plugins / ".lock"), timeout=timeout, mode=0o600):
        yield


def recover(home: Home) -> list[str]:
    """Undo what an interrupted install left; returns what was done. Caller holds the lock."""
    done: list[str] = []
    if not home.plugins.is_dir():
        return done
    for staging in home.plugins.glob(f"{_STAGING}*"):
        shutil.rmtree(staging, ignore_errors=True)
        done.append(f"removed {staging.name}")
    for aside in home.plugins.glob(f"{_ASIDE}*"):
        name = aside.name[len(_ASIDE):].rsplit("-", 1)[0]
        target = home.plugins / name
        if target.exists():
            shutil.rmtree(aside, ignore_errors=True)
            done.append(f"removed {aside.name}")
        else:
            os.rename(aside, target)
            done.append(f"restored {name}")
    return done


def recover_if_idle(home: Home) -> None:
    """Recovery for readers: only when leftovers exist and no install holds the lock right now."""
    if not home.plugins.is_dir():
        return
    if not any(home.plugins.glob(f"{_STAGING}*")) and not any(home.plugins.glob(f"{_ASIDE}*")):
        return
    from filelock import Timeout

    with contextlib.suppress(Timeout), plugins_lock(home, timeout=0):
        recover(home)


def resolve_source(home: Home, spec: str, ref: str | None) -> Source:
    catalog = load_catalog(home)
    if spec in catalog:
        if ref is not None:
            raise PluginInstallError(f"'{spec}' is a catalog entry pinned to {catalog[spec].sha[:12]}; --ref is "
                                     f"for repositories and folders.")
        return Source("catalog", catalog[spec].repo, catalog[spec].sha, catalog[spec])
    folder = Path(spec).expanduser()
    if folder.is_dir():
        if (folder / ".git").exists():
            return Source("git", str(folder.resolve()), ref)
        if ref is not None:
            raise PluginInstallError(f"{folder} is a plain folder, not a git repository; --ref needs a repository.")
        return Source("folder", str(folder.resolve()), None)
    if _GITHUB_SHORTHAND.match(spec):
        pinned = next((e for e in catalog.values() if e.repo.lower() == spec.lower()), None)
        if pinned is not None and ref is None:
            return Source("catalog", pinned.repo, pinned.sha, pinned)
        return Source("git", f"https://github.com/{spec}.git", ref)
    if "://" in spec or spec.startswith("git@") or spec.endswith(".git"):
        return Source("git", spec, ref)
    raise PluginInstallError(f"'{spec}' is not a catalog entry, an owner/repo, a git URL or a folder.")


def _git_url(source: Source) -> str:
    location = source.location
    if source.kind == "catalog" and _GITHUB_SHORTHAND.match(location):
        return f"https://github.com/{location}.git"
    return location


def _links_leaving(root: Path) -> list[str]:
    """Symbolic links in the staged plugin that point outside it (or nowhere), as relative paths."""
    inside = root.resolve()
    leaving = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            if not path.is_symlink():
                continue
            target = Path(os.path.realpath(path))
            if target != inside and inside not in target.parents:
                leaving.append(str(path.relative_to(root)))
    return sorted(leaving)


def _stage(source: Source, staging: Path) -> str | None:
    with private_umask():  # the plugin's files are the user's own: 0600, 0700 where executable
        commit = _fetch(source, staging)
    leaving = _links_leaving(staging)
    if leaving:
        raise PluginInstallError(f"The plugin has symbolic links that point outside its repository, which hermes "
                                 f"does not follow: {', '.join(leaving[:5])}.")
    return commit


def _fetch(source: Source, staging: Path) -> str | None:
    if source.kind == "folder":
        shutil.copytree(source.location, staging, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        _checkpoint("copy")
        return None
    git.clone(_git_url(source), staging)
    _checkpoint("clone")
    ref = source.ref or "HEAD"
    try:
        commit = git.checkout(staging, ref)
    except git.GitError:
        raise PluginInstallError(f"'{ref}' is not a commit, branch or tag of {source.location}.") from None
    if source.entry is not None and commit != source.entry.sha:
        raise PluginInstallError(f"The catalog pins {source.entry.sha}, but the repository gave {commit}.")
    _checkpoint("checkout")
    shutil.rmtree(staging / ".git")
    return commit


def gate_refusals(plugin: Plugin, host: Host) -> list[str]:
    """SPEC 5.3: refuse on missing_app, version_too_old, unsupported_os; one sentence each."""
    refusals = []
    for server, declaration in sorted(plugin.declarations.items()):
        availability = check_availability(declaration, host)
        if availability.state not in REFUSED_AT_INSTALL:
            continue
        detail = ""
        if availability.state is AppState.VERSION_TOO_OLD:
            detail = f", found version {availability.version}"
        elif availability.state is AppState.MISSING_APP and availability.path:
            detail = f", path {availability.path}"
        refusals.append(f"Plugin '{plugin.name}' server '{server}' is unavailable: {availability.state.value}{detail}.")
    return refusals


def _provenance(source: Source, commit: str | None, plugin: Plugin) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": plugin.name,
        "version": plugin.manifest.version,
        "source": source.kind,
        "location": source.location,
        "ref": source.ref,
        "commit": commit,
        "installed_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    if source.entry is not None:
        record["catalog"] = {"name": source.entry.name, "sha": source.entry.sha, "version": source.entry.version,
                             "file": source.entry.source}
        if source.entry.approval:
            record["approval"] = {server: {"ask": list(names)} for server, names in source.entry.approval.items()}
    return record


def read_provenance(plugin_dir: Path) -> dict[str, Any] | None:
    return read_json_object(plugin_dir / PROVENANCE, 64 * 1024)


def _swap(staging: Path, target: Path) -> bool:
    if not target.exists():
        os.rename(staging, target)
        _checkpoint("swap-in")
        return False
    aside = target.with_name(f"{_ASIDE}{target.name}-{secrets.token_hex(4)}")
    os.rename(target, aside)
    try:
        _checkpoint("swap-aside")
        os.rename(staging, target)
    except BaseException:
        if not target.exists():
            os.rename(aside, target)  # the old plugin goes back before anyone sees it missing
        raise
    try:
        _checkpoint("swap-in")
    finally:
        shutil.rmtree(aside, ignore_errors=True)  # the new plugin is in place: the old one is done
    return True


def install(home: Home, spec: str, *, ref: str | None = None, host: Host) -> InstallResult:
    source = resolve_source(home, spec, ref)
    if source.entry is not None:
        refusal = source.entry.refusal(host.os_name)
        if refusal is not None:  # before any git process or any write
            raise PluginInstallError(refusal)
    with plugins_lock(home):
        recover(home)
        staging = home.plugins / f"{_STAGING}{secrets.token_hex(6)}"
        try:
            commit = _stage(source, staging)
            plugin = load_plugin(staging, home.plugin_data)
            if source.entry is not None and plugin.name != source.entry.name:
                raise PluginInstallError(f"The catalog entry '{source.entry.name}' points at a plugin named "
                                         f"'{plugin.name}'.")
            _checkpoint("validate")
            refusals = gate_refusals(plugin, host)
            if refusals:
                raise PluginInstallError(" ".join(refusals))
            _checkpoint("gate")
            atomic_write(staging / PROVENANCE, json.dumps(_provenance(source, commit, plugin), indent=2) + "\n")
            _checkpoint("provenance")
            target = home.plugins / plugin.name
            replaced = _swap(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return InstallResult(plugin.name, plugin.manifest.version, commit, replaced, target,
                         _catalog_disagreements(source.entry, plugin))


def _catalog_disagreements(entry: CatalogEntry | None, plugin: Plugin) -> tuple[str, ...]:
    """Where a catalog entry describes its pinned plugin.json wrongly; hermes goes by the plugin.json."""
    if entry is None:
        return ()
    found = []
    if entry.version != plugin.manifest.version:
        found.append(f"The catalog lists '{entry.name}' as version {entry.version}, but its plugin.json at the pinned "
                     f"commit says {plugin.manifest.version or 'no version'}; hermes goes by the plugin.json.")
    if entry.title is not None and entry.title != plugin.manifest.title:
        found.append(f"The catalog titles '{entry.name}' {entry.title!r}, but its plugin.json says "
                     f"{plugin.manifest.title or 'no title'}; hermes shows {plugin.app_name!r}.")
    return tuple(found)


def remove_installed(home: Home, name: str) -> bool:
    """Delete an installed plugin's folder (atomically out of sight first) and its data folder."""
    with plugins_lock(home):
        recover(home)
        target = home.plugins / name
        if not target.is_dir():
            return False
        aside = target.with_name(f"{_STAGING}removed-{secrets.token_hex(4)}")
        os.rename(target, aside)
        shutil.rmtree(aside, ignore_errors=True)
        shutil.rmtree(home.plugin_data / name, ignore_errors=True)
        return True
