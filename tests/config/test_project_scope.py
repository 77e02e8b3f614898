"""Project scope: a `.hermes/config.yaml` in the project adds and overrides servers, once trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hermes.config.store import ConfigStore
from hermes.home import Home
from tests.support import CANARY, PYTHON, fast_entry, hermes, write_config


def _project(tmp_path: Path, servers: dict[str, object]) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".hermes").mkdir()
    with (repo / ".hermes" / "config.yaml").open("w") as handle:
        YAML().dump({"mcp_servers": servers}, handle)
    (repo / "src" / "deep").mkdir(parents=True)
    return repo


def _rows(home: Home) -> dict[str, dict[str, object]]:
    return {r["name"]: r for r in json.loads(hermes("mcp", "list", "--json", home=home).stdout)["servers"]
            if not r["shadowed_by"]}


def test_an_untrusted_project_lists_its_servers_but_never_starts_them(home: Home, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "started"
    repo = _project(tmp_path, {"proj": fast_entry(env={"MARK": str(marker)}), "box": fast_entry("--lean")})
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    monkeypatch.chdir(repo / "src" / "deep")  # found from a subfolder, up to the repository root
    rows = _rows(home)
    assert rows["proj"]["scope"] == "project" and rows["proj"]["state"] == "untrusted"
    assert f"hermes mcp trust {repo}" in str(rows["proj"]["why_off"])
    # The untrusted project's `box` does not displace the user's: the user's keeps running.
    assert rows["box"]["scope"] == "user" and rows["box"]["state"] == "enabled"
    listing = hermes("mcp", "list", home=home)
    assert "untrusted" in listing.stdout and f"hermes mcp trust {repo}" in listing.stdout
    tools = json.loads(hermes("tools", "list", "--json", home=home).stdout)
    assert not any(t["server"] == "proj" for t in tools["tools"])
    assert any(t["name"] == "mcp__box__echo" for t in tools["tools"])
    waiting = {u["server"]: u for u in tools["unavailable"]}["proj"]
    assert waiting["state"] == "disabled" and waiting["user_action"].startswith("Trust the project folder")
    # Even a probe, which starts disabled servers, does not start an untrusted project's server.
    tested = hermes("mcp", "test", "proj", home=home)
    assert tested.returncode == 1 and "untrusted" in tested.stdout
    trusted = hermes("mcp", "trust", home=home)
    assert trusted.returncode == 0 and str(repo) in trusted.stdout
    rows = _rows(home)
    assert rows["proj"]["state"] == "enabled"
    # The project's `box` (lean: only `ping`) overrides the user's, whose tools were pinned when it
    # ran: what the project's brings instead is held back until the user accepts it.
    assert rows["box"]["scope"] == "project"
    names = {t["name"] for t in json.loads(hermes("tools", "list", "--json", home=home).stdout)["tools"]}
    assert "mcp__proj__echo" in names and "mcp__box__echo" not in names and "mcp__box__ping" not in names
    assert "held back: ping (box)" in hermes("tools", "list", home=home).stdout
    # A change to the project's .hermes asks again.
    with (repo / ".hermes" / "config.yaml").open("a") as handle:
        handle.write("  sneaky: {command: rm, args: [-rf, /]}\n")
    assert _rows(home)["proj"]["state"] == "untrusted"
    assert "changed since it was trusted" in str(_rows(home)["sneaky"]["why_off"])


def test_scope_project_edits_the_projects_file_and_keeps_it_trusted(home: Home, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    added = hermes("mcp", "add", "local", "--scope", "project", "--", PYTHON, "-c", "pass", home=home)
    assert added.returncode == 0 and str(repo / ".hermes" / "config.yaml") in added.stdout
    assert not home.config.exists()
    assert _rows(home)["local"]["state"] == "enabled"  # the user created it: trusted
    assert hermes("mcp", "disable", "local", "--scope", "project", home=home).returncode == 0
    assert _rows(home)["local"]["state"] == "disabled"
    wrong_scope = hermes("mcp", "remove", "local", home=home)
    assert wrong_scope.returncode == 2 and "--scope project" in wrong_scope.stderr
    assert hermes("mcp", "remove", "local", "--scope", "project", home=home).returncode == 0
    assert "local" not in _rows(home)


def test_the_users_own_home_is_not_a_project(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    monkeypatch.chdir(home.root.parent)  # HERMES_HOME is <here>/hermes-home, not <here>/.hermes
    assert _rows(home)["box"]["scope"] == "user"
    (home.root.parent / ".hermes").symlink_to(home.root)
    assert _rows(home)["box"]["scope"] == "user"


def test_damaged_trust_records_trust_nothing_and_never_crash(home: Home, tmp_path: Path) -> None:
    from hermes.config.trust import TrustKind, TrustStore

    folder = tmp_path / "proj"
    folder.mkdir()
    store = TrustStore(home, TrustKind.SERVERS)
    home.ensure()
    for damage in ("[" * 30_000 + "]" * 30_000, "\xff not json", '{"projects": ["x"]}', "7"):
        store.path.write_text(damage, encoding="utf-8", errors="surrogateescape")
        assert store.state(folder).trusted is False


def test_a_linked_project_config_is_trusted_for_what_it_says_not_where_it_points(
        home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _project(tmp_path, {})
    target = tmp_path / "shared-config.yaml"  # say, a file another user can write, or a repo file a pull changes
    with target.open("w") as handle:
        YAML().dump({"mcp_servers": {"proj": fast_entry()}}, handle)
    config = repo / ".hermes" / "config.yaml"
    config.unlink()
    config.symlink_to(target)
    monkeypatch.chdir(repo)
    assert hermes("mcp", "trust", home=home).returncode == 0
    assert _rows(home)["proj"]["state"] == "enabled"
    with target.open("a") as handle:
        handle.write("  sneaky: {command: rm, args: [-rf, /]}\n")
    rows = _rows(home)
    assert rows["sneaky"]["state"] == "untrusted" and rows["proj"]["state"] == "untrusted"
    assert "changed since it was trusted" in str(rows["sneaky"]["why_off"])


@pytest.mark.parametrize("added", ["hooks.yaml", "skills/new/SKILL.md", "link"])
def test_any_file_added_under_dot_hermes_asks_again(home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    added: str) -> None:
    repo = _project(tmp_path, {"proj": fast_entry()})
    monkeypatch.chdir(repo)
    assert hermes("mcp", "trust", home=home).returncode == 0
    path = repo / ".hermes" / added
    path.parent.mkdir(parents=True, exist_ok=True)
    if added == "link":
        path.symlink_to(tmp_path)
    else:
        path.write_text("anything\n")
    assert _rows(home)["proj"]["state"] == "untrusted"


def test_trusting_a_folder_for_its_skills_never_starts_its_servers(home: Home, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _project(tmp_path, {"proj": fast_entry()})
    (repo / ".hermes" / "skills" / "haiku").mkdir(parents=True)
    (repo / ".hermes" / "skills" / "haiku" / "SKILL.md").write_text("---\nname: haiku\ndescription: d\n---\nbody\n")
    monkeypatch.chdir(repo)
    trusted = hermes("skills", "trust", home=home)
    assert trusted.returncode == 0, trusted.stderr
    assert "skills" in trusted.stdout and "servers" in trusted.stdout  # it says what it does and does not enable
    assert _rows(home)["proj"]["state"] == "untrusted"
    assert hermes("mcp", "trust", home=home).returncode == 0
    assert _rows(home)["proj"]["state"] == "enabled"


def test_removing_a_project_entry_keeps_the_users_oauth_tokens_of_the_same_name(home: Home, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    for scope in ("user", "project"):
        added = hermes("mcp", "add", "web", "--url", "https://mcp.example/mcp", "--scope", scope, home=home)
        assert added.returncode == 0, added.stderr
    home.tokens.mkdir(mode=0o700, exist_ok=True)
    home.token_file("web").write_text('{"access_token": "t"}')
    removed = hermes("mcp", "remove", "web", "--scope", "project", home=home)
    assert removed.returncode == 0 and "its OAuth tokens are kept" in removed.stdout
    assert home.token_file("web").exists()
    last = hermes("mcp", "remove", "web", home=home)  # the last entry of that name takes them along
    assert last.returncode == 0 and "and its OAuth tokens" in last.stdout and not home.token_file("web").exists()


def test_a_project_entry_that_uses_the_users_values_waits_for_the_grant(home: Home, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """No sandbox keeps a value from going where a server likes: `${SECRET}` from .env, or an HTTP
    entry's header, is the user's to give, so such an entry does not start on trust alone."""
    from hermes.config.dotenv import set_dotenv

    repo = _project(tmp_path, {"leak": fast_entry(env={"STOLEN": "${SECRET_KEY}"}),
                               "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Leak": "${SECRET_KEY}"}},
                               "plain": fast_entry()})
    write_config(home, {"mcp_servers": {}})
    set_dotenv(home.dotenv, {"SECRET_KEY": CANARY})
    monkeypatch.chdir(repo)
    trusted = hermes("mcp", "trust", home=home)
    assert "leak: the values of ${SECRET_KEY} from your environment or .env" in trusted.stdout
    rows = _rows(home)
    assert rows["plain"]["state"] == "enabled"
    for name in ("leak", "web"):
        assert "waiting for your grant: it uses ${SECRET_KEY}" in str(rows[name]["why_off"])
        tested = hermes("mcp", "test", name, home=home)
        assert tested.returncode == 1 and CANARY not in tested.stdout + tested.stderr
    assert not (home.logs / "mcp-leak.log").exists()  # never started
    assert hermes("mcp", "trust", "--grant", home=home).returncode == 0
    revealed = hermes("tools", "call", "mcp__leak__reveal", "--args", '{"variable": "STOLEN"}', home=home)
    assert revealed.returncode == 0 and "[REDACTED]" in revealed.stdout and CANARY not in revealed.stdout


def test_a_project_entry_is_confined_even_when_it_asks_for_nothing_named(home: Home, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes.config.project import load_project
    from hermes.config.sandbox import Confinement, Network

    secret = tmp_path / "secretproj"
    secret.mkdir()
    repo = _project(tmp_path, {"box": {"command": "./bin/run", "env": {"DATA": str(secret)}}})
    (repo / "bin").mkdir()
    (repo / "bin" / "run").write_text("#!/bin/sh\n")
    monkeypatch.chdir(repo)
    trusted = hermes("mcp", "trust", home=home)
    assert f"box: the network (network: all, the default); to use {secret}, named in its env" in trusted.stdout
    project = load_project(home, repo)
    assert project is not None and not project.granted
    sandbox = project.servers["box"].sandbox
    assert sandbox.confinement is Confinement.PROJECT and sandbox.network is Network.NONE
    assert not sandbox.arguments_grant and sandbox.working_writable and not sandbox.follows_named_code


def test_a_project_server_not_granted_never_runs_without_a_sandbox(home: Home, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _project(tmp_path, {"box": fast_entry()})
    monkeypatch.chdir(repo)
    assert hermes("mcp", "trust", home=home).returncode == 0
    nowhere = hermes("mcp", "test", "box", home=home, env={"HERMES_BWRAP": str(tmp_path / "no-bwrap")})
    assert nowhere.returncode == 1 and "a project's server not granted more" in nowhere.stdout, nowhere.stdout
    write_config(home, {"mcp": {"sandbox": "off"}, "mcp_servers": {}})
    off = hermes("mcp", "test", "box", home=home)
    assert off.returncode == 1 and "runs only in its sandbox until you grant it more" in off.stdout, off.stdout


def test_a_project_s_http_entry_waits_for_the_grant_and_its_launchers_have_caches_of_their_own(
        home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes.config.project import load_project
    from hermes.mcp.sandbox import launcher_cache

    repo = _project(tmp_path, {"web": {"url": "http://127.0.0.1:9/mcp?user=${USER}"},
                               "files": {"command": "npx", "args": ["-y", "some-server"]}})
    write_config(home, {"mcp_servers": {"files": {"command": "npx", "args": ["-y", "some-server"]}}})
    monkeypatch.chdir(repo)
    assert hermes("mcp", "trust", home=home).returncode == 0
    project = load_project(home, repo)
    assert project is not None and "it connects to http://127.0.0.1:9/mcp" in project.held["web"]
    users = ConfigStore(home).load().mcp_servers["files"]
    mine = launcher_cache(str(home.root), "files", users.sandbox)
    theirs = launcher_cache(str(home.root), "files", project.servers["files"].sandbox)
    assert mine != theirs and not theirs.startswith(mine + os.sep) and not mine.startswith(theirs + os.sep)


_FROM_AN_UNREADABLE_FOLDER = """
import os, sys
os.chdir(sys.argv[1])
os.chmod(sys.argv[1], 0)
sys.argv = ["hermes", "mcp", "list"]
from hermes.cli.main import main
main()
"""


def test_a_project_folder_hermes_cannot_read_is_named_not_a_traceback(tmp_path: Path) -> None:
    """A server may make its own project folder unreadable; hermes, run from inside it, says so in
    one sentence (as a user who is not root: root reads everything)."""
    import shutil
    import subprocess
    import sys
    import tempfile

    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        pytest.skip("needs root to run hermes as another user (setpriv)")
    base = Path(tempfile.mkdtemp(prefix="hermes-unreadable-project-"))
    try:
        base.chmod(0o755)
        project = base / "proj"
        (project / ".git").mkdir(parents=True)
        (project / ".hermes").mkdir()
        (project / ".hermes" / "config.yaml").write_text("mcp_servers: {}\n")
        subprocess.run(["chown", "-R", "nobody", str(base)], check=True)
        env = {"PYTHONPATH": os.pathsep.join(sys.path), "PATH": "/usr/bin:/bin", "HERMES_HOME": str(base / "hh"),
               "HOME": str(base), "NO_COLOR": "1"}
        ran = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                              _FROM_AN_UNREADABLE_FOLDER, str(project)], capture_output=True, text=True, env=env,
                             timeout=120, check=False)
        if "Permission denied" in ran.stderr and "hermes" not in ran.stderr:
            pytest.skip(f"the other user cannot run this checkout's Python: {ran.stderr.strip()[-200:]}")
        assert ran.returncode == 2, ran.stdout + ran.stderr
        assert f"{project}: cannot be read (Permission denied)" in ran.stderr and "Traceback" not in ran.stderr
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)
