"""Plugin installation with real git repositories: sources, pins, the gate, the transaction."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hermes.apps.declaration import EXTENSION_KEY
from hermes.config.store import ConfigStore
from hermes.home import Home
from hermes.plugins import install as installer
from hermes.plugins.install import PluginInstallError, install, resolve_source
from hermes.plugins.manifest import PluginError
from tests.hosts import FixtureHost
from tests.support import PYTHON, hermes


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def plugin_files(name: str = "acme", version: str = "1.0.0", declaration: dict[str, Any] | None = None,
                 extra: dict[str, str] | None = None) -> dict[str, str]:
    manifest: dict[str, Any] = {"name": name, "version": version, "title": "Acme Tool", "description": "d"}
    if declaration is not None:
        manifest["extensions"] = {EXTENSION_KEY: {"servers": {"acme": declaration}}}
    files = {
        "plugin.json": json.dumps(manifest),
        "mcp.json": json.dumps({"mcpServers": {"acme": {"type": "stdio", "command": "uvx",
                                                        "args": ["acme-mcp", "--transport", "stdio"]}}}),
        "skills/acme-flow/SKILL.md": "---\nname: acme-flow\ndescription: Drive Acme.\n---\nSteps...\n",
    }
    files.update(extra or {})
    return files


def make_repo(path: Path, *versions: dict[str, str]) -> list[str]:
    """A real git repository with one commit per file set; returns the commit ids."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    commits = []
    for files in versions:
        for existing in path.iterdir():
            if existing.name != ".git":
                shutil.rmtree(existing) if existing.is_dir() else existing.unlink()
        for relative, text in files.items():
            (path / relative).parent.mkdir(parents=True, exist_ok=True)
            (path / relative).write_text(text)
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", "version")
        commits.append(_git(path, "rev-parse", "HEAD"))
    return commits


def linux_host(tmp_path: Path) -> FixtureHost:
    return FixtureHost("linux", tmp_path / "host")


APP_DECLARATION = {"app": {"linux": {"presence": "executable", "location": "/opt/acme/bin/acme",
                                     "version": {"kind": "dpkg", "package": "acme"}}},
                   "requires": {"app": True, "min_version": "5.1"}}


def _state(home: Home) -> dict[str, Any]:
    entries = sorted(p.name for p in home.plugins.iterdir()) if home.plugins.exists() else []
    version = None
    if (home.plugins / "acme" / "plugin.json").exists():
        version = json.loads((home.plugins / "acme" / "plugin.json").read_text())["version"]
    return {"entries": [e for e in entries if e != ".lock"], "version": version}


def test_install_from_file_url_local_repo_and_folder_with_ref(home: Home, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    first, second = make_repo(repo, plugin_files(version="1.0.0"), plugin_files(version="2.0.0"))
    result = install(home, f"file://{repo}", host=linux_host(tmp_path))
    assert (result.name, result.version, result.commit, result.replaced) == ("acme", "2.0.0", second, False)
    assert not (home.plugins / "acme" / ".git").exists()
    provenance = json.loads((home.plugins / "acme" / ".hermes-install.json").read_text())
    assert provenance["commit"] == second and provenance["source"] == "git"
    older = install(home, str(repo), ref=first, host=linux_host(tmp_path))
    assert (older.version, older.commit, older.replaced) == ("1.0.0", first, True)
    folder = tmp_path / "folder"
    folder.mkdir()
    for relative, text in plugin_files(version="3.0.0").items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    assert install(home, str(folder), host=linux_host(tmp_path)).version == "3.0.0"
    with pytest.raises(PluginInstallError, match="plain folder, not a git repository"):
        install(home, str(folder), ref="main", host=linux_host(tmp_path))
    with pytest.raises(PluginInstallError, match="'nope' is not a commit, branch or tag"):
        install(home, str(repo), ref="nope", host=linux_host(tmp_path))
    assert _state(home) == {"entries": ["acme"], "version": "3.0.0"}


def _user_catalog(home: Home, entries: list[dict[str, Any]]) -> None:
    (home.root / "plugin-catalog.json").write_text(json.dumps({"schema": 1, "plugins": entries}))


def test_catalog_install_takes_the_pin_not_the_branch_tip_and_update_repins(home: Home, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    first, second = make_repo(repo, plugin_files(version="1.0.0"), plugin_files(version="2.0.0"))
    entry = {"name": "acme", "repo": f"file://{repo}", "sha": first, "version": "1.0.0", "title": "Acme",
             "description": "Acme tools.", "platforms": ["linux", "macos"]}
    _user_catalog(home, [entry])
    result = install(home, "acme", host=linux_host(tmp_path))
    assert (result.version, result.commit) == ("1.0.0", first)
    catalog = hermes("plugins", "catalog", "--json", home=home)
    states = {r["name"]: r["state"] for r in json.loads(catalog.stdout)["catalog"]}
    assert states["acme"] == "installed (disabled)" and states["blender"] == "available"
    from hermes.plugins.lifecycle import update

    assert update(home, "acme", linux_host(tmp_path)) is None
    _user_catalog(home, [{**entry, "sha": second, "version": "2.0.0"}])
    assert "update available" in hermes("plugins", "catalog", home=home).stdout
    moved = update(home, "acme", linux_host(tmp_path))
    assert moved is not None and (moved.version, moved.commit) == ("2.0.0", second)
    with pytest.raises(PluginInstallError, match="pinned to"):
        install(home, "acme", ref="main", host=linux_host(tmp_path))


def test_platform_refusal_happens_before_any_git_process(home: Home, tmp_path: Path) -> None:
    log = tmp_path / "git-calls"
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    real_git = shutil.which("git")
    (fake_bin / "git").write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real_git}" "$@"\n')
    (fake_bin / "git").chmod(0o755)
    _user_catalog(home, [{"name": "winonly", "repo": f"file://{tmp_path}/none", "sha": "a" * 40, "version": "1",
                          "title": "W", "description": "d", "platforms": ["windows", "macos"]}])
    result = hermes("plugins", "install", "winonly", home=home,
                    env={"PATH": f"{fake_bin}:{os.environ['PATH']}"})
    assert result.returncode == 1
    assert result.stderr.strip() == ("Error: Plugin 'winonly' is unavailable on linux; supported platforms: "
                                     "windows, macos.")
    assert not log.exists()
    assert not home.plugins.exists() or [p.name for p in home.plugins.iterdir()] == []


def test_app_gate_refusals_and_nothing_left_behind(home: Home, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, plugin_files(declaration=APP_DECLARATION))
    host = linux_host(tmp_path)
    with pytest.raises(PluginInstallError) as info:
        install(home, str(repo), host=host)
    assert str(info.value) == "Plugin 'acme' server 'acme' is unavailable: missing_app, path /opt/acme/bin/acme."
    host.make_file("/opt/acme/bin/acme")
    host.make_file("/var/lib/dpkg/status", "Package: acme\nStatus: install ok installed\nVersion: 4.2-1\n")
    with pytest.raises(PluginInstallError) as info:
        install(home, str(repo), host=host)
    assert str(info.value) == "Plugin 'acme' server 'acme' is unavailable: version_too_old, found version 4.2."
    with pytest.raises(PluginInstallError) as info:
        install(home, str(repo), host=FixtureHost("darwin", tmp_path / "mac"))
    assert str(info.value) == "Plugin 'acme' server 'acme' is unavailable: unsupported_os."
    assert _state(home)["entries"] == []
    host.make_file("/var/lib/dpkg/status", "Package: acme\nStatus: install ok installed\nVersion: 5.1.0-1\n")
    assert install(home, str(repo), host=host).name == "acme"


def test_invalid_plugin_is_refused_and_replacing_keeps_the_old_one(home: Home, tmp_path: Path) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    make_repo(good, plugin_files(version="1.0.0"))
    make_repo(bad, plugin_files(version="9.9.9", extra={"mcp.json": json.dumps(
        {"mcpServers": {"acme": {"type": "stdio", "command": "/usr/bin/evil"}}})}))
    install(home, str(good), host=linux_host(tmp_path))
    with pytest.raises(Exception, match=r"must be a bare name or \./relative"):
        install(home, str(bad), host=linux_host(tmp_path))
    assert _state(home) == {"entries": ["acme"], "version": "1.0.0"}


STEPS = ["clone", "checkout", "validate", "gate", "provenance", "swap-aside", "swap-in"]


@pytest.mark.parametrize("step", STEPS)
def test_sigkill_at_every_step_leaves_old_or_new_never_partial(home: Home, tmp_path: Path, step: str) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    make_repo(old, plugin_files(version="1.0.0"))
    make_repo(new, plugin_files(version="2.0.0"))
    install(home, str(old), host=linux_host(tmp_path))
    killed = subprocess.run([PYTHON, "-m", "hermes", "plugins", "install", str(new)], capture_output=True, text=True,
                            env={**os.environ, "HERMES_HOME": str(home.root),
                                 "HERMES_TEST_KILL_AFTER_STEP": step}, timeout=120)
    assert killed.returncode == -9
    # Right after the kill: whatever is in place under the plugin's name is whole.
    if (home.plugins / "acme").exists():
        assert _state(home)["version"] in ("1.0.0", "2.0.0")
    listing = hermes("plugins", "list", "--json", home=home)  # the next run recovers
    assert listing.returncode == 0
    state = _state(home)
    assert state["entries"] == ["acme"], state
    assert state["version"] == ("2.0.0" if step == "swap-in" else "1.0.0")
    assert json.loads(listing.stdout)["plugins"][0]["version"] == state["version"]


@pytest.mark.parametrize("step", STEPS)
def test_exception_at_every_step_restores_at_once(home: Home, tmp_path: Path, step: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    make_repo(old, plugin_files(version="1.0.0"))
    make_repo(new, plugin_files(version="2.0.0"))
    install(home, str(old), host=linux_host(tmp_path))

    def fail(at: str) -> None:
        if at == step:
            raise KeyboardInterrupt

    monkeypatch.setattr(installer, "_checkpoint", fail)
    with pytest.raises(KeyboardInterrupt):
        install(home, str(new), host=linux_host(tmp_path))
    assert _state(home) == {"entries": ["acme"], "version": "2.0.0" if step == "swap-in" else "1.0.0"}


def test_cli_lifecycle_list_json_enable_disable_remove(home: Home, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (commit,) = make_repo(repo, plugin_files())
    installed = hermes("plugins", "install", f"file://{repo}", "--enable", home=home)
    assert installed.returncode == 0, installed.stderr
    assert f"at {commit[:12]}" in installed.stdout and "hermes mcp reload" in installed.stdout
    listing = json.loads(hermes("plugins", "list", "--json", home=home).stdout)["plugins"]
    assert listing == [{
        "name": "acme", "version": "1.0.0", "title": "Acme Tool", "enabled": True, "source": f"file://{repo}",
        "source_kind": "git", "commit": commit, "catalog_pin": None,
        "installed_at": listing[0]["installed_at"], "servers": [
            {"name": "acme", "availability": "no_requirements", "version": None, "path": None}],
        "error": None}]
    assert ConfigStore(home).load().plugins.enabled == ("acme",)
    assert hermes("plugins", "disable", "acme", home=home).returncode == 0
    assert ConfigStore(home).load().plugins.enabled == ()
    assert hermes("plugins", "enable", "nope", home=home).returncode == 3
    assert hermes("plugins", "remove", "nope", home=home).returncode == 3
    assert hermes("plugins", "remove", "acme", home=home).returncode == 0
    assert _state(home)["entries"] == []
    assert "No plugins installed" in hermes("plugins", "list", home=home).stdout


def test_missing_git_and_bad_sources_are_clear(home: Home, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    result = hermes("plugins", "install", "file:///nowhere/repo.git", home=home, env={"PATH": str(empty)})
    assert result.returncode == 1 and "git is not installed or not on PATH" in result.stderr
    unknown = hermes("plugins", "install", "not a source", home=home)
    assert unknown.returncode == 1 and "is not a catalog entry, an owner/repo, a git URL or a folder" in unknown.stderr


def test_github_shorthand_resolves_to_the_catalog_pin(home: Home) -> None:
    source = resolve_source(home, "NousResearch/hermes-plugin-blender", None)
    assert source.kind == "catalog" and source.ref == "8aab816ce6577eb792a256b51777cbb4cd6523f0"
    other = resolve_source(home, "someone/their-plugin", "v2")
    assert (other.kind, other.location, other.ref) == ("git", "https://github.com/someone/their-plugin.git", "v2")
    blender = json.loads(hermes("plugins", "catalog", "--json", home=home).stdout)["catalog"][0]
    assert blender["name"] == "blender" and "arbitrary Python" in blender["description"]
    assert "not a sandbox" in blender["description"] and blender["platforms"] == ["windows", "macos", "linux"]


def test_validate_reports_availability_and_install_deps(home: Home, tmp_path: Path) -> None:
    folder = tmp_path / "plugin"
    for relative, text in plugin_files(declaration=APP_DECLARATION).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    result = hermes("plugins", "validate", str(folder), home=home)
    assert result.returncode == 0
    assert "server availability: acme — missing_app, path /opt/acme/bin/acme" in result.stdout
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    calls = tmp_path / "calls"
    (fake_bin / "uvx").write_text(f'#!/bin/sh\necho "uvx $@" >> "{calls}"\necho downloading >&2\nexit 0\n')
    (fake_bin / "uvx").chmod(0o755)
    warmed = hermes("plugins", "validate", str(folder), "--install-deps", home=home,
                    env={"PATH": f"{fake_bin}:{os.environ['PATH']}"})
    assert warmed.returncode == 0, warmed.stdout + warmed.stderr
    # The same package, with a command that does nothing: exit 0 means the package is healthy.
    assert calls.read_text() == "uvx --from acme-mcp python -c pass\n"
    assert "deps acme: ok" in warmed.stdout
    (fake_bin / "uvx").write_text("#!/bin/sh\necho 'no network' >&2\nexit 2\n")
    failing = hermes("plugins", "validate", str(folder), "--install-deps", home=home,
                     env={"PATH": f"{fake_bin}:{os.environ['PATH']}"})
    assert failing.returncode == 1 and "deps acme: FAILED" in failing.stdout and "no network" in failing.stdout
    (folder / "plugin.json").write_text(json.dumps({"name": "Bad Name"}))
    invalid = hermes("plugins", "validate", str(folder), home=home)
    assert invalid.returncode == 2 and "name: must be 1-64 lowercase" in invalid.stderr


def test_skills_are_offered_only_while_their_app_is_available(home: Home, tmp_path: Path) -> None:
    declaration = {"app": {"linux": {"presence": "executable", "location": "$HERMES_HOME/apps/acme"}},
                   "requires": {"app": True}}
    files = plugin_files(declaration=declaration, extra={
        "skills/needs-app/SKILL.md": "---\nname: needs-app\ndescription: Uses Acme.\nrequires_apps: [acme]\n---\n"})
    (home.root / "apps").mkdir()
    (home.root / "apps" / "acme").write_text("")
    (home.root / "apps" / "acme").chmod(0o755)  # presence: executable means a program
    repo = tmp_path / "repo"
    make_repo(repo, files)
    assert hermes("plugins", "install", str(repo), "--enable", home=home).returncode == 0
    skills = {s["name"]: s for s in json.loads(hermes("skills", "list", "--json", home=home).stdout)["skills"]}
    assert skills["acme-flow"]["loaded"] and skills["needs-app"]["loaded"]
    (home.root / "apps" / "acme").unlink()
    skills = {s["name"]: s for s in json.loads(hermes("skills", "list", "--json", home=home).stdout)["skills"]}
    assert skills["acme-flow"]["loaded"] and not skills["needs-app"]["loaded"]
    assert "Acme Tool is not installed" in skills["needs-app"]["why_not"]


@pytest.mark.anyio
async def test_enabling_while_a_session_runs_takes_effect_on_reload(home: Home, tmp_path: Path) -> None:
    from hermes.session.core import Session
    from tests.support import SERVERS

    repo = tmp_path / "repo"
    files = plugin_files(extra={"mcp.json": json.dumps({"mcpServers": {"lean": {
        "type": "stdio", "command": "./serve", "args": ["${PLUGIN_ROOT}/server.py", "--lean"]}}}),
        "server.py": (SERVERS / "fast.py").read_text(),
        "serve": f'#!/bin/sh\nexec "{PYTHON}" "$@"\n'})
    make_repo(repo, files)
    (repo / "serve").chmod(0o755)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "exec bit")
    install(home, str(repo), host=linux_host(tmp_path))
    async with Session(home) as session:
        assert "mcp__lean__ping" not in session.surface().tools
        assert hermes("plugins", "enable", "acme", home=home).returncode == 0
        assert "mcp__lean__ping" not in session.surface().tools  # not before a reload
        report = await session.reload()
        assert report.added == ["lean"] and "mcp__lean__ping" in session.surface().tools


def test_update_and_catalog_name_refusals(home: Home, tmp_path: Path) -> None:
    from hermes.plugins.lifecycle import NoSuchPlugin, update

    repo = tmp_path / "repo"
    (commit,) = make_repo(repo, plugin_files(name="acme"))
    install(home, str(repo), host=linux_host(tmp_path))
    with pytest.raises(PluginInstallError, match="was not installed from the catalog; install it again from its "
                                                 "source with --ref"):
        update(home, "acme", linux_host(tmp_path))
    with pytest.raises(NoSuchPlugin):
        update(home, "ghost", linux_host(tmp_path))
    _user_catalog(home, [{"name": "other-name", "repo": f"file://{repo}", "sha": commit, "version": "1",
                          "title": "T", "description": "d", "platforms": []}])
    with pytest.raises(PluginInstallError, match="The catalog entry 'other-name' points at a plugin named 'acme'"):
        install(home, "other-name", host=linux_host(tmp_path))
    assert _state(home) == {"entries": ["acme"], "version": "1.0.0"}
    bad_catalog = home.root / "plugin-catalog.json"
    bad_catalog.write_text(json.dumps({"schema": 1, "plugins": [{"name": "x", "repo": "r", "sha": "main",
                                                                  "version": "1", "title": "t", "description": "d"}]}))
    listing = hermes("plugins", "catalog", home=home)
    assert listing.returncode == 2
    assert "plugins[0].sha: must be a full 40-character commit id (a pin, not a branch)" in listing.stderr


@pytest.mark.parametrize("name", [".lock", "..", ".", ".staging-x", ".old-acme-1", "-dash", "a\x00b", "tab\tname",
                                  "UPPER"])
def test_names_that_could_reach_hermes_bookkeeping_are_refused(home: Home, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "plugin.json").write_text(json.dumps({"name": name, "version": "1"}))
    with pytest.raises(PluginError, match="name: must be 1-64 lowercase"):
        install(home, str(folder), host=linux_host(tmp_path))
    assert not home.plugins.exists() or [p.name for p in home.plugins.iterdir()] in ([], [".lock"])
    assert hermes("plugins", "enable", "--", name, home=home).returncode == 3


def test_a_dot_folder_in_plugins_is_not_a_plugin_and_breaks_nothing(home: Home, tmp_path: Path) -> None:
    folder = tmp_path / "plugin"
    make_repo(folder, plugin_files())
    install(home, str(folder), host=linux_host(tmp_path))
    (home.plugins / ".lock-junk").mkdir()
    (home.plugins / ".lock-junk" / "plugin.json").write_text(json.dumps({"name": ".lock-junk"}))
    (home.plugins / "acme" / ".hermes-install.json").unlink()
    (home.plugins / "acme" / ".hermes-install.json").mkdir()  # a damaged provenance record
    listing = hermes("plugins", "list", "--json", home=home)
    assert listing.returncode == 0, listing.stderr
    assert [p["name"] for p in json.loads(listing.stdout)["plugins"]] == ["acme"]
    assert hermes("mcp", "list", home=home).returncode == 0


def test_symlinks_that_leave_the_plugin_are_refused_at_install(home: Home, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("not the plugin's")
    repo = tmp_path / "repo"
    make_repo(repo, plugin_files())
    (repo / "skills" / "acme-flow" / "SKILL.md").unlink()
    (repo / "skills" / "acme-flow" / "SKILL.md").symlink_to(secret)
    (repo / "docs.md").symlink_to(repo / "plugin.json")  # a link inside the plugin is fine
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "links")
    with pytest.raises(PluginInstallError, match=r"symbolic links that point outside its repository.*SKILL.md"):
        install(home, str(repo), host=linux_host(tmp_path))
    folder = tmp_path / "folder"
    shutil.copytree(repo, folder, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    with pytest.raises(PluginInstallError, match="symbolic links"):
        install(home, str(folder), host=linux_host(tmp_path))
    assert not (home.plugins / "acme").exists()


RUNTIME_LIVENESS = {"app": {"linux": {"presence": "executable", "location": "/opt/acme/bin/acme"}},
                    "requires": {"app": True},
                    "liveness": {"kind": "server_json", "path": "~/.acme/server.json"}}


@pytest.mark.parametrize(("server", "declaration", "message"), [
    ({"command": "uvx", "args": ["acme", "--port", "${runtime.port}"], "env": {"T": "${runtime.token}"}},
     RUNTIME_LIVENESS, None),
    ({"command": "uvx", "args": ["acme", "--port", "${runtime.port}"]}, None,
     "mcpServers.acme.args[2]: uses ${runtime.*}, which needs a server_json liveness declaration"),
    ({"command": "uvx", "env": {"P": "${runtime.port}"}},
     {**RUNTIME_LIVENESS, "liveness": {"kind": "none"}}, "needs a server_json liveness declaration"),
    ({"command": "uvx", "env": {"P": "${runtime.socket}"}}, RUNTIME_LIVENESS,
     "uses ${runtime.socket}; the runtime fields are url, host, port, token, pid"),
    ({"type": "streamable-http", "url": "https://h.example/${runtime.port}"}, RUNTIME_LIVENESS,
     "may use ${runtime.*} only in args, env and headers"),
])
def test_runtime_references_need_a_runtime_file(tmp_path: Path, server: dict[str, Any],
                                                declaration: dict[str, Any] | None, message: str | None) -> None:
    from hermes.plugins.manifest import load_plugin

    folder = tmp_path / "plugin"
    folder.mkdir()
    manifest: dict[str, Any] = {"name": "acme", "version": "1"}
    if declaration is not None:
        manifest["extensions"] = {EXTENSION_KEY: {"servers": {"acme": declaration}}}
    (folder / "plugin.json").write_text(json.dumps(manifest))
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"acme": server}}))
    if message is None:
        assert load_plugin(folder, tmp_path / "data").servers["acme"].env == server.get("env", {})
        return
    with pytest.raises(PluginError) as info:
        load_plugin(folder, tmp_path / "data")
    assert message in str(info.value) and "mcp.json" in str(info.value)


def test_runtime_references_are_refused_in_config_yaml(home: Home) -> None:
    home.config.write_text("mcp_servers:\n  a:\n    command: x\n    env: {P: '${runtime.port}'}\n")
    result = hermes("mcp", "list", home=home)
    assert result.returncode == 2 and "mcp_servers.a.env.P: uses ${runtime.*}" in result.stderr


def test_the_catalog_goes_by_the_pinned_plugin_json(home: Home, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (commit,) = make_repo(repo, plugin_files(name="untitled", version="1.0.0"))
    manifest = json.loads((repo / "plugin.json").read_text())
    del manifest["title"]
    (repo / "plugin.json").write_text(json.dumps(manifest))
    _git(repo, "commit", "-qam", "no title")
    commit = _git(repo, "rev-parse", "HEAD")
    (home.root / "plugin-catalog.json").write_text(json.dumps({"schema": 1, "plugins": [
        {"name": "untitled", "repo": str(repo), "sha": commit, "version": "9.9.9", "description": "d"}]}))
    listed = json.loads(hermes("plugins", "catalog", "--json", home=home).stdout)["catalog"]
    assert {e["name"]: e["title"] for e in listed}["untitled"] == "Untitled"  # no title: the name, title-cased
    result = hermes("plugins", "install", "untitled", "--no-warm", home=home)
    assert result.returncode == 0, result.stderr
    assert "Installed plugin untitled 1.0.0" in result.stdout
    assert "lists 'untitled' as version 9.9.9, but its plugin.json at the pinned commit says 1.0.0" in result.stderr
    rows = json.loads(hermes("plugins", "list", "--json", home=home).stdout)["plugins"]
    assert rows[0]["version"] == "1.0.0"


def test_the_shipped_blender_entry_matches_its_pinned_plugin_json() -> None:
    """The pinned plugin.json says version 0.2.0 and has no title (read from the pinned repository)."""
    from hermes.plugins.catalog import SHIPPED, _read

    (blender,) = [e for e in _read(SHIPPED) if e.name == "blender"]
    assert (blender.version, blender.title, blender.shown_title) == ("0.2.0", None, "Blender")
    assert "arbitrary Python" in blender.description and "not a sandbox" in blender.description


def test_a_plugin_server_works_only_in_the_plugin_or_its_data_folder(home: Home, tmp_path: Path) -> None:
    """Its sandbox shares the working folder with it: a `cwd` that leaves the plugin is refused."""
    from hermes.plugins.manifest import PluginError, load_plugin

    root = tmp_path / "acme"
    root.mkdir()
    (root / "plugin.json").write_text(json.dumps({"name": "acme", "version": "1.0.0"}))
    for cwd in ("/etc", "${PLUGIN_ROOT}/../..", "${PLUGIN_DATA}/../.."):
        (root / "mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "./serve", "cwd": cwd}}}))
        with pytest.raises(PluginError) as caught:
            load_plugin(root, home.plugin_data)
        assert "mcpServers.s.cwd" in str(caught.value) and "must be inside the plugin" in str(caught.value)
    (root / "mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "./serve", "cwd": "${PLUGIN_DATA}"}}}))
    assert load_plugin(root, home.plugin_data).servers["s"].cwd == str(home.plugin_data / "acme")
