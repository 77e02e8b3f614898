"""Whether a sandbox can be built here, and how a server's would look (for `hermes mcp get`).

bubblewrap is checked once per process (a few milliseconds): where it is missing or user
namespaces are restricted, the reason is one sentence with the fix.
"""

from __future__ import annotations

import functools
import os
import stat
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from hermes.config.resolve import ResolvedServer
from hermes.config.sandbox import SandboxMode, SandboxSettings
from hermes.mcp.children import SYSTEM_PROGRAM_FOLDERS
from hermes.mcp.sandbox import launcher_cache, plan, tilde

_PREFLIGHT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Support:
    """Whether bubblewrap can build a sandbox here; when not, why, in one sentence."""

    available: bool
    bwrap: str | None = None
    problem: str = ""
    binds_by_fd: bool = False  # `--bind-fd` (bubblewrap 0.7 and later): see `sandbox_hold`


# Never PATH: a relative or user-writable entry (`node_modules/.bin`) would let a repository's own
# `bwrap` be "the sandbox".
TRUSTED_FOLDERS = SYSTEM_PROGRAM_FOLDERS
BWRAP_VARIABLE = "HERMES_BWRAP"  # an absolute path the user chose, for a bubblewrap installed elsewhere


def _untampered(path: str, owners: tuple[int, ...]) -> bool:
    """A file, and the folder it is in, owned by one of `owners` and writable by nobody else."""
    try:
        checked = [os.stat(path), os.stat(os.path.dirname(path))]
    except OSError:
        return False
    return stat.S_ISREG(checked[0].st_mode) and all(
        info.st_uid in owners and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) for info in checked)


def find_bwrap(chosen: str | None) -> tuple[str | None, str]:
    """bubblewrap by absolute path: the user's `HERMES_BWRAP`, else the system's; (path, why not)."""
    if chosen:
        if not os.path.isabs(chosen):
            return None, f"{BWRAP_VARIABLE} must be an absolute path (got {chosen!r})"
        real = os.path.realpath(chosen)
        if not os.path.exists(real):
            return None, f"{BWRAP_VARIABLE} names {chosen}, which is not there"
        if not _untampered(real, (0, os.getuid())):
            return None, f"{BWRAP_VARIABLE} ({chosen}) is not a file only you or root can change"
        return real, ""
    for folder in TRUSTED_FOLDERS:
        real = os.path.realpath(os.path.join(folder, "bwrap"))
        if os.path.exists(real) and _untampered(real, (0,)):
            return real, ""
    return None, "bubblewrap (bwrap) is not installed; install the 'bubblewrap' package"


@functools.cache
def _support(chosen: str | None) -> Support:
    if not sys.platform.startswith("linux"):
        return Support(False, problem="the sandbox needs Linux (bubblewrap)")
    bwrap, problem = find_bwrap(chosen)
    if bwrap is None:
        return Support(False, problem=problem)
    probe = [bwrap, "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--unshare-net", "--unshare-pid",
             "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        result = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                                timeout=_PREFLIGHT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Support(False, bwrap, f"bubblewrap could not be run ({exc})")
    if result.returncode != 0:
        said = next((line for line in result.stderr.splitlines() if line.strip()), f"exit code {result.returncode}")
        hint = " (user namespaces are restricted here: on Ubuntu, allow them for bwrap with an AppArmor profile " \
               "or sysctl kernel.apparmor_restrict_unprivileged_userns=0)" if "ermission denied" in said else ""
        return Support(False, bwrap, f"bubblewrap cannot create a sandbox here: {said.strip()}{hint}")
    try:
        usage = subprocess.run([bwrap, "--help"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               errors="replace", timeout=_PREFLIGHT_TIMEOUT, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        usage = ""
    return Support(True, bwrap, binds_by_fd="--ro-bind-fd" in usage)


def support(environ: Mapping[str, str] | None = None) -> Support:
    """Whether the sandbox works on this machine (checked once per process; a few milliseconds)."""
    return _support((environ if environ is not None else os.environ).get(BWRAP_VARIABLE) or None)


def sandboxed(mode: SandboxMode, settings: SandboxSettings) -> bool:
    """Whether this server is meant to run in the sandbox (before asking whether the machine can)."""
    return mode is not SandboxMode.OFF and settings.enabled and sys.platform.startswith("linux")


def describe(server: ResolvedServer, mode: SandboxMode, environ: Mapping[str, str], hermes_home: str,
             cwd: str) -> dict[str, object]:
    """The sandbox a start of `server` would get now, for `hermes mcp get` (no process is started)."""
    from hermes.mcp.children import resolve_command
    from hermes.security.environment import child_environment

    settings = server.config.sandbox
    if not sandboxed(mode, settings):
        why = "mcp.sandbox: off" if mode is SandboxMode.OFF else \
            "sandbox: off in its entry" if not settings.enabled else "no sandbox on this system"
        return {"state": f"off ({why})"}
    found = support(environ)
    if not found.available:
        if mode is SandboxMode.REQUIRED:
            return {"state": f"refused: it must run sandboxed (mcp.sandbox: required), but {found.problem}"}
        return {"state": f"unavailable: {found.problem}; the server runs with your full rights"}
    env = child_environment(environ, server.env)
    work = server.cwd or cwd
    try:
        program = resolve_command(server.command or "", env.get("PATH"), work)
    except FileNotFoundError:
        return {"state": f"on (network {settings.effective_network.value}); its command is not installed"}
    sandbox = plan(program, server.args, env=env, cwd=work, configured_cwd=server.cwd is not None,
                   roots=server.config.roots or (), settings=settings, hermes_home=hermes_home,
                   cache=launcher_cache(hermes_home, server.name, settings))
    return {"state": "on", "network": sandbox.network.value, "ports": list(sandbox.ports),
            "writes": [tilde(p, sandbox.home) for p in sandbox.writable],
            "reads": [tilde(p, sandbox.home) for p in sandbox.readable],
            "hidden": [tilde(p, sandbox.home) for p in sandbox.hidden]}
