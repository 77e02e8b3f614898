"""Places on the host as a stdio server's sandbox treats them (see `hermes.mcp.sandbox`).

Which folders are emptied (and where a symlinked one really is), which hold secrets, which hold
what runs later with the user's full rights (shell start-up files, repositories' own code, PATH
folders), and how a path is shown. Plain functions over paths; the only I/O is looking at the
file system.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping

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
VCS_CODE = {".git": ("hooks", "config", "info", "commondir", "config.worktree", "modules", "worktrees"),
            ".hg": ("hgrc", "hgrc-not-shared"), ".svn": (), ".jj": ("repo/config.toml",), ".bzr": ("branch.conf",)}
VCS_SCAN = 256  # immediate subfolders of a writable folder looked at for repositories of their own
# Places whose content the server never sees unless something in them is bound in on purpose.
EMPTIED = ("/tmp", "/var/tmp", "/run", "/home", "/root")
# System places visible read-only already; never a working folder to bind writable.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/proc", "/sys",
           "/dev", "/opt", "/var/lib", "/var/cache", "/srv", "/snap")
# Name lookups need these when `/run` is emptied and the network is shared.
RESOLVER_STATE = ("/run/systemd/resolve", "/run/NetworkManager", "/run/resolvconf")


def within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def inside_any(path: str, places: Iterable[str]) -> bool:
    return any(within(path, place) for place in places)


def tilde(path: str, home: str) -> str:
    return "~" + path[len(home):] if home not in ("", "/") and within(path, home) else path


def user_homes(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every folder that is the user's home: the server's HOME, hermes's, and the account's own
    (a server's `env:` may point HOME elsewhere; the real one's secrets stay hidden all the same),
    each also where a symlink leads (`/home` -> `var/home` on image-based systems)."""
    homes = [env.get("HOME") or "", os.environ.get("HOME") or "", os.path.expanduser("~")]
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    named = [os.path.normpath(h) for h in homes if h and os.path.isabs(h) and h != "/"]
    return tuple(dict.fromkeys([*named, *(os.path.realpath(h) for h in named)]))


def emptied_places(homes: Iterable[str]) -> tuple[str, ...]:
    """The folders the sandbox empties, as named and where they really are (a tmpfs is laid on the
    real folder: on a symlink bubblewrap would fail, or follow it)."""
    named = [os.path.normpath(p) for p in (*EMPTIED, *homes)]
    return tuple(p for p in dict.fromkeys([*named, *(os.path.realpath(p) for p in named)]) if p != "/")


def links_in(path: str) -> list[str]:
    """Each component of an absolute `path` that is a symlink, in order."""
    parts = path.strip("/").split("/")
    prefixes = ("/" + "/".join(parts[:index]) for index in range(1, len(parts) + 1))
    return [prefix for prefix in prefixes if os.path.islink(prefix)]


def first_link(path: str) -> str | None:
    """The first component of an absolute `path` that is a symlink, if any."""
    return next(iter(links_in(path)), None)


def starts_up(path: str, homes: Iterable[str]) -> bool:
    """Whether `path` is (or is in) a shell start-up file, autostart folder or the like of a home."""
    return any(within(path, os.path.join(home, item)) for home in homes for item in START_UP)


def holds_home(folder: str, homes: Iterable[str]) -> bool:
    path = os.path.realpath(os.path.expanduser(folder))
    return any(within(home, path) for home in homes)


def above(folder: str, working: str, homes: tuple[str, ...]) -> bool:
    """Whether a folder named in the arguments holds the working folder or a home folder: shared
    read-only unless the user grants write (`sandbox.write`), since a home holds start-up files and
    repositories whose code runs later with the user's rights."""
    return (folder != working and within(working, folder)) or holds_home(folder, homes)


def trusted_link(link: str) -> bool:
    """A symlink the system made (`/home` -> `var/home`), not one a server could have planted in a
    folder it may write: only such a link may lead a writable share elsewhere."""
    parent = os.path.dirname(link)
    return parent == "/" or inside_any(parent, SYSTEM)


def guards(writable: Iterable[str], granted: Iterable[str], homes: tuple[str, ...],
           search: str | None) -> tuple[list[str], list[str]]:
    """(folders to mount on their own, paths to keep read-only) inside writable folders.

    A repository's folder is a mount of its own (so it cannot be renamed away and replaced by the
    server's); its `.git` (`.hg`, …) is read-only, hooks and config and all, unless the user granted
    write to that very folder (`sandbox.write: [~/work/.git]`), and then it is a mount of its own
    with its code-bearing parts read-only. Then shell start-up files, autostart entries, folders on
    PATH (a venv's whole prefix for its `bin`), each where it exists."""
    granted = list(granted)
    pinned: list[str] = []
    guarded: list[str] = []
    path_folders = [os.path.normpath(f) for f in (search or "").split(os.pathsep) if os.path.isabs(f)]
    for folder in writable:
        for repository in [folder, *_subfolders(folder)]:
            for vcs, code in VCS_CODE.items():
                place = os.path.join(repository, vcs)
                if os.path.islink(place) or not os.path.lexists(place):
                    continue
                pinned.append(repository)
                if os.path.isdir(place) and any(within(path, place) for path in granted):
                    pinned.append(place)
                    guarded += [os.path.join(place, part) for part in code]
                else:
                    guarded.append(place)  # `.git` as a file too: where a worktree's repository is
        guarded += [os.path.join(home, item) for home in homes for item in START_UP
                    if within(os.path.join(home, item), folder)]
        for bin_folder in path_folders:
            if within(bin_folder, folder):
                prefix = os.path.dirname(bin_folder)
                venv = os.path.isfile(os.path.join(prefix, "pyvenv.cfg"))
                guarded.append(prefix if venv else bin_folder)  # a venv's `lib` runs at its next start too
    return pinned, [path for path in dict.fromkeys(guarded) if os.path.lexists(path) and not os.path.islink(path)]


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.path for _, entry in zip(range(VCS_SCAN), entries, strict=False)
                    if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def secret_paths(homes: tuple[str, ...], hermes_home: str) -> list[str]:
    """The secret stores of every home, and HERMES_HOME, each also where a symlink leads."""
    found: list[str] = []
    for place in [os.path.join(h, store) for h in homes for store in SECRET_STORES] + [hermes_home]:
        found.append(os.path.normpath(place))
        if os.path.islink(place):
            found.append(os.path.realpath(place))
    found.append(os.path.realpath(hermes_home))
    return list(dict.fromkeys(found))
