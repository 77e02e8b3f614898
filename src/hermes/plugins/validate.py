"""`hermes plugins validate`: strict manifest checks plus informational availability lines.

Availability never fails validation: a plugin for an app this machine lacks is still a valid
plugin. `--install-deps` warms what the plugin's servers launch with (`uvx`, `uv tool run`,
`npx`), since a cold first start can take minutes and would otherwise hit the connect timeout.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hermes.apps.availability import check_availability
from hermes.apps.declaration import LivenessKind
from hermes.apps.host import Host
from hermes.apps.liveness import unexpandable
from hermes.config.launchers import WARM_TIMEOUT, run_warm, warm_command
from hermes.plugins.manifest import Plugin, load_plugin
from hermes.security.environment import child_environment


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
        liveness = declaration.liveness_for(host.os_name)
        if liveness is not None and liveness.kind is LivenessKind.SERVER_JSON:
            problem = unexpandable(liveness, host)
            if problem:
                lines.append(f"warning: {server}: {problem}; its tools will be unavailable here "
                             f"(endpoint_unavailable)")
        if declaration.requires.min_version and not declaration.version_enforced_on("linux") \
                and declaration.app and "linux" in declaration.app.blocks:
            lines.append(f"note: {server} reads no version on Linux, so min_version "
                         f"{declaration.requires.min_version} is not enforced there")
    return report


@dataclass(frozen=True)
class WarmResult:
    server: str
    ok: bool
    seconds: float
    detail: str
    output: tuple[str, ...] = ()


def install_deps(plugin: Plugin, *, on_start: Callable[[str, list[str]], None] | None = None,
                 timeout: float = WARM_TIMEOUT) -> list[WarmResult]:
    """Warm every server's launcher; a failure is reported and the next server still runs."""
    results: list[WarmResult] = []
    for server, config in sorted(plugin.servers.items()):
        command = warm_command(config.command, config.args)
        if command is None:
            continue
        if on_start is not None:
            on_start(server, command)
        warmed = run_warm(command, cwd=config.cwd, env=child_environment(dict(os.environ), config.env),
                          timeout=timeout)
        results.append(WarmResult(server, warmed.ok, warmed.seconds, warmed.detail, warmed.output))
    return results
