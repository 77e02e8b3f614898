"""The sandbox a stdio server runs in on Linux: bubblewrap, with a plan built from its config.

What the server sees:
- the system read-only (`/` bound read-only), a fresh `/dev` and `/proc`, an empty `/tmp`, `/run`
  and home folder, and no other user's home;
- the program and what it needs to run (its install prefix, the interpreter its `#!` names, the
  folders of `PATH` that sit in a hidden place, a launcher's cache: `~/.npm` for npx, the uv cache
  for uvx), read-only except the caches;
- its working folder and the folders its arguments and `roots:` name, writable; files its arguments
  name and paths its `env:` names, read-only; `sandbox.read` and `sandbox.write` on top;
- never the user's secret stores (`~/.ssh`, `~/.aws`, `~/.gnupg`, cloud and browser profiles,
  `.netrc`, `.npmrc`, …) nor HERMES_HOME (its `.env`, tokens, logs), even inside a shared folder,
  unless the user listed one of them themselves;
- network `all` (the host's), `none` (a private loopback only) or `loopback` (the host loopback
  ports listed in `ports`, relayed by `sandbox_relay`).

Why these bubblewrap flags: `--cap-drop ALL` (a root user could otherwise unmount the hiding
tmpfs), `--unshare-user --disable-userns` (no nested namespaces: kernel attack surface),
`--unshare-pid` (everything the server starts dies with it), `--die-with-parent` (and with
hermes), and no `--new-session`: hermes already starts the server in a session of its own with
pipes on every descriptor (no terminal to inject into), and its SIGTERM to the group must reach
the server.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from hermes.config.resolve import ResolvedServer
from hermes.config.sandbox import Network, SandboxMode, SandboxSettings
from hermes.security.environment import ALLOWED

# Folders under a user's home that hold credentials or browser state: hidden even when the server
# was given the whole home folder.
SECRET_STORES = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".mozilla",
                 ".config/gcloud", ".config/gh", ".config/google-chrome", ".config/chromium",
                 ".config/BraveSoftware", ".config/microsoft-edge", ".local/share/keyrings", ".netrc", ".npmrc",
                 ".pypirc", ".git-credentials", ".config/git/credentials", ".pgpass", ".my.cnf", ".vault-token",
                 ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d", ".config/hub", ".local/share/gh")
# Places whose content the server never sees unless something in them is bound in on purpose.
_EMPTIED = ("/tmp", "/var/tmp", "/run", "/home", "/root")
# System places visible read-only already; never a working folder to bind writable.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/proc", "/sys",
           "/dev", "/opt", "/var/lib", "/var/cache", "/srv", "/snap")
# Name lookups need these when `/run` is emptied and the network is shared.
_RESOLVER_STATE = ("/run/systemd/resolve", "/run/NetworkManager", "/run/resolvconf")
RELAY_DIR = "/run/hermes-relay"
RELAY_SCRIPT = Path(__file__).with_name("relay_inside.py")
_SHEBANG_BYTES = 256
_PREFLIGHT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Support:
    """Whether bubblewrap can build a sandbox here; when not, why, in one sentence."""

    available: bool
    bwrap: str | None = None
    problem: str = ""


@functools.cache
def _support(path: str | None) -> Support:
    if not sys.platform.startswith("linux"):
        return Support(False, problem="the sandbox needs Linux (bubblewrap)")
    bwrap = shutil.which("bwrap", path=path)
    if bwrap is None:
        return Support(False, problem="bubblewrap (bwrap) is not installed; install the 'bubblewrap' package")
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
    return Support(True, bwrap)


def support(path: str | None) -> Support:
    """Whether the sandbox works on this machine (checked once per process; a few milliseconds)."""
    return _support(path)


@dataclass(frozen=True)
class Plan:
    """Everything the sandbox of one server start is: shown by `mcp get`, used to name denials."""

    network: Network
    ports: tuple[int, ...]
    home: str
    working: str | None  # the writable working folder, if any
    writable: tuple[str, ...]
    readable: tuple[str, ...]
    hidden: tuple[str, ...]  # secret stores masked inside shared folders (and HERMES_HOME)
    relay_python: str | None = None  # the interpreter that runs the in-sandbox relay (`loopback`)
    symlinks: tuple[tuple[str, str], ...] = ()  # (target, link): paths given through a symlink
    env: Mapping[str, str] = field(default_factory=dict)  # what the sandbox adds to the server's environment

    def _deepest(self, path: str) -> str | None:
        """What decides a path's fate: the deepest mount over it ('empty', 'ro', 'rw', 'hidden'), None: the
        read-only system. Masks are laid after binds, and binds inside masks again after them, so
        the deepest one wins (a mask wins over a bind of the same path)."""
        real = os.path.normpath(path)
        best: tuple[int, int, str] | None = None
        layers = [(place, 0, "empty") for place in (*_EMPTIED, self.home)]
        layers += [(bound, 1, "ro") for bound in self.readable] + [(bound, 1, "rw") for bound in self.writable]
        layers += [(hidden, 2, "hidden") for hidden in self.hidden]
        for place, order, kind in layers:
            if _within(real, place) and (best is None or (len(place), order) > best[:2]):
                best = (len(place), order, kind)
        return best[2] if best else None

    def visible(self, path: str) -> bool:
        """Whether the server sees `path` as it is on the host (read-only or writable)."""
        return self._deepest(path) in (None, "ro", "rw")

    def writable_path(self, path: str) -> bool:
        return self._deepest(path) == "rw"

    def summary(self) -> list[str]:
        """The plan in a few lines, home folder as `~`."""
        def show(paths: Iterable[str]) -> str:
            return ", ".join(tilde(p, self.home) for p in paths) or "nothing"

        network = self.network.value + (f" (host ports {', '.join(map(str, self.ports))})" if self.ports else "")
        return [f"network: {network}",
                f"writes: {show(self.writable)}",
                f"reads (besides the system): {show(self.readable)}",
                f"hidden: {show(self.hidden)}"]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def tilde(path: str, home: str) -> str:
    return "~" + path[len(home):] if home not in ("", "/") and _within(path, home) else path


def _real(path: str) -> str:
    return os.path.realpath(path)


def _prefix(program: str) -> str:
    """The install prefix of a program: `…/venv` for `…/venv/bin/python`, else its folder."""
    folder = os.path.dirname(program)
    return os.path.dirname(folder) if os.path.basename(folder) in ("bin", "sbin") else folder


def _hidden_by_default(path: str, home: str) -> bool:
    return any(_within(path, place) for place in (*_EMPTIED, home))


def _interpreter(program: str, search: str | None) -> str | None:
    """The program a `#!` line runs (`/usr/bin/env node` -> node on PATH), if any."""
    try:
        with open(program, "rb") as handle:
            head = handle.read(_SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        named = next((w for w in words[1:] if not w.startswith("-")), None)
        return shutil.which(named, path=search) if named else None
    return words[0]


def _paths_in(value: str, cwd: str, *, relative: bool = True) -> list[str]:
    """Existing paths a command-line value names: `/x`, `./x` or `a/b` (from cwd), `--opt=/x`, `a:b` lists."""
    if value.startswith("-") and "=" in value:
        value = value.split("=", 1)[1]
    found = []
    for part in value.split(os.pathsep) if os.pathsep in value else [value]:
        if not part or "\n" in part or "\x00" in part or len(part) > 4096:
            continue
        if os.path.isabs(part):
            path = part
        elif relative and (part.startswith(".") or "/" in part):
            path = os.path.join(cwd, part)
        else:
            continue
        if os.path.lexists(path):
            found.append(os.path.normpath(path))
    return found


@dataclass
class _Builder:
    home: str
    cwd: str
    writable: set[str] = field(default_factory=set)
    readable: set[str] = field(default_factory=set)
    chosen: set[str] = field(default_factory=set)  # what the user named: wins over the hiding
    symlinks: set[tuple[str, str]] = field(default_factory=set)

    def add(self, path: str, *, write: bool, chosen: bool = False) -> None:
        path = os.path.expanduser(path) if path.startswith("~") else path
        given = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.cwd, path))
        real = _real(given)
        if real == "/" or not os.path.exists(real):
            return
        if given != real and _hidden_by_default(given, self.home):
            self.symlinks.add((real, given))
        (self.writable if write else self.readable).add(real)
        if chosen:
            self.chosen.add(real)

    def add_program(self, program: str, search: str | None) -> None:
        """A program and what it needs to start, where the sandbox would hide them."""
        for path in {program, _real(program)}:
            prefix = _prefix(path)
            if _hidden_by_default(prefix, self.home) and prefix not in (self.home, *_EMPTIED):
                self.add(prefix, write=False)
            elif _hidden_by_default(path, self.home):
                self.add(os.path.dirname(path), write=False)
        interpreter = _interpreter(program, search)
        if interpreter is not None and interpreter != program:
            for path in {interpreter, _real(interpreter)}:
                if _hidden_by_default(path, self.home):
                    self.add(_prefix(path), write=False)


def _launcher_caches(program: str, home: str, environ: Mapping[str, str]) -> list[str]:
    """Caches a package launcher writes even when warm (npm and uv take locks to read)."""
    name = os.path.basename(program)
    if name in ("npx", "npm", "pnpm", "node"):
        return [environ.get("npm_config_cache") or os.path.join(home, ".npm")]
    if name in ("uvx", "uv"):
        cache = environ.get("UV_CACHE_DIR") or os.path.join(environ.get("XDG_CACHE_HOME") or
                                                            os.path.join(home, ".cache"), "uv")
        return [cache, os.path.join(environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "uv")]
    return []


def plan(program: str, args: Iterable[str], *, env: Mapping[str, str], cwd: str, configured_cwd: bool,
         roots: Iterable[str], settings: SandboxSettings, hermes_home: str, ports: Iterable[int] = ()) -> Plan:
    """The sandbox for one start of `program args` (resolved already), from what it was configured with."""
    home = os.path.normpath(env.get("HOME") or os.path.expanduser("~"))
    builder = _Builder(home, cwd)
    search = env.get("PATH")
    network = settings.effective_network
    relayed = tuple(sorted({*settings.ports, *ports})) if network is Network.LOOPBACK else ()
    builder.add_program(program, search)
    if relayed:
        builder.add_program(sys.executable, search)
        builder.add(str(RELAY_SCRIPT.parent), write=False)
    for folder in (search or "").split(os.pathsep):
        if folder and os.path.isabs(folder) and _hidden_by_default(folder, home) and os.path.isdir(folder):
            prefix = _prefix(os.path.join(folder, "x"))
            builder.add(prefix if prefix not in (home, os.path.join(home, ".local"), *_EMPTIED) else folder,
                        write=False)
    for cache in _launcher_caches(program, home, env):
        if _within(cache, home) and not os.path.exists(cache):
            os.makedirs(cache, mode=0o700, exist_ok=True)
        builder.add(cache, write=True)
    # A plugin's own files: what its arguments name inside its folder, and nothing it names elsewhere.
    inside = [_real(cwd)] if not settings.arguments_grant else None
    for arg in args:
        for path in _paths_in(arg, cwd):
            if inside is None or any(_within(_real(path), folder) for folder in inside):
                builder.add(path, write=os.path.isdir(path), chosen=inside is None)
    for name, value in env.items():
        if name not in (*ALLOWED, "PWD") and not name.startswith("XDG_"):
            for path in _paths_in(value, cwd, relative=False):
                if inside is None or any(_within(_real(path), folder) for folder in inside):
                    builder.add(path, write=False, chosen=inside is None)
    for root in roots:
        builder.add(root[len("file://"):] if root.startswith("file://") else root, write=True, chosen=True)
    for path in settings.read:
        builder.add(path, write=False, chosen=True)
    for path in settings.write:
        builder.add(path, write=True, chosen=True)
    working = _real(cwd)
    shareable = configured_cwd or not (working == "/" or _within(home, working) or
                                       any(_within(working, system) for system in _SYSTEM))
    if shareable:
        builder.add(working, write=True)
    plan_env: dict[str, str] = {}
    tmpdir = env.get("TMPDIR")
    if tmpdir and not any(_within(_real(tmpdir), bound) for bound in builder.writable):
        plan_env["TMPDIR"] = "/tmp"
    if network is not Network.ALL:
        # Launchers retry the registry for minutes when it is unreachable; the warm cache is enough.
        plan_env.update({"npm_config_prefer_offline": "true", "UV_OFFLINE": "1"})
    draft = Plan(network, relayed, home, working if shareable else None, tuple(sorted(builder.writable)),
                 (), (), sys.executable if relayed else None, tuple(sorted(builder.symlinks)), plan_env)
    # A read-only bind matters only where the server would not see the path otherwise, once.
    readable = sorted(path for path in builder.readable - builder.writable
                      if not draft.visible(path) or path in builder.chosen)
    readable = [path for path in readable if not any(_within(path, other) and other != path for other in readable)]
    draft = replace(draft, readable=tuple(readable))
    # Hide only what the server could otherwise see, and never what the user named on purpose.
    secrets = [os.path.join(home, store) for store in SECRET_STORES] + [os.path.normpath(_real(hermes_home))]
    hidden = tuple(sorted(h for h in secrets if os.path.lexists(h) and draft.visible(h) and h not in builder.chosen))
    return replace(draft, hidden=hidden)


def bwrap_argv(bwrap: str, sandbox: Plan, cwd: str, *, relay_dir: str | None = None) -> list[str]:
    """The bubblewrap command line that runs a program inside `sandbox` (the program follows it)."""
    argv = [bwrap, "--die-with-parent", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if sandbox.network is not Network.ALL:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for place in dict.fromkeys((*_EMPTIED, sandbox.home)):
        if os.path.isdir(place) and place != "/":
            argv += ["--tmpfs", place]
    if sandbox.network is Network.ALL:
        for state in _RESOLVER_STATE:
            argv += ["--ro-bind-try", state, state]
    binds = [(path, "--bind") for path in sandbox.writable] + [(path, "--ro-bind") for path in sandbox.readable]
    # Shallow first: a read-only folder inside a writable one stays read-only.
    binds.sort(key=lambda bind: (bind[0].count("/"), bind[0]))
    for path, flag in binds:
        argv += [flag, path, path]
    for path in sorted(sandbox.hidden, key=lambda p: p.count("/")):
        argv += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    # What the user chose inside a hidden place comes back on top of the hiding.
    for path, flag in binds:
        if any(_within(path, hidden) and path != hidden for hidden in sandbox.hidden):
            argv += [flag, path, path]
    for target, link in sandbox.symlinks:
        argv += ["--symlink", target, link]
    if relay_dir is not None:
        argv += ["--ro-bind", relay_dir, RELAY_DIR]
    argv += ["--chdir", _real(cwd) if sandbox.visible(_real(cwd)) else sandbox.home]
    for name, value in sandbox.env.items():
        argv += ["--setenv", name, value]
    argv.append("--")
    return argv


@dataclass(frozen=True)
class SandboxRequest:
    """What a stdio transport needs to build its server's sandbox once the program is resolved."""

    bwrap: str
    settings: SandboxSettings
    roots: tuple[str, ...]
    hermes_home: str
    ports: tuple[int, ...] = ()  # host loopback ports known only at connect time (an app's endpoint)

    def plan_for(self, program: str, args: list[str], env: Mapping[str, str], cwd: str, configured_cwd: bool) -> Plan:
        return plan(program, args, env=env, cwd=cwd, configured_cwd=configured_cwd, roots=self.roots,
                    settings=self.settings, hermes_home=self.hermes_home, ports=self.ports)


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
    found = support(environ.get("PATH"))
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
                   roots=server.config.roots or (), settings=settings, hermes_home=hermes_home)
    return {"state": "on", "network": sandbox.network.value, "ports": list(sandbox.ports),
            "writes": [tilde(p, sandbox.home) for p in sandbox.writable],
            "reads": [tilde(p, sandbox.home) for p in sandbox.readable],
            "hidden": [tilde(p, sandbox.home) for p in sandbox.hidden]}
