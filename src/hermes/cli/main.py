"""Entry point: `hermes` and `python -m hermes`.

Exit codes: 0 success, 1 failure, 2 usage or config error, 3 no such server/plugin. Every
`HermesError` becomes one sentence on stderr and its exit code; nothing else is printed for it.
"""

from __future__ import annotations

import sys

import click

from hermes import __version__
from hermes.cli.mcp_commands import mcp_group
from hermes.cli.plugins_commands import plugins_group, skills_group
from hermes.cli.tools_commands import tools_group
from hermes.errors import HermesError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hermes")
def cli() -> None:
    """hermes: many MCP servers, one clean, safe and honest tool surface."""


cli.add_command(mcp_group)
cli.add_command(tools_group)
cli.add_command(plugins_group)
cli.add_command(skills_group)


@cli.command("demo")
@click.option("--home", "home_dir", help="Use this HERMES_HOME instead of a temporary folder.")
def demo_command(home_dir: str | None) -> None:
    """Walk the whole story offline: a plain server, then an app-bound server and its app."""
    from hermes.demo.story import run_demo

    sys.exit(run_demo(home_dir))


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if isinstance(exc, click.UsageError) else exc.exit_code)
    except HermesError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
