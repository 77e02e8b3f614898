"""The sandbox a stdio server runs in on Linux: bubblewrap, with a plan built from its config.

What the server sees:
- the system read-only (`/` bound read-only), a fresh `/dev` and `/proc`, an empty `/tmp`, `/run`
  and home folder, and no other user's home;
- the program and what it needs to run (derived by `sandbox_programs`: its install prefix, its
  package's dependency tree, the interpreter its `#!` names, the folders of `PATH` that sit in a
  hidden place, a launcher's cache of its own for npx and uvx), read-only except the caches;
- its working folder and the folders its arguments and `roots:` name, writable (a folder argument
  holding the working folder or a home only read-only); files its arguments name and paths its
  `env:` names, read-only; `sandbox.read` and `sandbox.write` on top;
- inside what it may write, what would later run with the user's rights read-only: repositories'
  own folders (each mounted on its own, so it cannot be renamed away and replaced) with their hooks
  and config, shell start-up files, autostart entries, folders on PATH (`sandbox_places`);
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

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from hermes.config.sandbox import Confinement, Network, SandboxSettings
from hermes.mcp.sandbox_hold import HeldBinds, SandboxChanged
from hermes.mcp.sandbox_places import (
    RESOLVER_STATE,
    SECRET_STORES,
    SYSTEM,
    above,
    emptied_places,
    guards,
    holds_home,
    inside_any,
    on_the_way,
    secret_paths,
    tilde,
    user_homes,
    within,
)
from hermes.mcp.sandbox_programs import Builder, interpreter, launcher_env, paths_in, programs_named_in
from hermes.security.environment import ALLOWED

__all__ = ["RELAY_DIR", "RELAY_SCRIPT", "SECRET_STORES", "Plan", "SandboxRequest", "bwrap_argv", "host_side",
           "launcher_cache", "plan", "tilde"]

RELAY_DIR = "/run/hermes-relay"
RELAY_SCRIPT = Path(__file__).with_name("relay_inside.py")
_PLAN_ATTEMPTS = 3


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
    homes: tuple[str, ...] = ()  # every folder that is the user's home (emptied, like `home`)
    secrets: tuple[str, ...] = ()  # the secret stores and HERMES_HOME, wherever they are
    pinned: tuple[str, ...] = ()  # repositories' own folders, each a mount of its own (never renamed away)
    guarded: tuple[str, ...] = ()  # what runs later with the user's rights: read-only inside writable folders
    emptied: tuple[str, ...] = ()  # what the sandbox empties (homes, /tmp, …), as named and as they really are
    project: bool = False  # a project's server not granted more: only `hermes mcp trust --grant` widens it
    unscanned: tuple[str, ...] = ()  # writable folders too big to look through for repositories: read-only

    def _deepest(self, path: str) -> str | None:
        """What decides a path's fate: the deepest mount over it ('empty', 'ro', 'rw', 'hidden'), None: the
        read-only system. Masks are laid after binds, and binds inside masks again after them, so
        the deepest one wins (a mask wins over a bind of the same path)."""
        real = os.path.normpath(path)
        best: tuple[int, int, str] | None = None
        layers = [(place, 0, "empty") for place in self.emptied]
        layers += [(bound, 1, "ro") for bound in self.readable] + [(bound, 1, "rw") for bound in self.writable]
        layers += [(hidden, 2, "hidden") for hidden in self.hidden]
        for place, order, kind in layers:
            if within(real, place) and (best is None or (len(place), order) > best[:2]):
                best = (len(place), order, kind)
        return best[2] if best else None

    def visible(self, path: str) -> bool:
        """Whether the server sees `path` as it is on the host (read-only or writable)."""
        return self._deepest(path) in (None, "ro", "rw")

    def writable_path(self, path: str) -> bool:
        return self._deepest(path) == "rw"

    @property
    def bound(self) -> tuple[str, ...]:
        """Every host place bound in (held open from the check to the mount: `sandbox_hold`)."""
        return (*self.writable, *self.pinned, *self.readable)


def plan(program: str, args: Iterable[str], *, env: Mapping[str, str], cwd: str, configured_cwd: bool,
         roots: Iterable[str], settings: SandboxSettings, hermes_home: str, ports: Iterable[int] = (),
         cache: str | None = None, protected: Iterable[str] = ()) -> Plan:
    """The sandbox for one start of `program args` (resolved already), from what it was configured with;
    `protected`: paths kept read-only wherever they are (the user's own bubblewrap)."""
    homes = user_homes(env)
    home = homes[0] if homes else "/nonexistent"
    emptied = emptied_places(homes)
    builder = Builder(homes, emptied, cwd)
    search = env.get("PATH")
    network = settings.effective_network
    relayed = tuple(sorted({*settings.ports, *ports})) if network is Network.LOOPBACK else ()
    builder.add_program(program, search)
    if relayed:
        builder.add_program(sys.executable, search)
        builder.add(str(RELAY_SCRIPT.parent), write=False)
    own_path = [folder for folder in (os.environ.get("PATH") or "").split(os.pathsep) if folder]
    for folder in (search or "").split(os.pathsep):
        # A project's or plugin's own PATH brings only what hermes's PATH has, or its own folder.
        allowed = settings.arguments_grant or folder in own_path or \
            within(os.path.realpath(folder), os.path.realpath(cwd))
        if allowed and os.path.isabs(folder) and builder.hidden_by_default(folder) and os.path.isdir(folder):
            builder.add_install_folder(folder)
    plan_env = launcher_env(program, cache)
    for private in plan_env.values():
        builder.add(private, write=True, chosen=True)  # shared once it exists (`SandboxRequest` makes it)
    managed = os.path.join(env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "uv", "python")
    if os.path.basename(program) in ("uvx", "uv") and os.path.isdir(managed):
        builder.add(managed, write=False)  # uv's own Pythons, read-only
    # A plugin's own files: what its arguments name inside its folder, and nothing it names elsewhere.
    inside = [os.path.realpath(cwd)] if not settings.arguments_grant else None
    for arg in args:
        for path in paths_in(arg, cwd):
            if inside is None or inside_any(os.path.realpath(path), inside):
                write = os.path.isdir(path) and inside is None and \
                    not above(os.path.realpath(path), os.path.realpath(cwd), homes)
                builder.add(path, write=write, chosen=inside is None)
                if os.path.isfile(path):
                    builder.add_code(path)
    for name, value in env.items():
        if name not in (*ALLOWED, "PWD") and not name.startswith("XDG_"):
            for path in paths_in(value, cwd, relative=False):
                if inside is None or inside_any(os.path.realpath(path), inside):
                    builder.add(path, write=False, chosen=inside is None)
    for root in roots:
        builder.add(root[len("file://"):] if root.startswith("file://") else root, write=True,
                    chosen=settings.arguments_grant)
    for path in settings.read:
        builder.add(path, write=False, chosen=True)
    for path in settings.write:
        # Even when the user grants it, a whole home (or more) is shared read-only: in it a server
        # could create start-up files that do not exist yet (`~/.bash_profile`), which no mount can guard.
        builder.add(path, write=not holds_home(path, homes), chosen=True)
    working = os.path.realpath(cwd)
    shareable = configured_cwd or not (working == "/" or inside_any(home, [working]) or
                                       any(within(working, system) for system in SYSTEM))
    if shareable:
        # A plugin's folder is its code and its install record: readable, not writable; a folder
        # holding a home, also a configured one, only readable (see `settings.write` above).
        write = settings.working_writable and not holds_home(working, homes)
        # A project's configured `cwd` is the project's word, not the user's (`cwd: .git` grants nothing).
        builder.add(working, write=write, chosen=configured_cwd and settings.confinement is not Confinement.PROJECT)
    if settings.follows_named_code and interpreter(program, search) is not None and \
            not inside_any(os.path.realpath(program), builder.writable):
        # A launcher script (`exec /opt/tool/bin/x "$@"`) the server cannot rewrite: what it runs comes too.
        for named in programs_named_in(program):
            builder.add_program(named, search)
    secrets = secret_paths(homes, hermes_home)
    # Nothing the user did not name comes from inside a secret place (a bind of HERMES_HOME/mcp-tokens,
    # of ~/.ssh/…, whatever path led there).
    for bound in (builder.writable, builder.readable):
        bound -= {p for p in bound if p not in builder.chosen and inside_any(p, secrets)}
    # What would run later with the user's full rights: repositories' own code, shell start-up
    # files, folders on PATH. Read-only inside a writable folder, so a server cannot plant what the
    # user's next `git status` or login would run.
    granted = {path for path in builder.writable if path in builder.chosen}
    # A launcher's private cache is hermes's own (no repository, no start-up file): not looked through.
    looked_through = [folder for folder in builder.writable if folder not in plan_env.values()]
    kept = guards(looked_through, granted, homes, [*(search or "").split(os.pathsep), *own_path], protected)
    for folder in kept.unscanned:  # too big to look through for repositories: read-only whole
        builder.writable.discard(folder)
        builder.readable.add(folder)
        builder.chosen.add(folder)
    tmpdir = env.get("TMPDIR")
    if tmpdir and not any(within(os.path.realpath(tmpdir), bound) for bound in builder.writable):
        plan_env["TMPDIR"] = "/tmp"
    if network is not Network.ALL:
        # Launchers retry the registry for minutes when it is unreachable; the warm cache is enough.
        plan_env.update({"npm_config_prefer_offline": "true", "UV_OFFLINE": "1"})
    draft = Plan(network, relayed, home, working if shareable else None, tuple(sorted(builder.writable)),
                 (), (), sys.executable if relayed else None, tuple(sorted(builder.symlinks)), plan_env,
                 homes=homes, emptied=emptied, project=settings.confinement is Confinement.PROJECT)
    # A read-only bind matters only where the server would not see the path otherwise, once.
    readable = sorted(path for path in builder.readable - builder.writable
                      if not draft.visible(path) or path in builder.chosen)
    readable = [path for path in readable if not any(within(path, other) and other != path for other in readable)]
    guarded = [path for path in kept.guarded if draft.writable_path(path)]
    draft = replace(draft, readable=tuple(sorted({*readable, *guarded})), guarded=tuple(sorted(guarded)),
                    pinned=tuple(sorted(p for p in dict.fromkeys(kept.pinned) if draft.writable_path(p))),
                    unscanned=tuple(kept.unscanned))
    # Hide what the server could otherwise see (a secret place inside a shared folder), unless the
    # user named that very place.
    hidden = tuple(sorted(h for h in secrets if os.path.lexists(h) and draft.visible(h) and h not in builder.chosen))
    # Every folder on the way to what is kept in place is kept in place too (see `sandbox_hold`).
    held = [folder for folder in on_the_way([*draft.writable, *draft.readable, *draft.pinned, *hidden], draft.writable)
            if draft.writable_path(folder) and os.path.isdir(folder) and not os.path.islink(folder)]
    return replace(draft, hidden=hidden, secrets=tuple(secrets), pinned=tuple(sorted({*draft.pinned, *held})))


# What the dynamic loader and the C library act on in every program they start: given to bubblewrap
# and setpriv, which run on the host, `LD_PRELOAD=./evil.so` would run a server's code outside its
# sandbox. The server still gets them, inside, through `--setenv`.
_LOADER_VARIABLES = frozenset({"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN",
                               "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"})


def host_side(env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the environment bubblewrap runs with on the host, what only the server gets inside)."""
    inside = {name: value for name, value in env.items()
              if name.startswith(("LD_", "MALLOC_")) or name in _LOADER_VARIABLES}
    return {name: value for name, value in env.items() if name not in inside}, inside


def bwrap_argv(bwrap: str, sandbox: Plan, cwd: str, *, relay_dir: str | None = None,
               inside: Mapping[str, str] | None = None, held: HeldBinds | None = None) -> list[str]:
    """The bubblewrap command line that runs a program inside `sandbox` (the program follows it);
    `inside`: variables for the server alone (see `host_side`); `held`: the bound places, open."""
    def bind(flag: str, path: str) -> list[str]:
        return held.bind(flag, path) if held is not None else [flag, path, path]

    argv = [bwrap, "--die-with-parent", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if sandbox.network is not Network.ALL:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for place in sandbox.emptied:
        if os.path.isdir(place) and not os.path.islink(place):  # a symlinked one is emptied where it leads
            argv += ["--tmpfs", place]
    if sandbox.network is Network.ALL:
        for state in RESOLVER_STATE:
            argv += ["--ro-bind-try", state, state]
    binds = [(path, "--bind") for path in (*sandbox.writable, *sandbox.pinned)]
    binds += [(path, "--ro-bind") for path in sandbox.readable]
    # Shallow first: a read-only folder inside a writable one stays read-only.
    binds.sort(key=lambda bind: (bind[0].count("/"), bind[0]))
    for path, flag in binds:
        argv += bind(flag, path)
    for path in sorted(sandbox.hidden, key=lambda p: p.count("/")):
        argv += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
    # What the user chose inside a hidden place comes back on top of the hiding.
    for path, flag in binds:
        if any(within(path, hidden) and path != hidden for hidden in sandbox.hidden):
            argv += bind(flag, path)
    for target, link in sandbox.symlinks:
        # Only where the sandbox shows an empty place: elsewhere the host's own link is there already.
        if not sandbox.visible(os.path.dirname(link)):
            argv += ["--symlink", target, link]
    if relay_dir is not None:
        argv += ["--ro-bind", relay_dir, RELAY_DIR]
    argv += ["--chdir", os.path.realpath(cwd) if sandbox.visible(os.path.realpath(cwd)) else sandbox.home]
    for name, value in {**(inside or {}), **sandbox.env}.items():
        argv += ["--setenv", name, value]
    argv.append("--")
    return argv


def launcher_cache(hermes_home: str, server: str, settings: SandboxSettings) -> str:
    """A server's own npx/uvx cache; a project's servers each have one of the project's, so a
    project's entry never shares a cache with the user's server of the same name."""
    return os.path.join(hermes_home, "cache", "sandbox", *filter(None, [settings.cache_scope]), server)


@dataclass(frozen=True)
class SandboxRequest:
    """What a stdio transport needs to build its server's sandbox once the program is resolved."""

    bwrap: str
    settings: SandboxSettings
    roots: tuple[str, ...]
    hermes_home: str
    ports: tuple[int, ...] = ()  # host loopback ports known only at connect time (an app's endpoint)
    cache: str | None = None  # this server's own package-launcher cache (npx, uvx)
    by_fd: bool = True  # bubblewrap binds open files (`--bind-fd`, 0.7 and later)

    def plan_for(self, program: str, args: list[str], env: Mapping[str, str], cwd: str, configured_cwd: bool) -> Plan:
        """The plan of a start about to happen: the server's own launcher cache is made first."""
        for private in launcher_env(program, self.cache).values():
            os.makedirs(private, mode=0o700, exist_ok=True)
        return plan(program, args, env=env, cwd=cwd, configured_cwd=configured_cwd, roots=self.roots,
                    settings=self.settings, hermes_home=self.hermes_home, ports=self.ports, cache=self.cache,
                    protected=(self.bwrap,))

    def prepare(self, program: str, args: list[str], env: Mapping[str, str], cwd: str,
                configured_cwd: bool) -> tuple[Plan, HeldBinds]:
        """The plan, and the places it binds held open; planned again when a place changed in between
        (a server renaming its own folders), `SandboxChanged` when it keeps changing."""
        for attempt in range(_PLAN_ATTEMPTS):
            found = self.plan_for(program, args, env, cwd, configured_cwd)
            try:
                return found, HeldBinds(found.bound, by_fd=self.by_fd)
            except SandboxChanged:
                if attempt == _PLAN_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")
