"""`hermes plugins validate`: strict manifest checks plus informational availability lines.

Availability never fails validation: a plugin for an app this machine lacks is still a valid
plugin. `--install-deps` warms what the plugin's servers launch with (`uvx`, `uv tool run`,
`npx`), since a cold first start can take minutes and would otherwise hit the connect timeout.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hermes.apps.availability import check_availability
from hermes.apps.host import Host
from hermes.config.model import ServerConfig
from hermes.plugins.manifest import Plugin, load_plugin
from hermes.security.environment import child_environment

WARM_TIMEOUT = 900
_UV_FAMILY = {"uvx", "uv"}
_NODE_FAMILY = {"npx", "pnpx", "bunx"}


@dataclass
class Validation:
    plugin: Plugin
    lines: list[str] = field(default_factory=list)


def validate(path: Path, host: Host, data_root: Path) -> Validation:
    plugin = load_plugin(path, data_root)
    report = Validation(plugin)
    lines = report.lines
    lines.append(f"plugin.json: ok ({plugin.name} {plugin.manifest.version or '(no version)'})")
    lines.append(f"mcp.json: {len(plugin.servers)} server(s): {', '.join(sorted(plugin.servers)) or '-'}")
    lines += [f"warning: {w}" for w in plugin.warnings]
    for server, declaration in sorted(plugin.declarations.items()):
        availability = check_availability(declaration, host)
        lines.append(f"server availability: {server} — {availability.describe()}")
        if declaration.requires.min_version and not declaration.version_enforced_on("linux") \
                and declaration.app and "linux" in declaration.app.blocks:
            lines.append(f"note: {server} reads no version on Linux, so min_version "
                         f"{declaration.requires.min_version} is not enforced there")
    return report


def warm_command(config: ServerConfig) -> list[str] | None:
    """The command that fills the package cache for a server, or None if it needs no warming."""
    if config.command is None:
        return None
    program = Path(config.command).name
    if program in _UV_FAMILY:
        return [config.command, *config.args, "--help"]
    if program in _NODE_FAMILY:
        return [config.command, *config.args]
    return None


@dataclass(frozen=True)
class WarmResult:
    server: str
    ok: bool
    seconds: float
    detail: str


def install_deps(plugin: Plugin, *, on_start: Callable[[str, list[str]], None] | None = None,
                 timeout: float = WARM_TIMEOUT) -> list[WarmResult]:
    """Warm every server's launcher; a failure is reported and the next server still runs."""
    import os

    results: list[WarmResult] = []
    for server, config in sorted(plugin.servers.items()):
        command = warm_command(config)
        if command is None:
            continue
        if on_start is not None:
            on_start(server, command)
        started = time.monotonic()
        if shutil.which(command[0], path=os.environ.get("PATH")) is None:
            results.append(WarmResult(server, False, 0.0, f"'{command[0]}' is not installed"))
            continue
        try:
            # stdin is closed: a server that starts instead of printing help reads EOF and exits.
            result = subprocess.run(command, cwd=config.cwd, env=child_environment(dict(os.environ), config.env),
                                    stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                                    check=False)
        except subprocess.TimeoutExpired:
            results.append(WarmResult(server, False, time.monotonic() - started, f"still running after {timeout:g} s"))
            continue
        except OSError as exc:
            results.append(WarmResult(server, False, time.monotonic() - started, str(exc)))
            continue
        tail = (result.stderr or result.stdout).strip().splitlines()
        detail = "ready" if result.returncode == 0 else f"exit code {result.returncode}: {tail[-1] if tail else ''}"
        results.append(WarmResult(server, result.returncode == 0, time.monotonic() - started, detail))
    return results
