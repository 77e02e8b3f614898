"""`hermes mcp …`: configure servers, inspect them, reload running sessions, serve the surface.

Each command's module loads when it runs: `list`, `add` and `remove` never load what `serve`,
`import` or the catalog need, and nothing here imports the `mcp` SDK.
"""

from __future__ import annotations

import sys

import click

from hermes.cli.lazy_group import LazyGroup
from hermes.home import Home

_CONFIG = "hermes.cli.mcp_config_commands"
_SESSION = "hermes.cli.mcp_session_commands"
MCP_COMMANDS = {
    "add": f"{_CONFIG}:add_command",
    "add-json": f"{_CONFIG}:add_json_command",
    "remove": f"{_CONFIG}:remove_command",
    "list": f"{_CONFIG}:list_command",
    "enable": f"{_CONFIG}:enable_command",
    "disable": f"{_CONFIG}:disable_command",
    "logout": f"{_CONFIG}:logout_command",
    "get": "hermes.cli.mcp_get_command:get_command",
    "import": "hermes.cli.mcp_import:import_command",
    "trust": "hermes.cli.mcp_trust_command:trust_command",
    "catalog": f"{_SESSION}:catalog_command",
    "install": f"{_SESSION}:install_command",
    "test": f"{_SESSION}:test_command",
    "configure": f"{_SESSION}:configure_command",
    "status": f"{_SESSION}:status_command",
    "reload": f"{_SESSION}:reload_command",
    "login": f"{_SESSION}:login_command",
    "serve": f"{_SESSION}:serve_command",
}


@click.group("mcp", cls=LazyGroup, lazy_commands=MCP_COMMANDS, invoke_without_command=True)
@click.pass_context
def mcp_group(ctx: click.Context) -> None:
    """Configure, inspect and serve MCP servers (without a command: the interactive catalog picker)."""
    if ctx.invoked_subcommand is None:
        from hermes.cli.picker import run_picker

        sys.exit(run_picker(Home.from_env()))
