"""Package launchers (`uvx`, `uv tool run`, `npx`): the command that fills their cache ahead of time.

A server started with `uvx pkg` or `npx -y pkg` downloads its package on the first start, which can
take minutes: far beyond a connect timeout. Warming runs the launcher once with the same package
but a command that does nothing and exits 0 when the package is healthy, so a failure means a
broken package or a missing network, never "the server does not take --help":

    uvx [opts] pkg==1 args        ->  uvx [opts] --from pkg==1 python -c pass
    uv tool run --from X cmd args ->  uv tool run --from X python -c pass
    npx -y @scope/pkg@1 args      ->  npx -y --package=@scope/pkg@1 -- node -e 0
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import PurePath

_UV_OPTIONS_WITH_VALUE = {"--from", "--with", "--with-requirements", "--python", "-p", "--index", "--index-url",
                          "--extra-index-url", "--default-index", "--constraint", "-c", "--overrides"}
_NPX_OPTIONS_WITH_VALUE = {"--package", "-p", "--cache", "--registry"}


def _uv_warm(prefix: list[str], args: list[str]) -> list[str] | None:
    kept: list[str] = []
    source: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--from" and index + 1 < len(args):
            source = args[index + 1]
            index += 2
            continue
        if arg.startswith("--from="):
            source = arg.split("=", 1)[1]
        elif arg in _UV_OPTIONS_WITH_VALUE and index + 1 < len(args):
            kept += args[index:index + 2]
            index += 2
            continue
        elif arg.startswith("-"):
            kept.append(arg)
        else:
            if source is None:
                # `uvx pkg@1.2` names a version the way uvx does; `--from` wants a requirement.
                source = arg if "://" in arg or arg.startswith("git+") else arg.replace("@", "==", 1)
            break
        index += 1
    if source is None:
        return None
    return [*prefix, *kept, "--from", source, "python", "-c", "pass"]


def _npx_warm(command: str, args: list[str]) -> list[str] | None:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--package", "-p") and index + 1 < len(args):
            return [command, "-y", f"--package={args[index + 1]}", "--", "node", "-e", "0"]
        if arg.startswith("--package="):
            return [command, "-y", arg, "--", "node", "-e", "0"]
        if arg in _NPX_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if not arg.startswith("-"):
            return [command, "-y", f"--package={arg}", "--", "node", "-e", "0"]
        index += 1
    return None


# Where the user's own environment tells the launchers to fetch from: a project's fetch uses these,
# never the project's `env:` (see `hermes.mcp.first_start`).
REGISTRY_SETTINGS = frozenset({"npm_config_registry", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX",
                               "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_NO_INDEX"})

# The do-nothing command every warm command ends with (`node -e 0`, `python -c pass`).
_DO_NOTHING = 3


def fetch_only(warm: list[str]) -> list[str]:
    """The warm command that runs nothing from the package: the launcher puts the package's own
    programs first on PATH, and a package may name one `node` or `python`, so the do-nothing
    command becomes the system's `true`, by absolute path."""
    true = next((path for path in ("/usr/bin/true", "/bin/true") if os.access(path, os.X_OK)), "/bin/true")
    return [*warm[:-_DO_NOTHING], true]


def warm_command(command: str | None, args: list[str] | tuple[str, ...]) -> list[str] | None:
    """The command that fills the launcher's cache for this server, or None if it needs no warming."""
    if command is None:
        return None
    program = PurePath(command).name
    args = list(args)
    if program == "uvx":
        return _uv_warm([command], args)
    if program == "uv" and args[:2] == ["tool", "run"]:
        return _uv_warm([command, "tool", "run"], args[2:])
    if program == "npx":
        return _npx_warm(command, args)
    return None


WARM_TIMEOUT = 900.0
_OUTPUT_LINES = 12


@dataclass(frozen=True)
class Warmed:
    """How warming went: `output` holds the last lines the launcher printed when it failed."""

    ok: bool
    seconds: float
    detail: str
    output: tuple[str, ...] = ()


def run_warm(command: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None,
             timeout: float = WARM_TIMEOUT) -> Warmed:
    """Run a warm (or install) step with stdin closed; never raises."""
    started = time.monotonic()
    if shutil.which(command[0], path=(env or os.environ).get("PATH")) is None:
        return Warmed(False, 0.0, f"'{command[0]}' is not installed")
    try:
        result = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                errors="replace", timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Warmed(False, time.monotonic() - started, f"still running after {timeout:g} s")
    except OSError as exc:
        return Warmed(False, time.monotonic() - started, exc.strerror or str(exc))
    seconds = time.monotonic() - started
    if result.returncode == 0:
        return Warmed(True, seconds, "ready")
    lines = [line for line in (result.stderr + "\n" + result.stdout).strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return Warmed(False, seconds, f"exit code {result.returncode}" + (f": {last}" if last else ""),
                  tuple(lines[-_OUTPUT_LINES:]))
