"""`hermes dashboard`: the MCP menu in a browser, on loopback."""

from __future__ import annotations

import sys

import click

from hermes.home import Home


@click.command("dashboard")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Loopback port to listen on (0: any free port).")
@click.option("--no-browser", is_flag=True, help="Print the link only; do not open a browser.")
def dashboard_command(port: int, no_browser: bool) -> None:
    """Serve the dashboard on 127.0.0.1 and print its link (with its token); Ctrl-C stops it.

    The MCP menu: every server's scope, state, tools and why it is unavailable; add, remove,
    enable/disable, test, choose tools and set allow/ask/deny per tool, with the same config edits
    as the matching `hermes mcp` and `hermes tools` commands.
    """
    from hermes import interrupts
    from hermes.dashboard.serve import DashboardOptions, run_dashboard

    home = Home.from_env()
    interrupts.run(run_dashboard, home, DashboardOptions(port=port, open_browser=not no_browser),
                   stop_on_signal=True)
    sys.exit(0)
