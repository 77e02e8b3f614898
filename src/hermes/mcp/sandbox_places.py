"""Places on the host as a stdio server's sandbox treats them (see `hermes.mcp.sandbox`).

Which folders are emptied (and where a symlinked one really is), which hold secrets, which hold
what runs later with the user's full rights (shell start-up files, repositories' own code, PATH
folders), and how a path is shown. Plain functions over paths; the only I/O is looking at the
file system.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
            ".emacs", ".emacs.d", ".pythonrc", ".config/pip", ".config/direnv", ".inputrc", ".bash_aliases",
            ".hgrc", ".vim", ".ipython", ".cargo/config", ".cargo/config.toml", ".config/hg", ".config/i3",
            ".config/sway", ".config/tmux", ".tmux.conf", ".config/plasma-workspace", ".local/share/systemd",
            ".local/share/dbus-1", ".local/share/bash-completion", ".local/share/nvim", ".config/fontconfig")

# Version-control folders run code of their own accord (git's hooks and config: `core.fsmonitor`,
# aliases, helpers; Mercurial's hgrc hooks). Each is mounted on its own, so it cannot be renamed
# away and replaced, and its code-bearing parts are read-only.
VCS_CODE = {".git": ("hooks", "config", "info", "commondir", "config.worktree", "modules", "worktrees"),
            ".hg": ("hgrc", "hgrc-not-shared"), ".svn": (), ".jj": ("repo/config.toml",), ".bzr": ("branch.conf",)}
# A writable folder is walked for repositories this deep, over at most this many folders (dependency
# trees and caches apart, see `_repository_dirs`); one that holds more is shared read-only.
VCS_SCAN_DEPTH = 8
VCS_SCAN_FOLDERS = 20_000
_NOT_SCANNED = frozenset({"node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".cache"})
_SKIPPED_FOLDERS = 50_000
# Places whose content the server never sees unless something in them is bound in on purpose.
EMPTIED = ("/tmp", "/var/tmp", "/run", "/home", "/root")
# System places visible read-only already; never a working folder to bind writable.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/proc", "/sys",
           "/dev", "/opt", "/var/lib", "/var/cache", "/srv", "/snap")
# Name lookups need these when `/run` is emptied and the network is shared.
RESOLVER_STATE = ("/run/systemd/resolve", "/run/NetworkManager", "/run/resolvconf")


def start_up_places(homes: Iterable[str]) -> list[str]:
    """Every start-up place of these homes, as named and where it really is (a dotfiles folder
    linked in, GNU stow style: `~/.bashrc` -> `~/dotfiles/bash/.bashrc`)."""
    found: dict[str, None] = {}
    for home in homes:
        for item in START_UP:
            place = os.path.join(home, item)
            found[place] = None
            found[os.path.realpath(place)] = None
    return list(found)


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


def links_along(path: str, hops: int = 16) -> list[str]:
    """Every symlink that resolving `path` passes through: each part of each hop of the chain
    (`~/.bashrc` -> `dotfiles/a` -> `dotfiles/current/.bashrc` with `current` a link too)."""
    found: list[str] = []
    pending = os.path.normpath(path)
    for _ in range(hops):
        link = first_link(pending)
        if link is None:
            break
        found.append(link)
        try:
            target = os.readlink(link)
        except OSError:
            break
        pending = os.path.normpath(os.path.join(os.path.dirname(link), target, os.path.relpath(pending, link)))
    return found


def link_folders(path: str) -> list[str]:
    """The folders holding the links on the way to `path`: no mount can keep a link from being
    replaced, so a folder holding one on the way to what runs later is kept read-only whole."""
    return [os.path.dirname(link) for link in links_along(path)]


def first_link(path: str) -> str | None:
    """The first component of an absolute `path` that is a symlink, if any."""
    return next(iter(links_in(path)), None)


def starts_up(path: str, homes: Iterable[str]) -> bool:
    """Whether `path` is (or is in) a shell start-up file, autostart folder or the like of a home."""
    return any(within(path, place) for place in start_up_places(homes))


def holds_home(folder: str, homes: Iterable[str]) -> bool:
    """Whether a folder holds a home, or a start-up place of one that does not exist yet (`~/.config`
    without its `autostart`): shared read-only whole, since no mount can guard what is not there."""
    path = os.path.realpath(os.path.expanduser(folder))
    homes = tuple(homes)
    return any(within(home, path) for home in homes) or any(
        within(place, path) and place != path and not os.path.lexists(place) for place in start_up_places(homes))


def above(folder: str, working: str, homes: tuple[str, ...]) -> bool:
    """Whether a folder named in the arguments holds the working folder or a home folder: shared
    read-only unless the user grants write (`sandbox.write`), since a home holds start-up files and
    repositories whose code runs later with the user's rights."""
    return (folder != working and within(working, folder)) or holds_home(folder, homes)


def trusted_link(link: str) -> bool:
    """A symlink the system made (`/home` -> `var/home`), not one a server could have planted in a
    folder it may write: only such a link may lead a writable share elsewhere."""
    parent = os.path.dirname(link)
    if parent == "/":
        return True
    try:
        made_by_root = all(os.lstat(path).st_uid == 0 for path in (link, parent))
        open_to_others = os.stat(parent).st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    except OSError:
        return False
    return inside_any(parent, SYSTEM) and made_by_root and not open_to_others


@dataclass
class Guards:
    """What the sandbox keeps in place inside the folders a server may write (see `guards`)."""

    pinned: list[str] = field(default_factory=list)  # mounts of their own: never renamed away
    guarded: list[str] = field(default_factory=list)  # read-only
    unscanned: list[str] = field(default_factory=list)  # too big to look through: read-only whole


@dataclass
class _Walk:
    """What one walk of a writable folder found."""

    repositories: list[tuple[str, str]] = field(default_factory=list)  # (repository folder, its own folder)
    complete: bool = True
    unreadable: list[str] = field(default_factory=list)  # folders it could not look into
    link_holders: list[str] = field(default_factory=list)  # folders holding a link on the way to a `.git`


def _repository_dirs(folder: str) -> _Walk:
    """The repositories under `folder`. A repository's own folder is its `.git` (`.hg`, …), where a
    `.git` file's `gitdir:` leads, or the folder itself when it is a bare git repository.

    Dependency trees and caches are big and hold a repository rarely: only their packages are
    looked at (`node_modules/pkg`, `node_modules/@scope/pkg`, `.venv/src/pkg` from `pip install -e
    git+…`), on a budget of their own. A folder the walk cannot read (a server may make one
    unreadable to hide a repository from the next start) is reported, to be kept read-only."""
    walk = _Walk()
    # (folder, levels still looked at below it: -1 for everything, as deep as the walk goes)
    level: list[tuple[str, int]] = [(folder, -1)]
    seen = skipped = 0
    for _ in range(VCS_SCAN_DEPTH + 1):
        below: list[tuple[str, int]] = []
        for current, left in level:
            if left < 0:
                seen += 1
            else:
                skipped += 1
            if seen > VCS_SCAN_FOLDERS or skipped > _SKIPPED_FOLDERS:
                walk.complete = False
                return walk
            if not os.access(current, os.R_OK | os.X_OK):
                walk.unreadable.append(current)
                continue
            walk.repositories += _vcs_of(current, walk.link_holders)
            if left == 0:
                continue
            try:
                with os.scandir(current) as entries:
                    below += [(e.path, _left_below(e.name, left))
                              for e in entries if e.is_dir(follow_symlinks=False) and e.name not in VCS_CODE]
            except OSError:
                walk.unreadable.append(current)
        level = below
        if not level:
            return walk
    walk.complete = not any(left < 0 for _, left in level)
    return walk


def _left_below(name: str, left: int) -> int:
    """How deep the walk goes below a folder named `name` inside one it goes `left` deep below."""
    if left < 0:
        return 1 if name in _NOT_SCANNED else -1
    return 1 if name == "src" or name.startswith("@") else 0


def _vcs_of(folder: str, link_holders: list[str]) -> list[tuple[str, str]]:
    """The repositories `folder` is (pairs as `_repository_dirs` says); the folders holding a link
    on the way to a repository's own folder go to `link_holders`."""
    own: list[tuple[str, str]] = []
    for vcs in VCS_CODE:
        place = os.path.join(folder, vcs)
        if os.path.islink(place):
            # A linked `.git`: no mount can keep the link itself from being replaced by the server's
            # own folder, so the repository is read-only whole (like a bare one), and where it leads too.
            own += [(folder, folder), (folder, os.path.realpath(place))]
            link_holders += link_folders(place)
            continue
        if not os.path.lexists(place):
            continue
        own.append((folder, place))
        if os.path.isfile(place):  # `gitdir: …`: a worktree's, or a separate git folder
            with contextlib.suppress(OSError, UnicodeDecodeError):
                with open(place, encoding="utf-8") as handle:
                    first = handle.read(4096).partition("\n")[0]
                if first.startswith("gitdir:"):  # where it really is, and every link on the way there
                    named = os.path.join(folder, first[7:].strip())
                    own.append((folder, os.path.realpath(named)))
                    link_holders += link_folders(named)
    if all(os.path.exists(os.path.join(folder, part)) for part in ("HEAD", "objects", "refs", "config")):
        own.append((folder, folder))  # a bare repository: its hooks run on the next push to it
    return own


def _vcs_root(path: str) -> str | None:
    """The repository's own folder `path` is, or is inside (`~/proj/.git/hooks` -> `~/proj/.git`)."""
    parts = path.split("/")
    for index in range(len(parts) - 1, 0, -1):
        if parts[index] in VCS_CODE:
            return "/".join(parts[:index + 1])
    return None


def guards(writable: Iterable[str], granted: Iterable[str], homes: tuple[str, ...], search: Iterable[str],
           protected: Iterable[str] = ()) -> Guards:
    """What to keep in place inside writable folders.

    A repository's folder (at any depth) is a mount of its own, so it cannot be renamed away and
    replaced by the server's; its own folder (`.git`, `.hg`, …, a separate or bare git folder) is
    read-only, hooks and config and all, unless the user granted write to that very folder
    (`sandbox.write: [~/proj/.git]`), and then it is a mount of its own with its code-bearing parts
    read-only. Then shell start-up files, autostart entries, folders on PATH (a venv's whole
    prefix for its `bin`; `search` as found, relative ones from each writable folder), and the
    `protected` paths (the user's own bubblewrap), each where it exists."""
    granted = list(granted)
    result = Guards()
    for folder in writable:
        root = _vcs_root(folder)
        if root is not None:  # a writable folder inside a repository's own folder
            if folder not in granted:
                result.guarded.append(folder)
            result.guarded += [os.path.join(root, part) for part in VCS_CODE[os.path.basename(root)]]
            continue
        walk = _repository_dirs(folder)
        if not walk.complete:
            result.unscanned.append(folder)
        result.guarded += walk.unreadable  # read-only mounts: neither changed back nor renamed away
        result.guarded += walk.link_holders  # even granted: a link on the way to a `.git` is never swapped
        for repository, own in walk.repositories:
            if repository != folder:
                result.pinned.append(repository)
            if own in granted and own != repository:
                result.pinned.append(own)
                result.guarded += [os.path.join(own, part) for part in VCS_CODE.get(os.path.basename(own), ())]
            elif own != repository or own not in granted:  # a bare repository is its own folder: whole
                result.guarded.append(own)
            else:
                result.guarded += [os.path.join(own, part) for part in VCS_CODE[".git"]]
        result.guarded += [place for place in start_up_places(homes) if within(place, folder)]
        result.guarded += [holder for home in homes for item in START_UP
                           for holder in link_folders(os.path.join(home, item)) if within(holder, folder)]
        for entry in search:
            bin_folder = os.path.realpath(entry if os.path.isabs(entry) else os.path.join(folder, entry))
            if within(bin_folder, folder):
                prefix = os.path.dirname(bin_folder)
                venv = os.path.isfile(os.path.join(prefix, "pyvenv.cfg"))
                result.guarded.append(prefix if venv else bin_folder)  # a venv's `lib` runs at its next start
        result.guarded += [path for path in protected if within(path, folder)]
    result.guarded = [path for path in dict.fromkeys(result.guarded)
                      if os.path.lexists(path) and not os.path.islink(path)]
    return result


def on_the_way(points: Iterable[str], writable: Iterable[str]) -> list[str]:
    """The folders between each point and the deepest writable folder it is in: kept mounts of their
    own, so that a server may not rename one away (and put a symlink in its place) while another
    server's sandbox is being built, and so land that sandbox's guards somewhere else."""
    bases = sorted(writable, key=len, reverse=True)
    found: dict[str, None] = {}
    for point in points:
        base = next((folder for folder in bases if within(point, folder) and folder != point), None)
        folder = os.path.dirname(point)
        while base is not None and folder != base and within(folder, base) and folder not in found:
            found[folder] = None
            folder = os.path.dirname(folder)
    return list(found)


def secret_paths(homes: tuple[str, ...], hermes_home: str) -> list[str]:
    """The secret stores of every home, and HERMES_HOME, each also where a symlink leads."""
    found: list[str] = []
    for place in [os.path.join(h, store) for h in homes for store in SECRET_STORES] + [hermes_home]:
        found.append(os.path.normpath(place))
        if os.path.islink(place):
            found.append(os.path.realpath(place))
    found.append(os.path.realpath(hermes_home))
    return list(dict.fromkeys(found))
