"""Options that several commands share, defined once so they read and behave the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _known_platform(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from hermes.config.store import ConfigStore
    from hermes.home import Home
    from hermes.tools.toolsets import platform_problem

    problem = platform_problem(value, ConfigStore(Home.from_env()).load().platform_toolsets)
    if problem:
        raise click.BadParameter(problem)
    return value


def platform_option(default: str | None = "cli") -> Callable[[F], F]:
    """`--platform`: whose `platform_toolsets` apply. The agent's commands are the CLI platform's;
    `mcp serve` (default None) offers every MCP server and none of the agent's own toolsets."""
    where = default or "every MCP server, none of the agent's own toolsets"
    return click.option("--platform", callback=_known_platform, default=default, expose_value=True,
                        help=f"Platform whose toolsets apply (cli, telegram, discord, … or one named under "
                             f"platform_toolsets; default: {where}).")
wait_option = click.option("--wait", "wait", type=click.FloatRange(min=0), default=5.0, show_default=True,
                           help="Seconds to wait for slow servers; those still starting are shown as 'starting'.")
