"""Setting up the demo story's parts: the demo app's install, its process, and the demo plugin."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hermes.apps.runtimefile import RuntimeFileError, read_runtime_file
from hermes.config.edit import set_plugin_enabled
from hermes.config.store import ConfigStore
from hermes.files import open_private_append, private_dir, private_umask
from hermes.home import Home

PLUGIN_NAME = "hermes-demo"
SERVER_NAME = "demo-app"
PLUGIN_SOURCE = Path(__file__).parent / "plugin"


def app_path(home: Home) -> Path:
    return home.root / "demo-apps" / "bin" / "hermes-demo-app"


def runtime_file(home: Home) -> Path:
    return home.root / "demo-apps" / "run" / "server.json"


def install_app(home: Home) -> Path:
    """'Install' the demo app where its plugin declares it: an executable launcher."""
    path = app_path(home)
    private_dir(path.parent)
    path.write_text(f"#!{sys.executable}\nfrom hermes.demo.app import main\n\nmain()\n")
    path.chmod(0o755)
    return path


def uninstall_app(home: Home) -> None:
    shutil.rmtree(home.root / "demo-apps", ignore_errors=True)


class DemoApps:
    """The demo app processes one story (or test) starts; whatever is left is stopped at the end."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._running: list[subprocess.Popen[bytes]] = []

    def start(self, *, timeout: float = 60) -> subprocess.Popen[bytes]:
        """Start the app and wait until its runtime file names the new process."""
        home = self.home
        env = {**os.environ, "HERMES_HOME": str(home.root)}
        log = home.logs / "demo-app.log"
        with open_private_append(log, binary=True) as errors:
            process = subprocess.Popen([str(app_path(home)), "--runtime-file", str(runtime_file(home))], env=env,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
        self._running.append(process)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the demo app exited at start (code {process.returncode}); see {log}")
            try:
                if read_runtime_file(runtime_file(home)).pid == process.pid:
                    return process
            except RuntimeFileError:
                pass
            time.sleep(0.02)
        self.stop(process)
        raise RuntimeError("the demo app did not publish its runtime file in time")

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        if process in self._running:
            self._running.remove(process)
        if process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop_all(self) -> None:
        while self._running:
            self.stop(self._running.pop())


def install_plugin_folder(home: Home) -> Path:
    """Copy the demo plugin into the plugins folder and enable it (a git install comes later)."""
    target = home.plugins / PLUGIN_NAME
    if target.exists():
        shutil.rmtree(target)
    with private_umask():
        shutil.copytree(PLUGIN_SOURCE, target)
    enable_plugin(home, PLUGIN_NAME)
    return target


def enable_plugin(home: Home, name: str) -> None:
    with ConfigStore(home).edit() as doc:
        set_plugin_enabled(doc, name, True)


def make_plugin_repo(dest: Path) -> str | None:
    """A local git repository holding the demo plugin; returns its commit, or None without git."""
    from hermes.plugins import git

    with private_umask():
        shutil.copytree(PLUGIN_SOURCE, dest)
    try:
        git.run_git("init", "--quiet", str(dest))
        git.run_git("add", "-A", cwd=dest)
        git.run_git("-c", "user.name=hermes demo", "-c", "user.email=demo@localhost", "commit", "--quiet",
                    "-m", "Demo plugin", cwd=dest)
        return git.run_git("rev-parse", "HEAD", cwd=dest)
    except git.GitError:
        shutil.rmtree(dest / ".git", ignore_errors=True)
        return None
