"""Shared fixtures: a temporary HERMES_HOME and real test servers over loopback HTTP."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes.home import Home
from tests.npm_tools import NpmTools, install
from tests.support import PYTHON, SERVERS, ServerPool

# A pty has no terminal answering prompt_toolkit's cursor-position request; without this, every
# prompt in a pty test waits out the request before it draws (a real terminal answers at once).
os.environ.setdefault("PROMPT_TOOLKIT_NO_CPR", "1")


def pytest_configure(config: pytest.Config) -> None:
    """Compile hermes's sources once, before any worker starts. An editable install leaves them
    uncompiled, and where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) no process
    writes bytecode: every `hermes` the suite starts would compile its modules again (0.6 s of CPU
    each, over a hundred processes)."""
    # The same setting stops pytest keeping the test modules it rewrites for its assertion
    # messages: every worker would parse and rewrite all of them again on every run (about 3 s
    # of CPU a worker). Those go to the tests' own __pycache__, which git ignores.
    sys.dont_write_bytecode = False
    if not hasattr(config, "workerinput"):  # the controller only; workers start after it
        import compileall

        import hermes

        compileall.compile_dir(str(Path(hermes.__file__).parent), quiet=1)
        _prepare_third_party_parts()


def _prepare_third_party_parts() -> None:
    """Install the third-party servers, clients and tools the suite runs against, once, before any
    worker starts: a fresh machine's installs (minutes of npm and pip) never count against a test's
    timeout, and workers never wait on each other's install lock. Each is kept in the test-tools
    cache by the digest of its pins, so this is a few stat calls once done. A part that cannot be
    installed here is left to the tests that use it, which then say why."""
    import time

    from tests.bridge_tools import install_pinned
    from tests.layouts import prepare

    started = time.monotonic()
    for part, install_part in (("the layouts of the sandbox tests (npm, uv, mcp-server-git)", prepare),
                               *((f"{name} (PyPI)", lambda name=name: install_pinned(name))
                                 for name in ("blender-mcp", "fastmcp", "fastmcp-tasks"))):
        try:
            install_part()
        except Exception as exc:  # reported, and met again by the tests that need it
            print(f"\nnote: could not prepare {part}: {exc}", file=sys.stderr)
    spent = time.monotonic() - started
    if spent > 5:
        print(f"\nthird-party parts prepared in {spent:.0f} s", file=sys.stderr)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    root = tmp_path / "hermes-home"
    root.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(root))
    monkeypatch.setenv("NO_COLOR", "1")
    return Home(root)


@pytest.fixture(scope="session")
def npm() -> NpmTools:
    """Node 22, server-everything, server-filesystem and the conformance suite (installed on first use)."""
    return install()


@pytest.fixture(scope="session")
def shared_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tool-vector cache file every worker of this run shares: the tests that encode the same
    real tools (the reference servers of the corpus) encode them once, not once per test (4 s of
    CPU each). It is a cache like a user's: written whole under its lock, so workers that write at
    once lose nothing, and a test still gets vectors it has to compute itself."""
    # Under xdist each worker's base directory is a child of the run's; alone, the run's own.
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-") else base
    return shared / "shared-tool-vectors.npz"


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start toolbox over Streamable HTTP on a free loopback port; returns its /mcp URL."""
    pool = ServerPool(tmp_path, "toolbox")

    def start(*args: str) -> str:
        port = pool.start(lambda portfile: [PYTHON, str(SERVERS / "toolbox.py"), "--http", str(portfile), *args])
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    pool.close()


def _start_oauth(pool: ServerPool, *args: str) -> str:
    port = pool.start(lambda portfile: [PYTHON, str(SERVERS / "oauth_server.py"), str(portfile), *args], timeout=30)
    return f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="session")
def _shared_oauth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One default OAuth server per worker: each test signs in from its own home, registering its
    own client, so tests share nothing through it, and each start costs a second of CPU."""
    pool = ServerPool(tmp_path_factory.mktemp("oauth-shared"), "oauth")
    yield _start_oauth(pool)
    pool.close()


@pytest.fixture
def oauth_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    """The loopback OAuth authorization server + protected MCP server; returns its /mcp URL. With
    no options, the worker's shared default server, unless `fresh=True` asks for one of its own."""
    pool = ServerPool(tmp_path, "oauth")

    def start(*args: str, fresh: bool = False) -> str:
        if args or fresh:
            return _start_oauth(pool, *args)
        return str(request.getfixturevalue("_shared_oauth_server"))

    yield start
    pool.close()


@pytest.fixture(scope="session")
def bridge_bin() -> Path:
    """The folder holding the real `blender-mcp` bridge (installed from PyPI on first use)."""
    from tests.bridge_tools import install_blender_bridge

    return install_blender_bridge()


@pytest.fixture
def blender(home: Home) -> Iterator[Any]:
    """A stand-in Blender for `home` (see `tests/blender.py`); every copy started is stopped at the end."""
    from tests.blender import StandIn

    stand_in = StandIn(home)
    yield stand_in
    stand_in.stop()
