"""Options that several commands share, defined once so they read and behave the same everywhere."""

from __future__ import annotations

import click

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


platform_option = click.option("--platform", callback=_known_platform, expose_value=True,
                               help="Platform whose toolsets apply (cli, telegram, discord, … or one named under "
                                    "platform_toolsets).")
wait_option = click.option("--wait", "wait", type=click.FloatRange(min=0), default=5.0, show_default=True,
                           help="Seconds to wait for slow servers; those still starting are shown as 'starting'.")
