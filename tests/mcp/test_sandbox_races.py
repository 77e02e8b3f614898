"""What a server that may write a folder can do to another server's sandbox while it is being built.

A server renames folders in its writable folder (one atomic `rename`, or `renameat2` exchanging a
folder and a symlink) between the moment hermes plans a sibling's sandbox and the moment
bubblewrap binds it. These tests make that swap happen at exactly that moment, with the real
bubblewrap: bound by path, the sibling would get the user's repository writable.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hermes.config.launchers import fetch_only, warm_command
from hermes.config.sandbox import SandboxSettings
from hermes.home import Home
from hermes.mcp.sandbox import SandboxRequest, bwrap_argv
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
