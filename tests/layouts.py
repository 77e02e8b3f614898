"""Real MCP servers installed the ways their READMEs tell users to, for the sandbox's layout matrix.

Prepared once per machine in the test-tools cache (`tests/npm_tools.tool_cache()`), which lies in
the user's home: a place the sandbox empties, so it has to derive what each server needs.

- the local npm project of `tests/npm` (`npm ci`): server-everything from `node_modules/.bin` and
  by `node …/dist/index.js`;
- a global `npm i -g --prefix …` of server-everything (its `bin` goes on PATH);
- a loopback npm registry of those same packages (`tests/npm_registry.py`), for a real `npx -y`
  first start without the internet;
- `uv` from PyPI and a wheelhouse of `mcp-server-time`, for a real `uvx` first start (`UV_FIND_LINKS`);
- `mcp-server-git` in a venv of its own (`tests/bridge_tools.py`): plain, through a symlinked
  folder, from a script with its own venv, and as a console script linked into a folder on PATH.

Preparing reaches the npm registry and PyPI; the tests then stay on loopback.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from tests.bridge_tools import install_pinned
from tests.npm_registry import build, serve
from tests.npm_tools import PINS, NpmTools, install, tool_cache

EVERYTHING = "@modelcontextprotocol/server-everything"
UV = "uv==0.13.9"
TIME_SERVER = "mcp-server-time==2026.10.19"
_RECIPE = f"{EVERYTHING} {UV} {TIME_SERVER} registry-1"


@dataclass(frozen=True)
class Layouts:
    npm: NpmTools
    registry: Path  # the registry files; `npm_registry.serve(registry)` answers npm from them
    global_bin: Path  # `npm i -g --prefix` of server-everything: its bin folder
    uv_bin: Path  # the folder holding `uv` and `uvx`
    wheels: Path  # mcp-server-time and everything it needs, as wheels
    git_bin: Path  # mcp-server-git's venv's bin folder

    @property
    def everything_version(self) -> str:
        import json

        return str(json.loads((self.npm.package("server-everything") / "package.json").read_text())["version"])

    @property
    def node_bin(self) -> str:
        return os.path.dirname(self.npm.node)


def prepare() -> Layouts:
    """Every install of the matrix, made once (safe across workers and checkouts)."""
    npm = install()
    recipe = (PINS / "package-lock.json").read_bytes() + _RECIPE.encode()
    digest = hashlib.sha256(recipe).hexdigest()[:16]
    cache = tool_cache() / f"layouts-{digest}"
    stamp = cache / ".installed"
    layouts = Layouts(npm, cache / "registry", cache / "global" / "bin", cache / "uv" / "bin", cache / "wheels",
                      install_pinned("mcp-server-git"))
    cache.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache.with_name(cache.name + ".lock")), timeout=900):
        if not (stamp.exists() and stamp.read_text() == digest):
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir()
            _make(layouts, cache)
            stamp.write_text(digest)
    return layouts


def _make(layouts: Layouts, cache: Path) -> None:
    build(layouts.npm.root / "node_modules", EVERYTHING, layouts.registry)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the layouts of the sandbox tests")
    with serve(layouts.registry) as registry:
        subprocess.run([npm, "install", "--global", "--prefix", str(cache / "global"), "--registry", registry,
                        "--no-audit", "--no-fund", "--loglevel=error", f"{EVERYTHING}@{layouts.everything_version}"],
                       check=True, timeout=600, stdin=subprocess.DEVNULL,
                       env={**os.environ, "npm_config_cache": str(cache / "npm-cache")})
    subprocess.run([sys.executable, "-m", "venv", str(cache / "uv")], check=True, timeout=300)
    pip = [str(cache / "uv" / "bin" / "pip"), "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", UV], check=True, timeout=900, stdin=subprocess.DEVNULL)
    subprocess.run([*pip, "download", "--only-binary=:all:", "-d", str(layouts.wheels), TIME_SERVER], check=True,
                   timeout=900, stdin=subprocess.DEVNULL)
