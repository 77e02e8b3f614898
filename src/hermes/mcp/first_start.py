"""A launcher's first start (`npx -y pkg`, `uvx pkg`): the package is fetched before the server starts.

Fetching a package can take minutes, far beyond a connect timeout, and a start killed mid-install
leaves npx's cache half-written for good. So the first time hermes starts a server through a
package launcher, it runs the launcher's warm command first (see `config.launchers`) under its own
budget (`WARM_TIMEOUT`), in the same sandbox as the server but with the network (the fetch needs it);
the connect timeout then covers the start alone. A warm command that succeeded is recorded in
`HERMES_HOME/cache/warmed.json`, so later starts go straight to the server.

A project's entry not granted more is fetched with the network only by the user's own npx (see
`refused_for_a_project`), and runs nothing of the project's: its do-nothing command is the system's
`true` (see `config.launchers.fetch_only`), from the server's own cache folder (never the
project's, with its `.npmrc`), with the user's environment instead of the entry's `env:`, and with
install scripts off.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from hermes.config.launchers import WARM_TIMEOUT, fetch_only, warm_command
from hermes.config.sandbox import Confinement, Network
from hermes.files import atomic_write, read_bounded
from hermes.mcp.children import kill_group, resolve_command, start_child
from hermes.mcp.sandbox import SandboxRequest, bwrap_argv, host_side
from hermes.mcp.sandbox_hold import SandboxChanged
from hermes.mcp.sandbox_places import inside_any

_RECORD_BYTES = 1 << 20
_OUTPUT_TAIL = 4000


def _record(path: Path) -> dict[str, float]:
    try:
        data = json.loads(read_bounded(path, _RECORD_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


def _key(warm: list[str], cache: str | None) -> str:
    return " ".join(warm) + (f" (cache {cache})" if cache else "")


def needs_warming(record: Path, command: str | None, args: tuple[str, ...], cache: str | None) -> list[str] | None:
    """The warm command of a launcher that has not fetched this package (into this cache) yet; None otherwise."""
    warm = warm_command(command, args)
    if warm is None or _key(warm, cache) in _record(record):
        return None
    return warm


def fetch_path(search: str | None, outside: Sequence[str] = ()) -> str:
    """PATH without relative entries (they name folders of whatever folder hermes runs in) and
    without entries inside `outside` (a project's folders: `node_modules/.bin` put on PATH by direnv)."""
    real = [os.path.realpath(folder) for folder in outside]
    return os.pathsep.join(folder for folder in (search or "").split(os.pathsep)
                           if os.path.isabs(folder) and not inside_any(os.path.realpath(folder), real))


def refused_for_a_project(warm: list[str], search: str | None, folders: list[str]) -> str | None:
    """Why a project's entry not granted more cannot be fetched with the network, if it cannot.

    Only the user's own npx, found on their PATH, fetches for a project: a launcher the project names
    by path (or keeps in its folder) is the project's code, and uv starts the Python of the
    environment it installs, which runs the package's `.pth` files."""
    grant = "; run `hermes mcp trust --grant` to allow it"
    if "/" in warm[0]:
        return f"a project's launcher named by path ({warm[0]}) is not run with the network{grant}"
    if os.path.basename(warm[0]) in ("uvx", "uv"):
        return f"a project's uvx package is fetched only once you grant it: installing it runs its code{grant}"
    found = shutil.which(warm[0], path=fetch_path(search))
    if found is not None and inside_any(os.path.realpath(found), [os.path.realpath(f) for f in folders]):
        return f"a project's launcher ({found}) comes from the project's own folder{grant}"
    return None


async def warm_first(record: Path, warm: list[str], *, env: dict[str, str], cwd: str | None,
                     sandbox: SandboxRequest | None, log: Callable[[str], None]) -> None:
    """Run the warm command (never raises: a failed fetch shows again, with its words, when the server starts)."""
    log(f"[hermes] first start: fetching the package with `{' '.join(warm)}` (up to {WARM_TIMEOUT:g} s)")
    command = warm
    if sandbox is not None and sandbox.settings.confinement is Confinement.PROJECT:
        # A project's package is fetched with the network, but nothing of the project's runs then:
        # no program of the package, no install script, no build, no launcher setting from the
        # project's folder (`.npmrc`, `uv.toml`), none of its `env:` (the caller's `env`).
        command = fetch_only(warm)
        env = {**env, "npm_config_ignore_scripts": "true", "PATH": fetch_path(env.get("PATH"))}
        cwd = sandbox.cache
        if cwd is not None:
            await anyio.to_thread.run_sync(functools.partial(os.makedirs, cwd, mode=0o700, exist_ok=True))
    try:
        program = resolve_command(command[0], env.get("PATH"), cwd)
    except FileNotFoundError:
        return
    argv = [program, *command[1:]]
    if sandbox is not None:
        fetching = replace(sandbox, settings=replace(sandbox.settings, network=Network.ALL, ports=()))
        where = cwd or str(Path.cwd())
        try:
            with anyio.CancelScope(shield=True):  # the files it opens are closed below, never dropped
                plan, held = await anyio.to_thread.run_sync(fetching.prepare, program, command[1:], env, where,
                                                            cwd is not None)
        except SandboxChanged as exc:
            log(f"[hermes] fetching not started: {exc}")
            return
        with held:
            env, inside = host_side(env)
            argv = [*bwrap_argv(sandbox.bwrap, plan, where, inside=inside, held=held), *argv]
            process = await start_child(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, pass_fds=held.fds)
    else:
        process = await start_child(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
    started = time.monotonic()
    try:
        with anyio.move_on_after(WARM_TIMEOUT):
            output = await _drain(process)
            code = await process.wait()
            seconds = time.monotonic() - started
            if code == 0:
                log(f"[hermes] fetched in {seconds:.1f} s")
                records = _record(record)
                records[_key(warm, sandbox.cache if sandbox else None)] = time.time()
                with contextlib.suppress(OSError):
                    atomic_write(record, json.dumps(records, indent=1) + "\n")
            else:
                log(f"[hermes] fetching failed (exit code {code}): {output.strip()}")
            return
        log(f"[hermes] fetching did not finish within {WARM_TIMEOUT:g} s")
    finally:
        if process.returncode is None:
            kill_group(process.pid)
            with anyio.CancelScope(shield=True):
                await process.wait()


async def _drain(process: anyio.abc.Process) -> str:
    """Everything the launcher prints, read to the end; its last few thousand bytes kept."""
    kept = bytearray()

    async def read(stream: anyio.abc.ByteReceiveStream | None) -> None:
        if stream is None:
            return
        async for chunk in stream:
            kept.extend(chunk)
            del kept[:max(0, len(kept) - _OUTPUT_TAIL)]

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read, process.stdout)
        tasks.start_soon(read, process.stderr)
    return bytes(kept).decode(errors="replace")
