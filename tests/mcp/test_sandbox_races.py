"""What a server that may write a folder can do to another server's sandbox while it is being built.

A server renames folders in its writable folder (one atomic `rename`, or `renameat2` exchanging a
folder and a symlink) between the moment hermes plans a sibling's sandbox and the moment
bubblewrap binds it. These tests make that swap happen at exactly that moment, with the real
bubblewrap: bound by path, the sibling would get the user's repository writable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hermes.config.launchers import fetch_only, warm_command
from hermes.config.sandbox import SandboxSettings
from hermes.home import Home
from hermes.mcp.first_start import refused_for_a_project
from hermes.mcp.sandbox import Plan, SandboxRequest, bwrap_argv
from hermes.mcp.sandbox_hold import HeldBinds, SandboxChanged
from hermes.mcp.sandbox_support import support
from tests.support import PYTHON, SERVERS, hermes, needs_sandbox, write_config

pytestmark = needs_sandbox

SH = "/bin/sh"


def _request(tmp_path: Path) -> SandboxRequest:
    found = support({})
    assert found.bwrap is not None
    # The user shares a folder read-only, their repository in it (so it is there inside to land on).
    settings = SandboxSettings(read=(str(tmp_path / "shelf"),))
    return SandboxRequest(found.bwrap, settings, (), str(tmp_path / "hh"), by_fd=found.binds_by_fd)


def _user_repository(tmp_path: Path) -> Path:
    """The user's own repository, which servers may only read."""
    repository = tmp_path / "shelf" / "work"
    (repository / ".git" / "hooks").mkdir(parents=True)
    (repository / "README.md").write_text("the user's\n")
    return repository


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "user"), "PATH": os.environ["PATH"]}


def test_a_folder_swapped_for_a_symlink_after_the_check_is_never_what_gets_bound(tmp_path: Path) -> None:
    request = _request(tmp_path)
    if not request.by_fd:
        pytest.skip("this bubblewrap binds by path only (--bind-fd came in 0.7)")
    users = _user_repository(tmp_path)
    shared = tmp_path / "shared"
    (shared / "x1" / ".git" / "hooks").mkdir(parents=True)  # a repository the sibling made: pinned, guarded
    attempt = "echo planted > x1/PLANTED; echo '#!/bin/sh' > x1/.git/hooks/post-checkout; true"
    sandbox, held = request.prepare(SH, ["-c", attempt], _env(tmp_path), str(shared), True)
    with held:
        assert str(shared / "x1") in sandbox.pinned
        # The sibling swaps its folder for a symlink to the user's repository, after the check (a
        # relative one: it resolves inside the sandbox being built, where the repository is shown).
        os.rename(shared / "x1", shared / "moved")
        os.symlink(os.path.relpath(users, shared), shared / "x1")
        argv = [*bwrap_argv(request.bwrap, sandbox, str(shared), held=held), SH, "-c", attempt]
        ran = subprocess.run(argv, cwd=shared, pass_fds=held.fds, capture_output=True, text=True, timeout=60,
                             check=False)
    assert ran.returncode != 0 and "Race condition" in ran.stderr, ran.stderr  # bubblewrap saw it too
    assert sorted(p.name for p in users.iterdir()) == [".git", "README.md"]
    assert list((users / ".git" / "hooks").iterdir()) == []


def test_a_place_that_changed_since_the_plan_is_refused_by_name_and_planned_again(tmp_path: Path) -> None:
    users = _user_repository(tmp_path)
    shared = tmp_path / "shared"
    (shared / "x1" / ".git").mkdir(parents=True)
    request = _request(tmp_path)
    sandbox = request.plan_for(SH, [], _env(tmp_path), str(shared), True)
    os.rename(shared / "x1", shared / "moved")
    os.symlink(os.path.relpath(users, shared), shared / "x1")
    with pytest.raises(SandboxChanged, match=str(shared / "x1")):
        HeldBinds(sandbox.bound, by_fd=True)
    again, held = request.prepare(SH, [], _env(tmp_path), str(shared), True)
    with held:
        assert not any(str(users) in place for place in again.bound)
        assert str(shared / "moved") in again.pinned


def test_no_folder_on_the_way_to_a_repository_can_be_renamed_away(home: Home, tmp_path: Path) -> None:
    """Every folder between a writable folder and what is kept in place is a mount of its own: a
    server cannot rename `code` away and put a symlink there for a sibling's guards to land on."""
    work = tmp_path / "user" / "work"
    (work / "code" / "org" / "repo" / ".git" / "hooks").mkdir(parents=True)
    (work / "notes").mkdir()
    request = _request(tmp_path)
    sandbox = request.plan_for(PYTHON, [], _env(tmp_path), str(work), True)
    assert {str(work / "code"), str(work / "code" / "org"), str(work / "code" / "org" / "repo")} <= set(sandbox.pinned)
    assert str(work / "notes") not in sandbox.pinned  # a plain folder stays the server's to rename
    entry = {"command": PYTHON, "args": [str(SERVERS / "prober.py")], "cwd": str(work)}
    write_config(home, {"mcp_servers": {"prober": entry}})

    def rename(path: Path, to: Path) -> dict[str, object]:
        ran = hermes("tools", "call", "mcp__prober__rename", "--args", json.dumps({"path": str(path), "to": str(to)}),
                     "--json", home=home, env={"HOME": str(tmp_path / "user")})
        return dict(json.loads(ran.stdout))

    assert rename(work / "code", work / "elsewhere")["is_error"]
    assert rename(work / "code" / "org", work / "org2")["is_error"]
    assert not rename(work / "notes", work / "notes2")["is_error"]
    assert (work / "code" / "org" / "repo" / ".git").is_dir() and (work / "notes2").is_dir()


def test_repositories_inside_dependency_folders_keep_their_code_read_only(tmp_path: Path) -> None:
    """`pip install -e git+…` clones into `.venv/src/pkg`; a git dependency may keep its `.git`."""
    work = tmp_path / "user" / "work"
    for place in (work / ".venv" / "src" / "pkg", work / "node_modules" / "dep"):
        (place / ".git" / "hooks").mkdir(parents=True)
    (work / "node_modules" / "other" / "lib").mkdir(parents=True)
    sandbox = _request(tmp_path).plan_for(PYTHON, [], _env(tmp_path), str(work), True)
    for place in (work / ".venv" / "src" / "pkg", work / "node_modules" / "dep"):
        assert not sandbox.writable_path(str(place / ".git" / "hooks" / "pre-commit"))
        assert str(place) in sandbox.pinned
    assert sandbox.writable_path(str(work / "node_modules" / "other" / "lib" / "x.js"))


def test_a_project_s_first_fetch_runs_nothing_of_the_project_s() -> None:
    """The launcher puts the package's programs first on PATH: a package's program named `node` or
    `python` would run with the network. A project's fetch ends in the system's `true`, by path."""
    for command, args in (("npx", ["-y", "evil-pkg", "stdio"]), ("uvx", ["evil-pkg"])):
        warm = warm_command(command, args)
        assert warm is not None
        fetch = fetch_only(warm)
        assert fetch[:-1] == warm[:-3] and os.path.isabs(fetch[-1]) and os.path.basename(fetch[-1]) == "true"


def _plan(tmp_path: Path, work: Path, settings: SandboxSettings | None = None) -> Plan:
    found = support({})
    assert found.bwrap is not None
    request = SandboxRequest(found.bwrap, settings or SandboxSettings(), (), str(tmp_path / "hh"))
    return request.plan_for(PYTHON, [], _env(tmp_path), str(work), True)


def test_a_scan_cut_short_inside_dependency_folders_shares_the_folder_read_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server could fill a cache folder with folders until the look into dependency folders
    stops: then the repository behind them would go unguarded, so the whole folder is read-only."""
    from hermes.mcp import sandbox_places

    work = tmp_path / "user" / "work"
    (work / ".venv" / "src" / "pkg" / ".git" / "hooks").mkdir(parents=True)
    for index in range(30):
        (work / "__pycache__" / str(index)).mkdir(parents=True)
    monkeypatch.setattr(sandbox_places, "_SKIPPED_FOLDERS", 20)
    sandbox = _plan(tmp_path, work)
    assert str(work) in sandbox.unscanned and not sandbox.writable_path(str(work / ".venv" / "src" / "pkg" / ".git"))


def test_a_bare_repository_is_read_only_whole_and_a_gitdir_through_a_link_is_guarded_where_it_is(
        tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--bare", str(work / "backup.git")], check=True)
    (work / "real" / "g" / "hooks").mkdir(parents=True)
    (work / "lnk").symlink_to("real")
    (work / "checkout").mkdir()
    (work / "checkout" / ".git").write_text("gitdir: ../lnk/g\n")
    request = _request(tmp_path)
    sandbox, held = request.prepare(PYTHON, [], _env(tmp_path), str(work), True)  # no SandboxChanged
    held.close()
    for inside in ("commondir", "objects/info/alternates", "hooks/pre-receive"):
        assert not sandbox.writable_path(str(work / "backup.git" / inside))
    assert not sandbox.writable_path(str(work / "real" / "g" / "hooks" / "post-checkout"))
    # `lnk` itself could be re-pointed at the server's own git folder: the folder holding it stays put.
    assert not sandbox.writable_path(str(work / "lnk"))


def test_a_folder_that_would_hold_a_start_up_place_is_never_writable_whole(tmp_path: Path) -> None:
    """`~/.config` granted, without its `autostart` or `git/config`: a server could create them, and
    no mount can guard what is not there."""
    config = tmp_path / "user" / ".config"
    (config / "app").mkdir(parents=True)
    settings = SandboxSettings(write=(str(config), str(config / "app")))
    (tmp_path / "user" / "elsewhere").mkdir()
    sandbox = _plan(tmp_path, tmp_path / "user" / "elsewhere", settings)
    assert not sandbox.writable_path(str(config / "autostart" / "evil.desktop"))
    assert not sandbox.writable_path(str(config / "git" / "config"))
    assert sandbox.writable_path(str(config / "app" / "settings.json"))


_AS_NOBODY = """
import json, os, sys
from hermes.config.sandbox import SandboxSettings
from hermes.mcp.sandbox import plan
work = sys.argv[1]
sandbox = plan(sys.executable, [], env={"HOME": os.path.dirname(work), "PATH": "/usr/bin:/bin"}, cwd=work,
               configured_cwd=True, roots=(), settings=SandboxSettings(), hermes_home=sys.argv[2])
print(json.dumps({"writable": sandbox.writable_path(os.path.join(work, "proj", ".git", "config")),
                  "guarded": list(sandbox.guarded)}))
"""


def test_a_folder_a_server_made_unreadable_is_kept_read_only(tmp_path: Path) -> None:
    """A server cannot write a repository's `.git`, so it makes the repository unreadable: the next
    start's walk cannot see it. Such a folder is kept read-only (as a user who is not root)."""
    setpriv = next((p for p in ("/usr/bin/setpriv", "/bin/setpriv") if os.access(p, os.X_OK)), None)
    if os.getuid() != 0 or setpriv is None:
        pytest.skip("needs root to run the walk as another user (setpriv)")
    base = Path(tempfile.mkdtemp(prefix="hermes-unreadable-"))
    try:
        base.chmod(0o755)
        work = base / "user" / "work"
        (work / "proj" / ".git").mkdir(parents=True)
        (work / "proj" / ".git" / "config").write_text("[core]\n")
        subprocess.run(["chown", "-R", "65534:65534", str(base / "user")], check=True)
        (work / "proj").chmod(0)
        ran = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON, "-c", _AS_NOBODY,
                              str(work), str(base / "hh")], capture_output=True, text=True, timeout=60, check=False,
                             env={"PYTHONPATH": os.pathsep.join(sys.path), "PATH": "/usr/bin:/bin"})
        if ran.returncode != 0 and "Permission denied" in ran.stderr:
            pytest.skip(f"the other user cannot run this checkout's Python: {ran.stderr.strip()[-200:]}")
        assert ran.returncode == 0, ran.stderr
        found = json.loads(ran.stdout)
        assert str(work / "proj") in found["guarded"] and not found["writable"]
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def test_a_project_fetches_only_with_the_users_own_npx(tmp_path: Path) -> None:
    """A launcher the project names by path or keeps in its folder is the project's code; uv runs
    the installed environment's Python (its `.pth` files): neither runs with the network ungranted."""
    project = tmp_path / "proj"
    (project / "node_modules" / ".bin").mkdir(parents=True)
    own_npx = project / "node_modules" / ".bin" / "npx"
    own_npx.write_text("#!/bin/sh\n")
    own_npx.chmod(0o755)
    by_path = refused_for_a_project([str(project / "tools" / "uvx"), "--from", "x", "true"], "/usr/bin", [str(project)])
    assert by_path is not None and "named by path" in by_path and "hermes mcp trust --grant" in by_path
    uv = refused_for_a_project(["uvx", "--from", "x", "true"], "/usr/bin", [str(project)])
    assert uv is not None and "runs its code" in uv
    inside = refused_for_a_project(["npx", "-y", "--package=x", "--", "true"], f"{own_npx.parent}:/usr/bin",
                                   [str(project)])
    assert inside is not None and "project's own folder" in inside
    relative = refused_for_a_project(["npx", "-y", "--package=x", "--", "true"], "node_modules/.bin", [str(project)])
    assert relative is None  # a relative PATH entry is never looked in (and the fetch's PATH drops it)


def test_start_up_files_linked_in_from_a_dotfiles_folder_stay_read_only_there(tmp_path: Path) -> None:
    """GNU stow style: `~/.bashrc` and `~/.config/git` link into `~/dotfiles`, where a server works."""
    user, dotfiles = tmp_path / "user", tmp_path / "user" / "dotfiles"
    (dotfiles / "bash").mkdir(parents=True)
    (dotfiles / "bash" / ".bashrc").write_text("# the user's\n")
    (dotfiles / "git").mkdir()
    (dotfiles / "git" / "config").write_text("[user]\n")
    (user / ".config").mkdir()
    (user / ".bashrc").symlink_to("dotfiles/bash/.bashrc")
    (user / ".config" / "git").symlink_to("../dotfiles/git")
    sandbox = _plan(tmp_path, dotfiles)
    assert not sandbox.writable_path(str(dotfiles / "bash" / ".bashrc"))
    assert not sandbox.writable_path(str(dotfiles / "git" / "config"))
    assert sandbox.writable_path(str(dotfiles / "README.md"))


def test_a_repository_whose_git_folder_is_a_link_is_read_only_whole(tmp_path: Path) -> None:
    """No mount keeps a `.git` link from being replaced by the server's own `.git`."""
    work = tmp_path / "user" / "work"
    (work / "store" / "repo.git" / "hooks").mkdir(parents=True)
    (work / "repo").mkdir()
    (work / "repo" / ".git").symlink_to("../store/repo.git")
    sandbox = _plan(tmp_path, work)
    assert not sandbox.writable_path(str(work / "repo" / "file.txt"))
    assert not sandbox.writable_path(str(work / "store" / "repo.git" / "config"))
    assert sandbox.writable_path(str(work / "notes.md"))


def test_a_granted_local_share_where_a_user_unit_could_appear_is_read_only(tmp_path: Path) -> None:
    share = tmp_path / "user" / ".local" / "share"
    (share / "applications").mkdir(parents=True)
    (share / "myapp").mkdir()
    (tmp_path / "user" / "elsewhere").mkdir()
    settings = SandboxSettings(write=(str(share), str(share / "myapp")))
    sandbox = _plan(tmp_path, tmp_path / "user" / "elsewhere", settings)
    for place in ("systemd/user/evil.service", "dbus-1/services/x.service", "bash-completion/completions/git"):
        assert not sandbox.writable_path(str(share / place))
    assert sandbox.writable_path(str(share / "myapp" / "data.db"))


def test_a_project_s_folders_are_left_off_the_fetch_s_path_from_any_subfolder(tmp_path: Path) -> None:
    """direnv puts `proj/node_modules/.bin` on PATH by absolute path; hermes runs from `proj/src`."""
    from hermes.config.project import project_folders
    from hermes.mcp.first_start import fetch_path

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    own = project / "node_modules" / ".bin"
    own.mkdir(parents=True)
    (own / "npx").write_text("#!/bin/sh\n")
    (own / "npx").chmod(0o755)
    folders = [str(p) for p in project_folders(project / "src")]
    assert str(project) in folders
    search = fetch_path(f"{own}:/usr/bin:relative/bin", folders)
    assert search.split(":") == ["/usr/bin"]
    assert refused_for_a_project(["npx", "-y", "--package=x", "--", "true"], f"{own}:/usr/bin", folders) is not None


def test_every_link_on_the_way_to_a_start_up_file_or_a_git_folder_stays_put(tmp_path: Path) -> None:
    """A link in the middle of a chain (`~/.bashrc` -> `dotfiles/a` -> `dotfiles/b/.bashrc`, a linked
    `current` folder, `proj/.git` -> `../gl` -> elsewhere) could be replaced by the server: the
    folder holding it is read-only."""
    user = tmp_path / "user"
    dotfiles, work = user / "dotfiles", user / "work"
    (dotfiles / "b").mkdir(parents=True)
    (dotfiles / "b" / ".bashrc").write_text("# the user's\n")
    (dotfiles / "a").symlink_to("b/.bashrc")
    (user / ".bashrc").symlink_to("dotfiles/a")
    (dotfiles / "v2").mkdir()
    (dotfiles / "v2" / ".profile").write_text("# the user's\n")
    (dotfiles / "current").symlink_to("v2")
    (user / ".profile").symlink_to("dotfiles/current/.profile")
    assert not _plan(tmp_path, dotfiles).writable_path(str(dotfiles / "a"))
    assert not _plan(tmp_path, dotfiles).writable_path(str(dotfiles / "current"))
    outside = tmp_path / "outside" / "proj.git"
    (outside / "hooks").mkdir(parents=True)
    (work / "proj").mkdir(parents=True)
    (work / "gl").symlink_to(outside)
    (work / "proj" / ".git").symlink_to("../gl")
    sandbox = _plan(tmp_path, work)
    assert not sandbox.writable_path(str(work / "gl")) and not sandbox.writable_path(str(work / "proj" / "x"))
