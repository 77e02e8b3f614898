"""Project scope: a `.hermes/config.yaml` that comes with a project, like Claude Code's `.mcp.json`.

hermes looks in the folder it runs in and its parents, up to the repository root (the first
folder with a `.git`); outside a repository, only the folder itself. The file's `mcp_servers`
add to the user's and override servers of the same name. It arrived with the project's files, so
its servers run only once the user has trusted the folder (the same trust record as project
skills: the folder's path and a digest of its `.hermes` files); until then they are listed as
`untrusted`, with the command that trusts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hermes.config.grants import all_grants, confined, held_back, in_project
from hermes.config.model import ServerConfig
from hermes.config.store import ConfigStore
from hermes.config.yamltext import read_yaml_text
from hermes.errors import ConfigError
from hermes.home import Home

PROJECT_CONFIG = Path(".hermes") / "config.yaml"


def find_project(start: Path, home: Home | None = None) -> Path | None:
    """The project folder whose `.hermes/config.yaml` applies from `start`, if any.

    The user's own HERMES_HOME is never a project (run from the home folder, `~/.hermes` would
    otherwise count twice).
    """
    try:
        folder = start.resolve()
        own = home.root.resolve() if home is not None else None
    except OSError:
        return None
    root = _repository_root(folder)
    # Inside a repository: from here up to its root (a project file further up belongs to someone
    # else); outside one, only the folder itself counts.
    for candidate in (folder, *folder.parents) if root is not None else (folder,):
        if _there(candidate / PROJECT_CONFIG) and (candidate / PROJECT_CONFIG).is_file() and \
                (candidate / ".hermes").resolve() != own:
            return candidate
        if candidate == root:
            return None
    return None


def _repository_root(folder: Path) -> Path | None:
    return next((c for c in (folder, *folder.parents) if _there(c / ".git")), None)


def _there(path: Path) -> bool:
    """Whether `path` exists; a folder hermes may not look into is said, not taken for "no project"
    (its servers would run confined or not at all, but the user should know why nothing shows)."""
    try:
        path.lstat()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ConfigError(f"cannot be read ({exc.strerror or exc}), so hermes cannot tell whether it holds "
                          f"a project's servers; run hermes from another folder or restore its permissions",
                          path=path.parent) from None
    return True


def project_folders(start: Path) -> list[Path]:
    """`start`, the project folder that applies from it and its repository's root: everything a
    project's files may lie in, seen from `start`."""
    folder = start.resolve()
    return list(dict.fromkeys(p for p in (folder, find_project(folder), _repository_root(folder)) if p is not None))


def project_root_for_edit(start: Path, home: Home) -> Path:
    """Where `--scope project` writes: the project found from `start`, else the repository root, else `start`."""
    folder = start.resolve()
    return find_project(start, home) or _repository_root(folder) or folder


@dataclass(frozen=True)
class ProjectServers:
    """A project's `.hermes/config.yaml`: its servers, and whether the user trusts the folder."""

    folder: Path
    path: Path
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    trusted: bool = False
    why_not: str | None = None  # why the folder is not trusted
    # What its servers ask beyond the folder (see `hermes.config.grants`), and whether the user
    # granted it; without the grant, `servers` holds the confined entries.
    asks: dict[str, list[str]] = field(default_factory=dict)
    granted: bool = False
    held: dict[str, str] = field(default_factory=dict)  # entries that wait for the grant, and why

    @property
    def trust_command(self) -> str:
        return f"hermes mcp trust {self.folder}"


def load_project(home: Home, start: Path) -> ProjectServers | None:
    """The project's servers from `start` (None without a project file); a broken file raises `ConfigError`."""
    folder = find_project(start, home)
    if folder is None:
        return None
    path = folder / PROJECT_CONFIG
    from hermes.config.trust import TrustKind, TrustStore  # only a folder with a project config needs it

    # One read: the text that is checked against the trust record is the text whose servers run.
    text = read_yaml_text(path)
    config = ConfigStore(home, path).parse(text)
    state = TrustStore(home, TrustKind.SERVERS).state(folder, text)
    asks = all_grants(config.mcp_servers, folder)
    granted = bool(asks) and TrustStore(home, TrustKind.GRANTS).state(folder, text).trusted
    import hashlib  # 2.5 ms to import: paid only where a project has its own config

    scope = "project-" + hashlib.sha256(str(folder).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    servers = {name: in_project(entry if granted else confined(entry, folder), scope)
               for name, entry in config.mcp_servers.items()}
    held = {} if granted else {name: why for name, entry in config.mcp_servers.items()
                               if (why := held_back(entry)) is not None}
    return ProjectServers(folder, path, servers, state.trusted, state.why_not, asks, granted, held)
