"""The layout matrix: real servers, installed the usual ways, work inside the sandbox.

Each is started from a folder that has nothing to do with it, with the installs under the user's
home (which the sandbox empties): whatever a server needs, the sandbox derives from the files. A
start that fails inside the sandbox says why in one sentence, with the setting that fixes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes.home import Home
from tests.layouts import EVERYTHING, Layouts, prepare
from tests.npm_registry import serve
from tests.support import hermes, needs_sandbox, write_config

pytestmark = needs_sandbox


@pytest.fixture(scope="module")
def layouts() -> Layouts:
    return prepare()


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An unrelated folder hermes is started from."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def registry(layouts: Layouts) -> Iterator[str]:
    with serve(layouts.registry) as url:
        yield url


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "README.md").write_text("hello\n")
    return folder


def _path(*folders: str) -> dict[str, str]:
    return {"PATH": os.pathsep.join([*folders, os.environ["PATH"]])}


def _works(home: Home, name: str, entry: dict[str, Any], env: dict[str, str] | None = None) -> str:
    """`hermes mcp test` of the entry, which must connect inside the sandbox; its output."""
    write_config(home, {"mcp_servers": {name: entry}})
    tested = hermes("mcp", "test", name, home=home, env=env)
    assert tested.returncode == 0, tested.stdout + tested.stderr + home.server_log(name).read_text()[-3000:]
    assert "sandbox: on" in tested.stdout and "tools offered" in tested.stdout
    return tested.stdout


def test_npx_first_start_and_warm(home: Home, layouts: Layouts, elsewhere: Path, registry: str) -> None:
    entry = {"command": "npx", "args": ["-y", f"{EVERYTHING}@{layouts.everything_version}", "stdio"],
             "env": {"npm_config_registry": registry}}
    first = _works(home, "everything", entry, _path(layouts.node_bin))
    log = home.server_log("everything").read_text()
    assert "first start: fetching the package" in log and "echo" in first
    again = _works(home, "everything", entry, _path(layouts.node_bin))
    assert "echo" in again and home.server_log("everything").read_text().count("first start: fetching") == 1


def test_a_local_npm_install_from_its_bin_folder_and_by_node(home: Home, layouts: Layouts, elsewhere: Path) -> None:
    bin_script = layouts.npm.root / "node_modules" / ".bin" / "mcp-server-everything"
    _works(home, "bin", {"command": str(bin_script), "args": ["stdio"]}, _path(layouts.node_bin))
    _works(home, "node", {"command": layouts.npm.node, "args": layouts.npm.everything[1:]})


def test_a_global_npm_install_on_path(home: Home, layouts: Layouts, elsewhere: Path) -> None:
    _works(home, "global", {"command": "mcp-server-everything", "args": ["stdio"]},
           _path(str(layouts.global_bin), layouts.node_bin))


def test_uvx_first_start_and_warm(home: Home, layouts: Layouts, elsewhere: Path) -> None:
    entry = {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"],
             "env": {"UV_FIND_LINKS": str(layouts.wheels), "UV_OFFLINE": "1", "UV_PYTHON": sys.executable}}
    first = _works(home, "time", entry, _path(str(layouts.uv_bin)))
    assert "get_current_time" in first
    assert "get_current_time" in _works(home, "time", entry, _path(str(layouts.uv_bin)))


def test_a_pypi_server_in_a_venv_plain_and_through_symlinked_folders(home: Home, layouts: Layouts, elsewhere: Path,
                                                                     repository: Path, tmp_path: Path) -> None:
    venv = layouts.git_bin.parent
    args = ["--repository", str(repository)]
    _works(home, "git", {"command": str(layouts.git_bin / "mcp-server-git"), "args": args})
    linked = tmp_path / "linked"
    linked.symlink_to(venv.parent)  # a folder of venvs reached through a link in an emptied place
    _works(home, "git", {"command": str(linked / venv.name / "bin" / "mcp-server-git"), "args": args})
    (elsewhere / "venv").symlink_to(venv)  # a link inside the working folder itself
    _works(home, "git", {"command": str(elsewhere / "venv" / "bin" / "mcp-server-git"), "args": args})
    relative = tmp_path / "relative"
    relative.symlink_to(os.path.relpath(venv.parent, tmp_path))
    _works(home, "git", {"command": str(relative / venv.name / "bin" / "mcp-server-git"), "args": args})


def test_a_script_with_its_own_venv_and_a_console_script_on_path(home: Home, layouts: Layouts, elsewhere: Path,
                                                                 repository: Path, tmp_path: Path) -> None:
    tools = tmp_path / "user" / "tools"
    tools.mkdir(parents=True)
    script = tools / "git-server.py"
    script.write_text(f"#!{layouts.git_bin / 'python'}\nimport sys\nfrom mcp_server_git import main\n"
                      "sys.exit(main())\n")
    script.chmod(0o755)
    _works(home, "script", {"command": str(script), "args": ["--repository", str(repository)]})
    local_bin = tmp_path / "user" / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (local_bin / "mcp-server-git").symlink_to(layouts.git_bin / "mcp-server-git")
    _works(home, "onpath", {"command": "mcp-server-git", "args": ["--repository", str(repository)]},
           _path(str(local_bin)))


def test_code_the_sandbox_hides_is_named_with_the_setting_that_fixes_it(home: Home, layouts: Layouts,
                                                                        elsewhere: Path, tmp_path: Path) -> None:
    """A program that loads code from a place nothing names (here a module path built at run time):
    the failure is one sentence with the exact fix, which `mcp configure` then writes."""
    library = tmp_path / "user" / "shared-lib"
    library.mkdir(parents=True)
    (library / "helper.cjs").write_text("module.exports = 'ok';\n")
    app = tmp_path / "user" / "app"
    app.mkdir()
    (app / "main.cjs").write_text(
        f"const lib = require([{json.dumps(str(library))}, 'helper.cjs'].join('/'));\n"
        f"import({json.dumps((layouts.npm.package('server-everything') / 'dist' / 'index.js').as_uri())});\n")
    entry = {"command": layouts.npm.node, "args": [str(app / "main.cjs"), "stdio"]}
    write_config(home, {"mcp_servers": {"app": entry}})
    failed = hermes("mcp", "test", "app", home=home)
    assert failed.returncode == 1
    assert f"could not load code from {library}, which its sandbox hides; allow it with `hermes mcp configure app " \
           f"--sandbox-read {library}`" in failed.stdout, failed.stdout
    assert "    at " not in failed.stdout  # the stack trace stays in the log
    granted = hermes("mcp", "configure", "app", "--sandbox-read", str(library), home=home)
    assert granted.returncode == 0 and f"may now read {library}" in granted.stdout
    assert hermes("mcp", "test", "app", home=home).returncode == 0


def test_a_project_s_npx_server_is_fetched_with_nothing_of_the_project_s_running(
        home: Home, layouts: Layouts, registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trusted project's entry, not granted more: its package is fetched with the network, but
    its `env:` (here `NODE_OPTIONS` that loads the project's own script into npm) and its folder's
    launcher settings play no part in the fetch; the server then runs confined, offline."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".hermes").mkdir()
    # The project's code notes when it runs with the network (a device besides loopback): the
    # confined server may run it, offline; the fetch must not.
    (project / "evil.js").write_text(
        "const fs = require('fs');\n"
        "const devices = fs.readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2).map(l => l.trim());\n"
        "if (devices.some(l => l && !l.startsWith('lo:'))) fs.writeFileSync(__dirname + '/RAN', 'x');\n")
    (project / "evil.sh").write_text("#!/bin/sh\ngrep -qv -e '^ *lo:' -e '|' /proc/net/dev && echo x > "
                                     f"{project / 'RAN'}\nexec /bin/sh \"$@\"\n")
    (project / "evil.sh").chmod(0o755)
    (project / ".npmrc").write_text(f"script-shell={project / 'evil.sh'}\n")
    entry = {"command": "npx", "args": ["-y", f"{EVERYTHING}@{layouts.everything_version}", "stdio"],
             "env": {"npm_config_registry": registry, "NODE_OPTIONS": "--require ./evil.js"}}
    (project / ".hermes" / "config.yaml").write_text(json.dumps({"mcp_servers": {"everything": entry}}))
    monkeypatch.chdir(project)
    assert hermes("mcp", "trust", home=home).returncode == 0
    user_env = {**_path(layouts.node_bin), "npm_config_registry": registry}
    tested = hermes("mcp", "test", "everything", home=home, env=user_env)
    log = home.server_log("everything").read_text()
    assert "fetched in" in log, log[-3000:]
    assert not (project / "RAN").exists()
    assert tested.returncode == 0 and "echo" in tested.stdout, tested.stdout + log[-3000:]
