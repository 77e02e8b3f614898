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

import contextlib
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from hermes.config.sandbox import Network, SandboxSettings
from hermes.security.environment import ALLOWED

# Folders under a user's home that hold credentials or browser state: hidden even when the server
# was given the whole home folder.
SECRET_STORES = (".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".mozilla",
                 ".config/gcloud", ".config/gh", ".config/google-chrome", ".config/chromium",
                 ".config/BraveSoftware", ".config/microsoft-edge", ".local/share/keyrings", ".netrc", ".npmrc",
                 ".pypirc", ".git-credentials", ".config/git/credentials", ".pgpass", ".my.cnf", ".vault-token",
                 ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d", ".config/hub", ".local/share/gh")
# What runs with the user's full rights later if a server could change it (a shell reading its
# start-up files, a desktop session its autostart entries, a command found on PATH, Python's user
# site): read-only even inside a folder the server may write.
START_UP = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
            ".zlogin", ".zlogout", ".config/fish", ".xprofile", ".xsessionrc", ".xinitrc", ".pam_environment",
            ".config/autostart", ".config/systemd", ".config/environment.d", ".local/bin", "bin",
            ".local/share/applications", ".local/lib", ".gitconfig", ".config/git", ".vimrc", ".config/nvim",
            ".emacs", ".emacs.d", ".pythonrc", ".config/pip", ".config/direnv", ".inputrc")
# Version-control folders run code of their own accord (git's hooks and config: `core.fsmonitor`,
# aliases, helpers; Mercurial's hgrc hooks). Each is mounted on its own, so it cannot be renamed
# away and replaced, and its code-bearing parts are read-only.
VCS_CODE = {".git": ("hooks", "config"), ".hg": ("hgrc",), ".svn": (), ".jj": ("repo/config.toml",), ".bzr": ()}
_VCS_SCAN = 256  # immediate subfolders of a writable folder looked at for repositories of their own
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

    def _deepest(self, path: str) -> str | None:
        """What decides a path's fate: the deepest mount over it ('empty', 'ro', 'rw', 'hidden'), None: the
        read-only system. Masks are laid after binds, and binds inside masks again after them, so
        the deepest one wins (a mask wins over a bind of the same path)."""
        real = os.path.normpath(path)
        best: tuple[int, int, str] | None = None
        layers = [(place, 0, "empty") for place in (*_EMPTIED, self.home, *self.homes)]
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


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def tilde(path: str, home: str) -> str:
    return "~" + path[len(home):] if home not in ("", "/") and _within(path, home) else path


def _real(path: str) -> str:
    return os.path.realpath(path)


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


_NAMED_PROGRAM = re.compile(r"(?<![\w.])(/[\w.+@-]+(?:/[\w.+@-]+)+)")
_SCRIPT_HEAD = 16 * 1024


def _programs_named_in(script: str) -> list[str]:
    """Absolute paths of programs a launcher script names (its first few kilobytes)."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(_SCRIPT_HEAD).decode(errors="replace")
    except OSError:
        return []
    return [path for path in dict.fromkeys(_NAMED_PROGRAM.findall(head))
            if os.path.isfile(path) and os.access(path, os.X_OK)][:16]


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


def _user_homes(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every folder that is the user's home: the server's HOME, hermes's, and the account's own
    (a server's `env:` may point HOME elsewhere; the real one's secrets stay hidden all the same)."""
    homes = [env.get("HOME") or "", os.environ.get("HOME") or "", os.path.expanduser("~")]
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    return tuple(dict.fromkeys(os.path.normpath(h) for h in homes if h and os.path.isabs(h) and h != "/"))


@dataclass
class _Builder:
    homes: tuple[str, ...]
    cwd: str
    writable: set[str] = field(default_factory=set)
    readable: set[str] = field(default_factory=set)
    chosen: set[str] = field(default_factory=set)  # what the user named: wins over the hiding
    symlinks: set[tuple[str, str]] = field(default_factory=set)

    def hidden_by_default(self, path: str) -> bool:
        return any(_within(path, place) for place in (*_EMPTIED, *self.homes))

    def add(self, path: str, *, write: bool, chosen: bool = False) -> None:
        path = os.path.expanduser(path) if path.startswith("~") else path
        given = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.cwd, path))
        real = _real(given)
        if real == "/" or not os.path.exists(real):
            return
        if given != real:
            # Named through a symlink: the link may have been planted by a server in a folder it can
            # write, so what it points to is shared as found, never as the user's own choice.
            chosen = False
            if self.hidden_by_default(given):
                self.symlinks.add((real, given))
        (self.writable if write else self.readable).add(real)
        if chosen:
            self.chosen.add(real)

    def add_prefix(self, program: str) -> None:
        """The install folder of a program (`…/venv` for `…/venv/bin/python`), where the sandbox would
        hide it; never a home folder, an emptied place or anything above them."""
        for path in dict.fromkeys((os.path.normpath(program), _real(program))):
            # Only a program that is really there: a `#!` line may name any path, and its folders
            # must not become a way to see the host.
            if os.path.isfile(_real(path)):
                self.add_install_folder(os.path.dirname(path))

    def add_code_folder(self, script: str) -> None:
        """What a script named in the arguments loads beside itself: its folder, or for a file in a
        node package the folder holding the outermost `node_modules` (Node looks up from there)."""
        real = _real(script)
        parts = real.split("/")
        package = "/".join(parts[:parts.index("node_modules")]) if "node_modules" in parts else ""
        self._add_folder(package, os.path.dirname(real))

    def add_install_folder(self, folder: str) -> None:
        """A folder of programs and its prefix (`…/venv` for `…/venv/bin`), where the sandbox would hide it."""
        if self.hidden_by_default(folder):
            prefix = os.path.dirname(folder) if os.path.basename(folder) in ("bin", "sbin") else folder
            self._add_folder(prefix, folder)

    def _add_folder(self, wider: str, narrower: str) -> None:
        """Share `wider` read-only; `narrower` when `wider` would take in a home folder or an emptied
        place (or is empty); neither when both would."""
        for folder in (wider, narrower):
            if folder and not any(_within(place, folder) for place in (*_EMPTIED, *self.homes)):
                self.add(folder, write=False)
                return

    def add_program(self, program: str, search: str | None) -> None:
        """A program and what it needs to start: its install folder, and the interpreter its `#!` names."""
        self.add_prefix(program)
        interpreter = _interpreter(program, search)
        if interpreter is not None and os.path.isabs(interpreter) and interpreter != program:
            self.add_prefix(_real(interpreter))


def _launcher_env(program: str, cache: str | None) -> dict[str, str]:
    """A package launcher's cache for this server alone: a server that could write the user's own
    npm or uv cache could plant code that runs later outside any sandbox."""
    name = os.path.basename(program)
    if cache is None:
        return {}
    if name in ("npx", "npm", "pnpm", "node"):
        return {"npm_config_cache": os.path.join(cache, "npm")}
    if name in ("uvx", "uv"):
        return {"UV_CACHE_DIR": os.path.join(cache, "uv")}
    return {}


def _inside_any(path: str, places: Iterable[str]) -> bool:
    return any(_within(path, place) for place in places)


def plan(program: str, args: Iterable[str], *, env: Mapping[str, str], cwd: str, configured_cwd: bool,
         roots: Iterable[str], settings: SandboxSettings, hermes_home: str, ports: Iterable[int] = (),
         cache: str | None = None) -> Plan:
    """The sandbox for one start of `program args` (resolved already), from what it was configured with."""
    homes = _user_homes(env)
    home = homes[0] if homes else "/nonexistent"
    builder = _Builder(homes, cwd)
    search = env.get("PATH")
    network = settings.effective_network
    relayed = tuple(sorted({*settings.ports, *ports})) if network is Network.LOOPBACK else ()
    builder.add_program(program, search)
    if relayed:
        builder.add_program(sys.executable, search)
        builder.add(str(RELAY_SCRIPT.parent), write=False)
    for folder in (search or "").split(os.pathsep):
        if folder and os.path.isabs(folder) and builder.hidden_by_default(folder) and os.path.isdir(folder):
            builder.add_install_folder(folder)
    plan_env = _launcher_env(program, cache)
    for private in plan_env.values():
        builder.add(private, write=True, chosen=True)  # shared once it exists (`SandboxRequest` makes it)
    managed = os.path.join(env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "uv", "python")
    if os.path.basename(program) in ("uvx", "uv") and os.path.isdir(managed):
        builder.add(managed, write=False)  # uv's own Pythons, read-only
    # A plugin's own files: what its arguments name inside its folder, and nothing it names elsewhere.
    inside = [_real(cwd)] if not settings.arguments_grant else None
    for arg in args:
        for path in _paths_in(arg, cwd):
            if inside is None or _inside_any(_real(path), inside):
                write = os.path.isdir(path) and inside is None and not _above(_real(path), _real(cwd), homes)
                builder.add(path, write=write, chosen=inside is None)
                if os.path.isfile(path):
                    builder.add_code_folder(path)
    for name, value in env.items():
        if name not in (*ALLOWED, "PWD") and not name.startswith("XDG_"):
            for path in _paths_in(value, cwd, relative=False):
                if inside is None or _inside_any(_real(path), inside):
                    builder.add(path, write=False, chosen=inside is None)
    for root in roots:
        builder.add(root[len("file://"):] if root.startswith("file://") else root, write=True, chosen=True)
    for path in settings.read:
        builder.add(path, write=False, chosen=True)
    for path in settings.write:
        builder.add(path, write=True, chosen=True)
    working = _real(cwd)
    shareable = configured_cwd or not (working == "/" or _inside_any(home, [working]) or
                                       any(_within(working, system) for system in _SYSTEM))
    if shareable:
        # A plugin's folder is its code and its install record: readable, not writable.
        builder.add(working, write=settings.arguments_grant, chosen=configured_cwd)
    if _interpreter(program, search) is not None and not _inside_any(_real(program), builder.writable):
        # A launcher script (`exec /opt/tool/bin/x "$@"`) the server cannot rewrite: what it runs comes too.
        for named in _programs_named_in(program):
            builder.add_program(named, search)
    secrets = _secret_paths(homes, hermes_home)
    # Nothing the user did not name comes from inside a secret place (a bind of HERMES_HOME/mcp-tokens,
    # of ~/.ssh/…, whatever path led there).
    for bound in (builder.writable, builder.readable):
        bound -= {p for p in bound if p not in builder.chosen and _inside_any(p, secrets)}
    tmpdir = env.get("TMPDIR")
    if tmpdir and not any(_within(_real(tmpdir), bound) for bound in builder.writable):
        plan_env["TMPDIR"] = "/tmp"
    if network is not Network.ALL:
        # Launchers retry the registry for minutes when it is unreachable; the warm cache is enough.
        plan_env.update({"npm_config_prefer_offline": "true", "UV_OFFLINE": "1"})
    draft = Plan(network, relayed, home, working if shareable else None, tuple(sorted(builder.writable)),
                 (), (), sys.executable if relayed else None, tuple(sorted(builder.symlinks)), plan_env,
                 homes=homes)
    # A read-only bind matters only where the server would not see the path otherwise, once.
    readable = sorted(path for path in builder.readable - builder.writable
                      if not draft.visible(path) or path in builder.chosen)
    readable = [path for path in readable if not any(_within(path, other) and other != path for other in readable)]
    # What would run later with the user's full rights: repositories' own code, shell start-up
    # files, folders on PATH. Read-only inside a writable folder, so a server cannot plant what the
    # user's next `git status` or login would run.
    pinned, guarded = _guards(builder.writable, homes, search)
    guarded = [path for path in guarded if draft.writable_path(path)]
    draft = replace(draft, readable=tuple(sorted({*readable, *guarded})),
                    pinned=tuple(sorted(p for p in pinned if draft.writable_path(p))))
    # Hide what the server could otherwise see (a secret place inside a shared folder), unless the
    # user named that very place.
    hidden = tuple(sorted(h for h in secrets if os.path.lexists(h) and draft.visible(h) and h not in builder.chosen))
    return replace(draft, hidden=hidden, secrets=tuple(secrets))


def _above(folder: str, working: str, homes: tuple[str, ...]) -> bool:
    """Whether a folder named in the arguments holds the working folder or a home folder: shared
    read-only unless the user grants write (`sandbox.write`), since a home holds start-up files and
    repositories whose code runs later with the user's rights."""
    return (folder != working and _within(working, folder)) or any(_within(home, folder) for home in homes)


def _guards(writable: Iterable[str], homes: tuple[str, ...], search: str | None) -> tuple[list[str], list[str]]:
    """(repository folders to mount on their own, paths to keep read-only) inside writable folders."""
    pinned: list[str] = []
    guarded: list[str] = []
    path_folders = [f for f in (search or "").split(os.pathsep) if os.path.isabs(f)]
    for folder in writable:
        for repository in [folder, *_subfolders(folder)]:
            for vcs, code in VCS_CODE.items():
                place = os.path.join(repository, vcs)
                if os.path.islink(place):
                    continue
                if os.path.isdir(place):
                    pinned.append(place)
                    guarded += [os.path.join(place, part) for part in code]
                elif os.path.isfile(place):
                    guarded.append(place)  # `.git` as a file: where a worktree's repository is
        guarded += [os.path.join(home, item) for home in homes for item in START_UP
                    if _within(os.path.join(home, item), folder)]
        guarded += [os.path.normpath(f) for f in path_folders if _within(os.path.normpath(f), folder)]
    return pinned, [path for path in dict.fromkeys(guarded) if os.path.lexists(path) and not os.path.islink(path)]


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.path for _, entry in zip(range(_VCS_SCAN), entries, strict=False)
                    if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _secret_paths(homes: tuple[str, ...], hermes_home: str) -> list[str]:
    """The secret stores of every home, and HERMES_HOME, each also where a symlink leads."""
    found: list[str] = []
    for place in [os.path.join(h, store) for h in homes for store in SECRET_STORES] + [hermes_home]:
        found.append(os.path.normpath(place))
        if os.path.islink(place):
            found.append(_real(place))
    found.append(_real(hermes_home))
    return list(dict.fromkeys(found))


def bwrap_argv(bwrap: str, sandbox: Plan, cwd: str, *, relay_dir: str | None = None) -> list[str]:
    """The bubblewrap command line that runs a program inside `sandbox` (the program follows it)."""
    argv = [bwrap, "--die-with-parent", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if sandbox.network is not Network.ALL:
        argv.append("--unshare-net")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for place in dict.fromkeys((*_EMPTIED, sandbox.home, *sandbox.homes)):
        if os.path.isdir(place) and place != "/":
            argv += ["--tmpfs", place]
    if sandbox.network is Network.ALL:
        for state in _RESOLVER_STATE:
            argv += ["--ro-bind-try", state, state]
    binds = [(path, "--bind") for path in (*sandbox.writable, *sandbox.pinned)]
    binds += [(path, "--ro-bind") for path in sandbox.readable]
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


def launcher_cache(hermes_home: str, server: str) -> str:
    return os.path.join(hermes_home, "cache", "sandbox", server)


@dataclass(frozen=True)
class SandboxRequest:
    """What a stdio transport needs to build its server's sandbox once the program is resolved."""

    bwrap: str
    settings: SandboxSettings
    roots: tuple[str, ...]
    hermes_home: str
    ports: tuple[int, ...] = ()  # host loopback ports known only at connect time (an app's endpoint)
    cache: str | None = None  # this server's own package-launcher cache (npx, uvx)

    def plan_for(self, program: str, args: list[str], env: Mapping[str, str], cwd: str, configured_cwd: bool) -> Plan:
        """The plan of a start about to happen: the server's own launcher cache is made first."""
        for private in _launcher_env(program, self.cache).values():
            os.makedirs(private, mode=0o700, exist_ok=True)
        return plan(program, args, env=env, cwd=cwd, configured_cwd=configured_cwd, roots=self.roots,
                    settings=self.settings, hermes_home=self.hermes_home, ports=self.ports, cache=self.cache)
