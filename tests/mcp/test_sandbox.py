"""The stdio sandbox (bubblewrap), against a hostile server and real ones: what it refuses, what it names.

The hostile server (`tests/servers/prober.py`) tries, from inside, each thing the sandbox must refuse:
a key under `~/.ssh`, HERMES_HOME's `.env`, a file outside its folders, an address it was not given.
Each attempt must fail on the host's real files and sockets, and hermes must name each denial in the
server's log and in `mcp test` / `tools call`. A benign server keeps working: the real
server-filesystem from npm reads and writes its configured folder inside the sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes.config.model import ServerConfig
from hermes.config.sandbox import Confinement, Network, SandboxSettings
from hermes.home import Home
from hermes.mcp.sandbox import SandboxRequest, plan
from hermes.mcp.sandbox_denials import DenialWatch
from hermes.mcp.sandbox_support import TRUSTED_FOLDERS, find_bwrap
from tests.npm_tools import NpmTools
from tests.support import PYTHON, SERVERS, hermes, needs_sandbox, write_config

pytestmark = needs_sandbox

CANARY = "sk-canary-0123456789abcdefSANDBOX"
PROBER = [str(SERVERS / "prober.py")]


@pytest.fixture
def user(tmp_path: Path, home: Home) -> Path:
    """A user's home folder with the secrets a server must never see."""
    folder = tmp_path / "user"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY----- {CANARY}\n")
    (folder / ".aws").mkdir()
    (folder / ".aws" / "credentials").write_text(f"aws_secret_access_key = {CANARY}\n")
    home.dotenv.write_text(f"OPENAI_API_KEY={CANARY}\n")
    home.dotenv.chmod(0o600)
    return folder


@pytest.fixture
def listener() -> Iterator[int]:
    """A host loopback service that answers every connection with 'host-answer'."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(30)

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(100)
                connection.sendall(b"host-answer")

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def prober(home: Home, **sandbox: Any) -> None:
    entry: dict[str, Any] = {"command": PYTHON, "args": [*PROBER, "--at-start"]}
    if sandbox:
        entry["sandbox"] = sandbox
    write_config(home, {"mcp_servers": {"prober": entry}})


def call(home: Home, user: Path, tool: str, **arguments: Any) -> Any:
    ran = hermes("tools", "call", f"mcp__prober__{tool}", "--args", json.dumps(arguments), "--json", home=home,
                 env={"HOME": str(user)})
    return json.loads(ran.stdout), ran


def test_a_hostile_server_fails_at_each_attempt_and_each_denial_is_named(home: Home, user: Path, tmp_path: Path,
                                                                         listener: int) -> None:
    prober(home, network="none")
    outside = tmp_path / "outside"
    outside.mkdir()

    key, ran = call(home, user, "read", path="~/.ssh/id_ed25519")
    assert key["is_error"] and CANARY not in ran.stdout + ran.stderr
    assert "tried to read ~/.ssh/id_ed25519, which its sandbox hides: secrets are kept there, and hermes " \
           "shares them with no server" in ran.stderr

    dotenv, ran = call(home, user, "read", path=str(home.dotenv))
    assert dotenv["is_error"] and CANARY not in ran.stdout + ran.stderr
    assert f"tried to read {home.dotenv}, which its sandbox hides" in ran.stderr

    written, ran = call(home, user, "write", path=str(outside / "planted.txt"))
    assert written["is_error"] and not (outside / "planted.txt").exists()
    assert f"tried to create {outside / 'planted.txt'}, in a folder its sandbox hides" in ran.stderr

    dialled, ran = call(home, user, "dial", host="127.0.0.1", port=listener)
    assert dialled["is_error"] and "host-answer" not in dialled["text"]
    assert f"tried to reach 127.0.0.1:{listener}, which its sandbox does not allow (network: none)" in ran.stderr
    assert f"network: loopback, ports: [{listener}]" in ran.stderr

    outward, ran = call(home, user, "dial", host="10.255.255.1", port=80)
    assert outward["is_error"] and "which its sandbox does not allow (network: none)" in ran.stderr

    log = home.server_log("prober").read_text()
    assert log.count("[hermes sandbox]") >= 5 and CANARY not in log
    assert (user / ".ssh" / "id_ed25519").read_text().count(CANARY) == 1  # untouched on the host


def test_mcp_test_names_a_denial_at_start_and_get_shows_the_sandbox(home: Home, user: Path) -> None:
    prober(home, network="none")
    ran = hermes("mcp", "test", "prober", home=home, env={"HOME": str(user)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "sandbox: on (network none)" in ran.stdout
    assert "sandbox denied: server 'prober' tried to read ~/.ssh/id_ed25519" in ran.stdout
    shown = hermes("mcp", "get", "prober", "--json", home=home, env={"HOME": str(user)})
    sandbox = json.loads(shown.stdout)["sandbox"]
    assert sandbox["state"] == "on" and sandbox["network"] == "none"
    assert str(SERVERS / "prober.py") in sandbox["reads"] or not str(SERVERS).startswith(("/tmp", "/root", "/home"))


def test_loopback_reaches_exactly_the_declared_host_ports(home: Home, user: Path, listener: int) -> None:
    prober(home, network="loopback", ports=[listener])
    dialled, ran = call(home, user, "dial", host="127.0.0.1", port=listener)
    assert not dialled["is_error"], ran.stdout + ran.stderr
    assert "host-answer" in dialled["text"]
    other = socket.create_server(("127.0.0.1", 0))
    try:
        refused, ran = call(home, user, "dial", host="127.0.0.1", port=other.getsockname()[1])
    finally:
        other.close()
    assert refused["is_error"] and "tried to reach 127.0.0.1:" in ran.stderr


def test_the_server_runs_in_its_own_namespaces_unless_switched_off(home: Home, user: Path) -> None:
    prober(home)
    inside, _ = call(home, user, "where")
    ours = os.readlink("/proc/self/ns/mnt")
    assert inside["text"].startswith("mnt ") and ours not in inside["text"]
    assert "home []" in inside["text"]  # an empty home folder: nothing of the user's
    prober(home, enabled=False)
    outside, _ = call(home, user, "where")
    assert ours in outside["text"] and ".ssh" in outside["text"]


def test_required_refuses_to_start_where_no_sandbox_can_be_built(home: Home, user: Path, tmp_path: Path) -> None:
    missing = {"HOME": str(user), "HERMES_BWRAP": str(tmp_path / "bin" / "bwrap")}
    write_config(home, {"mcp": {"sandbox": "required"},
                        "mcp_servers": {"prober": {"command": PYTHON, "args": PROBER}}})
    ran = hermes("mcp", "test", "prober", home=home, env=missing)
    assert ran.returncode == 1
    assert f"it must run sandboxed (mcp.sandbox: required), but HERMES_BWRAP names {tmp_path}/bin/bwrap, which " \
           "is not there" in ran.stdout
    write_config(home, {"mcp_servers": {"prober": {"command": PYTHON, "args": PROBER}}})
    ran = hermes("mcp", "test", "prober", home=home, env=missing)
    assert ran.returncode == 0
    assert "sandbox: unavailable: HERMES_BWRAP names" in ran.stdout
    assert "the server runs with your full rights" in ran.stdout


def test_the_real_server_filesystem_works_inside_its_sandbox(home: Home, npm: NpmTools, user: Path,
                                                             tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("ship the sandbox\n")
    write_config(home, {"mcp_servers": {"files": {"command": npm.filesystem[0],
                                                  "args": [npm.filesystem[1], str(notes)],
                                                  "sandbox": {"network": "none"}}}})
    env = {"HOME": str(user)}
    read = hermes("tools", "call", "mcp__files__read_text_file", "--args", json.dumps({"path": str(notes / "plan.md")}),
                  home=home, env=env)
    assert read.returncode == 0 and "ship the sandbox" in read.stdout, read.stdout + read.stderr
    wrote = hermes("tools", "call", "mcp__files__write_file",
                   "--args", json.dumps({"path": str(notes / "done.md"), "content": "done\n"}), home=home, env=env)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert (notes / "done.md").read_text() == "done\n"


# -- the plan, without a process -------------------------------------------------------------------


def _plan(tmp_path: Path, args: list[str], settings: SandboxSettings | None = None, cwd: Path | None = None,
          configured_cwd: bool = False) -> Any:
    user = tmp_path / "user"
    for store in (".ssh", ".aws", "work"):
        (user / store).mkdir(parents=True, exist_ok=True)
    (user / ".netrc").write_text("machine x password y\n")
    hermes_home = user / ".hermes"
    hermes_home.mkdir(exist_ok=True)
    return plan(PYTHON, args, env={"HOME": str(user), "PATH": os.environ.get("PATH", "")},
                cwd=str(cwd or user / "work"), configured_cwd=configured_cwd, roots=(),
                settings=settings or SandboxSettings(), hermes_home=str(hermes_home))


def test_a_shared_home_still_hides_its_secret_stores_and_hermes_home(tmp_path: Path) -> None:
    sandbox = _plan(tmp_path, [str(tmp_path / "user")], SandboxSettings(write=(str(tmp_path / "user"),)))
    user = str(tmp_path / "user")
    assert user in sandbox.readable and not sandbox.writable_path(f"{user}/notes.txt")  # a home: never written whole
    assert {f"{user}/.ssh", f"{user}/.aws", f"{user}/.netrc", f"{user}/.hermes"} <= set(sandbox.hidden)
    assert not sandbox.visible(f"{user}/.ssh/id_ed25519") and sandbox.visible(f"{user}/work")


def test_what_the_user_names_wins_over_the_hiding(tmp_path: Path) -> None:
    user = str(tmp_path / "user")
    sandbox = _plan(tmp_path, [user], SandboxSettings(read=(f"{user}/.ssh",)))
    assert f"{user}/.ssh" not in sandbox.hidden and sandbox.visible(f"{user}/.ssh/known_hosts")
    assert not sandbox.writable_path(f"{user}/.ssh/known_hosts")


def test_the_working_folder_is_shared_unless_it_is_the_home_folder(tmp_path: Path) -> None:
    user = tmp_path / "user"
    assert _plan(tmp_path, []).working == str(user / "work")
    assert _plan(tmp_path, [], cwd=user).working is None
    assert _plan(tmp_path, [], cwd=user, configured_cwd=True).working == str(user)


def test_no_network_keeps_launchers_offline(tmp_path: Path) -> None:
    sandbox = _plan(tmp_path, [], SandboxSettings(network=Network.NONE))
    assert sandbox.env["npm_config_prefer_offline"] == "true" and sandbox.env["UV_OFFLINE"] == "1"
    assert "UV_OFFLINE" not in _plan(tmp_path, []).env


def test_denials_are_named_only_when_the_plan_explains_them(tmp_path: Path) -> None:
    sandbox = _plan(tmp_path, [], SandboxSettings(network=Network.NONE))
    watch = DenialWatch("s", sandbox)
    user = tmp_path / "user"
    missing = tmp_path / "user" / "work" / "nothing-here.txt"  # visible folder, file absent: not the sandbox
    assert watch.observe(f"ENOENT: no such file or directory, open '{missing}'") == []
    assert watch.observe("Error: Permission denied (publickey)") == []
    assert watch.observe(f"EACCES: permission denied, open '{user}/.netrc'")
    assert watch.observe("connect ENETUNREACH 104.16.0.1:443 - Local (0.0.0.0:0)")[0].startswith(
        "server 's' tried to reach 104.16.0.1:443")
    open_everywhere = DenialWatch("s", _plan(tmp_path, []))
    assert open_everywhere.observe("connect ENETUNREACH 104.16.0.1:443") == []


def test_a_model_s_text_cannot_make_the_denial_reader_quadratic_or_the_log_endless(tmp_path: Path) -> None:
    """A failed call's text is the model's to choose: host names are matched from the start of a run
    only (each `-` of `a-a-a-…` was a new start scanning to the end), and a flood of denials is cut."""
    from hermes.mcp.sandbox_denials import _ADDRESS

    assert [m.group(1) for m in _ADDRESS.finditer("a-b-c.example.io:443 and x-y")] == ["a-b-c.example.io"]
    assert [m.start() for m in _ADDRESS.finditer("Network is unreachable " + "a-" * 2000)] == []
    watch = DenialWatch("s", _plan(tmp_path, [], SandboxSettings(network=Network.NONE)))
    flood = "\n".join(f"EACCES: permission denied, open '{tmp_path}/user/.ssh/k{i}'" for i in range(5000))
    assert len(watch.observe(flood)) == 50 and watch.observe(flood) == []


@pytest.mark.parametrize("value, rule", [
    ({"ports": [80]}, "only 'network: loopback' uses"),
    ({"network": "some"}, "must be one of"),
    ("maybe", "must be 'off', 'on' or a mapping"),
])
def test_bad_sandbox_settings_name_the_key_and_the_rule(value: Any, rule: str) -> None:
    from hermes.validation import Invalid

    with pytest.raises(Invalid) as caught:
        ServerConfig.from_data({"command": "x", "sandbox": value}, "s")
    assert rule in str(caught.value) and "mcp_servers.s.sandbox" in str(caught.value)


def test_the_real_git_server_works_on_its_repository_and_sees_nothing_else(home: Home, user: Path,
                                                                         tmp_path: Path) -> None:
    """mcp-server-git from PyPI, declared `network: none` like the catalog's entry: it reads and commits
    in the repository it was configured with; the user's keys stay out of its reach."""
    import subprocess

    from tests.bridge_tools import install_pinned

    git_bin = install_pinned("mcp-server-git")
    repo = tmp_path / "repo"
    repo.mkdir()
    quiet: dict[str, Any] = {"check": True, "capture_output": True, "cwd": repo}
    subprocess.run(["git", "init", "-q", "-b", "main"], **quiet)
    subprocess.run(["git", "-c", "user.email=t@example.org", "-c", "user.name=T", "commit", "-q", "--allow-empty",
                    "-m", "first"], **quiet)
    (repo / "notes.md").write_text("staged inside the sandbox\n")
    write_config(home, {"mcp_servers": {"git": {"command": str(git_bin / "mcp-server-git"),
                                                "args": ["--repository", str(repo)],
                                                "sandbox": {"network": "none"}}}})
    env = {"HOME": str(user)}
    log = hermes("tools", "call", "mcp__git__git_log", "--args", json.dumps({"repo_path": str(repo)}), home=home,
                 env=env)
    assert log.returncode == 0 and "first" in log.stdout, log.stdout + log.stderr
    arguments = json.dumps({"repo_path": str(repo), "files": ["notes.md"]})
    refused = hermes("tools", "call", "mcp__git__git_add", "--args", arguments, home=home, env=env)
    assert refused.returncode != 0  # a repository's own files are read-only until the user grants them
    assert f"a repository's own files are read-only to servers, since its hooks and config run code later; allow " \
           f"it with `sandbox: {{write: [{repo}/.git]}}`" in refused.stderr, refused.stdout + refused.stderr
    write_config(home, {"mcp_servers": {"git": {"command": str(git_bin / "mcp-server-git"),
                                                "args": ["--repository", str(repo)],
                                                "sandbox": {"network": "none", "write": [str(repo / ".git")]}}}})
    added = hermes("tools", "call", "mcp__git__git_add", "--args", arguments, home=home, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], **quiet, text=True).stdout
    assert staged.strip() == "notes.md"  # written into the real repository, from inside
    elsewhere = hermes("tools", "call", "mcp__git__git_status", "--args",
                       json.dumps({"repo_path": str(user / ".ssh")}), home=home, env=env)
    assert elsewhere.returncode != 0 and CANARY not in elsewhere.stdout + elsewhere.stderr


def test_the_real_server_everything_reports_only_what_the_sandbox_gives(home: Home, npm: NpmTools,
                                                                       user: Path) -> None:
    write_config(home, {"mcp_servers": {"everything": {"command": npm.everything[0], "args": npm.everything[1:]}}})
    ran = hermes("tools", "call", "mcp__everything__get_env", "--args", "{}", home=home,
                 env={"HOME": str(user), "OPENAI_API_KEY": CANARY})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert CANARY not in ran.stdout and str(user) in ran.stdout


def test_a_plugins_arguments_share_nothing_outside_its_folder(tmp_path: Path) -> None:
    """A plugin's mcp.json is its author's: naming the user's home in its arguments grants nothing."""
    user = tmp_path / "user"
    plugin = user / "plugin"
    plugin.mkdir(parents=True)
    sandbox = _plan(tmp_path, [str(user), str(plugin)], SandboxSettings(confinement=Confinement.PLUGIN), cwd=plugin,
                    configured_cwd=True)
    # Its own folder is readable (not writable: it is the plugin's code); the user's home is not shared.
    assert str(user) not in sandbox.writable and str(plugin) in sandbox.readable
    assert not sandbox.visible(str(user / ".ssh")) and not sandbox.visible(str(user / "work"))


def test_a_machine_that_refuses_user_namespaces_gets_the_reason_and_the_fix(home: Home, user: Path,
                                                                           tmp_path: Path) -> None:
    """What Ubuntu 24.04 answers without an AppArmor profile for bwrap, from a bwrap that says it."""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    write_config(home, {"mcp_servers": {"prober": {"command": PYTHON, "args": PROBER}}})
    ran = hermes("mcp", "test", "prober", home=home, env={"HOME": str(user), "HERMES_BWRAP": str(fake / "bwrap")})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "sandbox: unavailable: bubblewrap cannot create a sandbox here: bwrap: setting up uid map: Permission " \
           "denied (user namespaces are restricted here" in ran.stdout
    assert "apparmor_restrict_unprivileged_userns" in ran.stdout
    assert "the sandbox is unavailable" in home.server_log("prober").read_text() or \
        "sandbox unavailable" in home.server_log("prober").read_text()


# -- what an attack on the sandbox found, each held now ---------------------------------------------


def test_a_server_pointing_home_elsewhere_still_cannot_see_the_real_home_s_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real-home"
    (real / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(real))
    fake = tmp_path / "fake-home"
    fake.mkdir()
    sandbox = plan(PYTHON, [str(real)], env={"HOME": str(fake), "PATH": os.environ["PATH"]}, cwd=str(tmp_path),
                   configured_cwd=False, roots=(), settings=SandboxSettings(), hermes_home=str(tmp_path / "hh"))
    assert str(real / ".ssh") in sandbox.hidden and not sandbox.visible(str(real / ".ssh"))


def test_a_shebang_cannot_name_host_folders_into_the_sandbox(tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    work.mkdir(parents=True)
    target = tmp_path / "elsewhere"
    (target / "keys").mkdir(parents=True)
    script = work / "srv"
    script.write_text(f"#!{work}/L/../../../elsewhere/bin/sh\n")
    script.chmod(0o755)
    (work / "L").symlink_to(work)
    sandbox = _plan(tmp_path, [], cwd=work)
    assert not any(p == str(target) or p.startswith(str(target) + "/") for p in sandbox.readable), sandbox.readable


def test_a_symlink_planted_in_the_working_folder_grants_nothing_secret(tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    work.mkdir(parents=True)
    (work / "@scope").mkdir()
    hermes_home = tmp_path / "user" / ".hermes"
    hermes_home.mkdir()
    (work / "@scope" / "pkg").symlink_to(hermes_home)
    sandbox = _plan(tmp_path, ["@scope/pkg"], cwd=work)
    assert str(hermes_home) not in sandbox.writable and str(hermes_home) not in sandbox.readable
    assert not sandbox.visible(str(hermes_home / ".env"))


def test_a_symlinked_secret_store_is_hidden_where_it_really_is(tmp_path: Path) -> None:
    user = tmp_path / "user"
    vault = tmp_path / "vault"
    (vault / "aws").mkdir(parents=True)
    (user).mkdir(parents=True, exist_ok=True)
    _plan(tmp_path, [])  # makes the user's folders
    (user / ".aws").rmdir()
    (user / ".aws").symlink_to(vault / "aws")
    sandbox = _plan(tmp_path, [str(vault)])
    assert str(vault / "aws") in sandbox.hidden and not sandbox.visible(str(vault / "aws" / "credentials"))


def test_launchers_get_a_cache_of_their_own_not_the_user_s(tmp_path: Path) -> None:
    npx = tmp_path / "bin" / "npx"
    npx.parent.mkdir()
    npx.write_text("#!/bin/sh\n")
    npx.chmod(0o755)
    user = tmp_path / "user"
    (user / ".npm").mkdir(parents=True)
    cache = tmp_path / "hh" / "cache" / "sandbox" / "x"
    request = SandboxRequest("bwrap", SandboxSettings(), (), str(tmp_path / "hh"), cache=str(cache))
    sandbox = request.plan_for(str(npx), ["-y", "pkg"], {"HOME": str(user), "PATH": os.environ["PATH"]},
                               str(tmp_path), False)
    assert sandbox.env["npm_config_cache"] == str(cache / "npm") and str(cache / "npm") in sandbox.writable
    assert not sandbox.writable_path(str(user / ".npm" / "_npx"))


def test_git_s_own_code_stays_read_only_in_a_writable_folder(tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    sandbox = _plan(tmp_path, [], cwd=work)
    assert sandbox.writable_path(str(work / "notes.md"))
    assert not sandbox.writable_path(str(work / ".git" / "hooks" / "pre-commit"))
    assert not sandbox.writable_path(str(work / ".git" / "config"))


def test_a_plugin_s_own_folder_is_read_only_to_its_server(tmp_path: Path) -> None:
    plugin = tmp_path / "user" / "plugin"
    plugin.mkdir(parents=True)
    sandbox = _plan(tmp_path, [], SandboxSettings(confinement=Confinement.PLUGIN), cwd=plugin, configured_cwd=True)
    assert sandbox.visible(str(plugin)) and not sandbox.writable_path(str(plugin / ".hermes-install.json"))


@pytest.mark.parametrize("paths, rule", [
    (["/tmp/\x00x"], "no control characters"),
    (["/tmp/\ud800"], "a lone surrogate"),
    (["/proc"], "the kernel's own view of the host"),
    (["relative/path"], "must be an absolute path"),
    ([f"/p{i}" for i in range(65)], "at most 64"),
])
def test_sandbox_paths_are_checked_when_the_config_is_read(paths: list[str], rule: str) -> None:
    from hermes.validation import Invalid

    with pytest.raises(Invalid) as caught:
        ServerConfig.from_data({"command": "x", "sandbox": {"read": paths}}, "s")
    assert rule in str(caught.value)


def test_a_denial_never_shows_a_secret_the_server_echoed(home: Home, user: Path, tmp_path: Path) -> None:
    write_config(home, {"mcp_servers": {"prober": {"command": PYTHON, "args": PROBER,
                                                   "env": {"API_TOKEN": CANARY}}}})
    target = tmp_path / "outside" / CANARY / "x.txt"
    target.parent.mkdir(parents=True)
    _, ran = call(home, user, "write", path=str(target))
    assert "tried to create" in ran.stderr and CANARY not in ran.stdout + ran.stderr


# -- ways out that an attack found: each fails on the host, from a real sandbox ------------------------


def _escape_home(user: Path) -> Path:
    """A home with start-up files, a folder on PATH and a repository as working folder."""
    work = user / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (work / "vendored" / ".git").mkdir(parents=True)
    (user / ".bashrc").write_text("# the user's\n")
    (user / ".local" / "bin").mkdir(parents=True)
    return work


def test_a_server_cannot_swap_the_working_folder_s_repository_for_its_own(home: Home, user: Path) -> None:
    work = _escape_home(user)
    write_config(home, {"mcp_servers": {"prober": {"command": PYTHON, "args": PROBER, "cwd": str(work)}}})
    renamed, _ = call(home, user, "rename", path=str(work / ".git"), to=str(work / ".git-old"))
    assert renamed["is_error"] and "busy" in renamed["text"]
    nested, _ = call(home, user, "rename", path=str(work / "vendored" / ".git"), to=str(work / "vendored" / "x"))
    assert nested["is_error"]
    hook, _ = call(home, user, "write", path=str(work / ".git" / "hooks" / "pre-commit"))
    config, _ = call(home, user, "write", path=str(work / ".git" / "config"))
    assert hook["is_error"] and config["is_error"]
    notes, _ = call(home, user, "write", path=str(work / "notes.md"))  # the working folder itself stays writable
    assert not notes["is_error"]
    assert (work / ".git" / "config").read_text().startswith("[core]") and not (work / ".git-old").exists()
    assert not (work / ".git" / "hooks" / "pre-commit").exists()


def test_a_home_in_the_arguments_is_read_only_even_granted_and_start_up_files_stay_read_only(home: Home,
                                                                                             user: Path) -> None:
    work = _escape_home(user)
    entry = {"command": PYTHON, "args": [*PROBER, str(user)], "cwd": str(work)}
    write_config(home, {"mcp_servers": {"prober": entry}})
    bashrc, ran = call(home, user, "write", path=str(user / ".bashrc"))
    assert bashrc["is_error"] and "read-only in every case" in ran.stderr
    above, ran = call(home, user, "write", path=str(user / "notes.txt"))
    assert above["is_error"] and "allow a folder inside it with `sandbox: {write: [~/FOLDER]}`" in ran.stderr
    # Granted whole, a home stays read-only (a server could create ~/.bash_profile); a folder in it is writable.
    (user / "exports").mkdir()
    grant = {"write": [str(user), str(user / "exports"), str(user / ".local")]}
    write_config(home, {"mcp_servers": {"prober": {**entry, "sandbox": grant}}})
    for created in (user / ".bash_profile", user / "notes.txt"):
        tried, _ = call(home, user, "write", path=str(created))
        assert tried["is_error"] and not created.exists(), created
    granted, _ = call(home, user, "write", path=str(user / "exports" / "report.txt"))
    assert not granted["is_error"] and (user / "exports" / "report.txt").exists()
    for planted in (user / ".local" / "bin" / "git", work / ".git" / "hooks" / "post-checkout"):
        tried, ran = call(home, user, "write", path=str(planted))
        assert tried["is_error"] and not planted.exists(), planted
    assert (user / ".bashrc").read_text() == "# the user's\n"
    # A configured working folder that is a home is read-only too.
    write_config(home, {"mcp_servers": {"prober": {**entry, "cwd": str(user)}}})
    profile, _ = call(home, user, "write", path=str(user / ".bash_profile"))
    assert profile["is_error"] and not (user / ".bash_profile").exists()


def test_a_folder_above_the_working_folder_is_read_only_unless_granted(tmp_path: Path) -> None:
    user = tmp_path / "user"
    work = user / "work" / "project"
    work.mkdir(parents=True)
    sandbox = _plan(tmp_path, [str(user / "work"), str(work)], cwd=work)
    assert sandbox.visible(str(user / "work" / "other")) and not sandbox.writable_path(str(user / "work" / "x"))
    assert sandbox.writable_path(str(work / "x"))
    granted = _plan(tmp_path, [str(user / "work")], SandboxSettings(write=(str(user / "work"),)), cwd=work)
    assert granted.writable_path(str(user / "work" / "x"))


def test_bubblewrap_is_never_a_program_a_repository_put_on_path(tmp_path: Path, home: Home, user: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    planted = tmp_path / "repo" / "node_modules" / ".bin"
    planted.mkdir(parents=True)
    (planted / "bwrap").write_text("#!/bin/sh\nshift $#\nexec \"$@\"\n")
    (planted / "bwrap").chmod(0o755)
    monkeypatch.chdir(tmp_path / "repo")
    prober(home)
    ran = hermes("mcp", "test", "prober", home=home, env={"HOME": str(user), "PATH": f"node_modules/.bin:{planted}:"
                                                           f"{os.environ['PATH']}"})
    assert "sandbox: on" in ran.stdout, ran.stdout
    assert find_bwrap(None)[0] in [os.path.realpath(os.path.join(f, "bwrap")) for f in TRUSTED_FOLDERS]
    assert find_bwrap("bwrap") == (None, "HERMES_BWRAP must be an absolute path (got 'bwrap')")
    writable = tmp_path / "shared"
    writable.mkdir(mode=0o777)
    writable.chmod(0o777)
    (writable / "bwrap").write_text("#!/bin/sh\n")
    assert find_bwrap(str(writable / "bwrap"))[0] is None  # a folder anyone can write is no place for it


def test_a_trusted_project_gets_only_its_folder_until_the_user_grants_what_it_asks(
        home: Home, user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".hermes").mkdir()
    project = {"mcp_servers": {
        "prober": {"command": PYTHON, "args": [*PROBER, "${HOME}/.ssh"], "sandbox": {"write": [str(home.root)]}},
        "loose": {"command": PYTHON, "args": PROBER, "sandbox": "off"}}}
    (repo / ".hermes" / "config.yaml").write_text(json.dumps(project))
    write_config(home, {"mcp_servers": {}})
    monkeypatch.chdir(repo)
    trusted = hermes("mcp", "trust", home=home, env={"HOME": str(user)})
    assert trusted.returncode == 0, trusted.stdout
    assert "loose: to run without a sandbox (sandbox: off), with your full rights" in trusted.stdout
    assert f"to write {home.root}; " in trusted.stdout and "prober: the network (network: all, the default)" \
        in trusted.stdout
    assert f"; to use {user}/.ssh, named in its arguments" in trusted.stdout
    assert "Not granted: they run confined to the folder" in trusted.stdout
    key, _ = call(home, user, "read", path="~/.ssh/id_ed25519")
    assert key["is_error"] and CANARY not in key["text"]
    planted, _ = call(home, user, "write", path=str(home.root / "config.yaml"))
    assert planted["is_error"]
    loose = hermes("mcp", "get", "loose", home=home, env={"HOME": str(user)})
    assert "sandbox: on" in loose.stdout, loose.stdout
    tested = hermes("mcp", "test", "prober", home=home, env={"HOME": str(user)})
    assert "sandbox: on (network none; a project's server, confined to its folder until `hermes mcp trust " \
           "--grant`)" in tested.stdout, tested.stdout
    dialled, ran = call(home, user, "dial", host="127.0.0.1", port=9)
    assert dialled["is_error"] and "a project's server gets more than its folder only when its " \
        ".hermes/config.yaml asks" in ran.stderr, ran.stderr
    granted = hermes("mcp", "trust", "--grant", home=home, env={"HOME": str(user)})
    assert granted.returncode == 0 and "Not granted" not in granted.stdout
    assert "Granted: loose, prober get what they ask" in granted.stdout
    key, _ = call(home, user, "read", path="~/.ssh/id_ed25519")  # the user's own words gave it
    assert not key["is_error"] and "BEGIN OPENSSH PRIVATE KEY" in key["text"]


def test_a_repository_s_own_folder_and_files_stay_put_unless_granted(home: Home, user: Path) -> None:
    work = _escape_home(user)
    (work / "sub" / ".git").mkdir(parents=True)
    write_config(home, {"mcp_servers": {"prober": {"command": PYTHON, "args": PROBER, "cwd": str(work)}}})
    moved, _ = call(home, user, "rename", path=str(work / "sub"), to=str(work / "sub-old"))
    assert moved["is_error"] and (work / "sub" / ".git").is_dir()  # a repository cannot be swapped for another
    for planted in (work / ".git" / "commondir", work / "sub" / ".git" / "config", work / ".git" / "HEAD"):
        tried, ran = call(home, user, "write", path=str(planted))
        assert tried["is_error"] and not planted.exists(), planted
    assert "a repository's own files are read-only to servers" in ran.stderr


def test_a_symlink_a_server_planted_never_widens_what_a_later_start_may_write(home: Home, user: Path) -> None:
    work = _escape_home(user)
    (user / ".config").mkdir()
    entry = {"command": PYTHON, "args": [*PROBER, "--out=./reports"], "cwd": str(work)}
    write_config(home, {"mcp_servers": {"prober": entry}})
    linked, _ = call(home, user, "link", path=str(work / "reports"), to=str(user / ".config"))
    assert not linked["is_error"]  # the working folder is its to write, links included
    later, _ = call(home, user, "write", path=str(work / "reports" / "planted.conf"))  # a new start, through it
    assert later["is_error"] and not (user / ".config" / "planted.conf").exists()


def test_a_venv_on_path_inside_a_writable_folder_is_read_only_whole(tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "lib").mkdir()
    (work / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    sandbox = plan(PYTHON, [], env={"HOME": str(tmp_path / "user"), "PATH": f"{work}/.venv/bin:/usr/bin"},
                   cwd=str(work), configured_cwd=False, roots=(), settings=SandboxSettings(),
                   hermes_home=str(tmp_path / "hh"))
    assert sandbox.writable_path(str(work / "notes.md"))
    assert not sandbox.writable_path(str(work / ".venv" / "lib" / "evil.pth"))
    assert not sandbox.writable_path(str(work / ".venv" / "bin" / "ls"))


@pytest.mark.anyio
async def test_what_the_loader_acts_on_reaches_only_the_server_never_bubblewrap_on_the_host(home: Home) -> None:
    """`LD_PRELOAD` (and the like) in an entry's env would load its code into bubblewrap and setpriv,
    which run on the host: they get it only inside, through --setenv."""
    import psutil

    from hermes.session.core import Session
    from tests.support import fast_entry

    preload = {"LD_PRELOAD": "/nonexistent/hermes-test.so", "GCONV_PATH": "/nonexistent/gconv"}
    write_config(home, {"mcp_servers": {"box": fast_entry(env=preload)}})
    async with Session(home) as session:
        names = (await session.call("mcp__box__env_report", {})).text.split()
        assert "LD_PRELOAD" in names and "GCONV_PATH" in names  # the server still gets them
        started = [p for p in psutil.Process().children(recursive=True) if "bwrap" in " ".join(p.cmdline()[:2])]
        assert started
        for process in started:
            environment = process.environ()
            assert "LD_PRELOAD" not in environment and "GCONV_PATH" not in environment


# -- the second attack: each way out it found, held at the plan (bubblewrap lays exactly the plan) ----


def _repository(folder: Path) -> Path:
    (folder / ".git" / "hooks").mkdir(parents=True)
    (folder / ".git" / "config").write_text("[core]\n")
    return folder


def _work_plan(tmp_path: Path, settings: SandboxSettings | None = None, **extra: Any) -> Any:
    work = tmp_path / "user" / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(tmp_path / "user"), "PATH": extra.pop("path", os.environ["PATH"])}
    return plan(PYTHON, extra.pop("args", []), env=env, cwd=str(extra.pop("cwd", work)),
                configured_cwd=extra.pop("configured_cwd", False), roots=extra.pop("roots", ()),
                settings=settings or SandboxSettings(), hermes_home=str(tmp_path / "hh"), **extra)


def test_repositories_at_any_depth_and_behind_many_folders_stay_put(tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    deep = _repository(work / "code" / "org" / "repo")
    for index in range(400):  # more than the first scan looked at
        (work / f"d{index:03d}").mkdir(parents=True)
    sub = _repository(work / "zzz")
    sandbox = _work_plan(tmp_path)
    for repository in (deep, sub):
        assert not sandbox.writable_path(str(repository / ".git" / "config"))
        assert not sandbox.writable_path(str(repository / ".git" / "commondir"))
        assert str(repository) in sandbox.pinned
    assert sandbox.writable_path(str(deep / "README.md"))


def test_separate_and_bare_git_folders_are_repositories_too(tmp_path: Path) -> None:
    work = tmp_path / "user" / "work"
    separate = work / "proj.gitdir"
    (separate / "hooks").mkdir(parents=True)
    (work / "proj").mkdir(parents=True)
    (work / "proj" / ".git").write_text(f"gitdir: {separate}\n")
    bare = work / "mirror.git"
    for part in ("objects", "refs", "hooks"):
        (bare / part).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    (bare / "config").write_text("[core]\n\tbare = true\n")
    sandbox = _work_plan(tmp_path)
    assert not sandbox.writable_path(str(separate / "config"))
    assert not sandbox.writable_path(str(work / "proj" / ".git"))
    assert not sandbox.writable_path(str(bare / "hooks" / "post-receive"))


def test_a_granted_git_folder_keeps_its_code_read_only_and_a_project_cannot_grant_one(tmp_path: Path) -> None:
    from hermes.config.sandbox import Confinement

    work = _repository(tmp_path / "user" / "work")
    granted = _work_plan(tmp_path, SandboxSettings(write=(str(work / ".git"),)))
    assert granted.writable_path(str(work / ".git" / "index.lock"))
    assert not granted.writable_path(str(work / ".git" / "config"))
    assert not granted.writable_path(str(work / ".git" / "hooks" / "post-checkout"))
    project = SandboxSettings(confinement=Confinement.PROJECT)
    for way in ({"cwd": work / ".git", "configured_cwd": True}, {"roots": (str(work / ".git"),)}):
        sandbox = _work_plan(tmp_path, project, **way)
        assert not sandbox.writable_path(str(work / ".git" / "config")), way
        assert not sandbox.writable_path(str(work / ".git" / "commondir")), way


def test_path_folders_are_guarded_by_both_paths_and_a_project_s_path_shares_nothing_new(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch
                                                                                       ) -> None:
    from hermes.config.sandbox import Confinement

    work = tmp_path / "user" / "work"
    venv = work / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib").mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setenv("PATH", f"{venv}/bin:.venv/bin:{os.environ['PATH']}")  # hermes's own, relative entry too
    sandbox = _work_plan(tmp_path, path="/usr/bin:/bin")  # the server's own PATH leaves the venv out
    assert not sandbox.writable_path(str(venv / "lib" / "zz.pth"))
    documents = tmp_path / "user" / "Documents"
    documents.mkdir()
    project = _work_plan(tmp_path, SandboxSettings(confinement=Confinement.PROJECT),
                         path=f"/usr/bin:{documents}")
    assert not project.visible(str(documents / "private.txt"))


def test_the_users_own_bubblewrap_stays_read_only_in_a_writable_folder(tmp_path: Path) -> None:
    tools = tmp_path / "user" / "work" / "tools"
    tools.mkdir(parents=True)
    (tools / "bwrap").write_text("#!/bin/sh\n")
    sandbox = _work_plan(tmp_path, protected=(str(tools / "bwrap"),))
    assert sandbox.writable_path(str(tools / "other")) and not sandbox.writable_path(str(tools / "bwrap"))


def test_setpriv_comes_from_the_system_never_from_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes.mcp import children

    planted = tmp_path / "node_modules" / ".bin"
    planted.mkdir(parents=True)
    (planted / "setpriv").write_text("#!/bin/sh\n")
    (planted / "setpriv").chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    children._setpriv.cache_clear()
    found = children._setpriv()
    assert found is None or os.path.dirname(found) in children.SYSTEM_PROGRAM_FOLDERS
