"""`hermes mcp trust`: let a project folder's servers start, and grant what they ask beyond it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hermes.cli.mcp_config_commands import reload_running
from hermes.cli.output import say
from hermes.home import Home


@click.command("trust")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--grant/--no-grant", default=None,
              help="Also give its servers what they ask beyond the folder (listed first); without either, "
                   "a terminal asks and anything else trusts without it.")
def trust_command(folder: Path | None, grant: bool | None) -> None:
    """Trust a project folder (default: this project) for its servers: they start from now on.

    Confined like a plugin's: what an entry asks beyond the folder (sandbox off, folders to read or
    write, host ports, folders in its arguments, approval or sampling without asking) is listed and
    given only with --grant or your answer. Its skills are trusted on their own, with `hermes skills trust`.
    """
    from hermes.config.grants import all_grants
    from hermes.config.project import find_project
    from hermes.config.store import ConfigStore
    from hermes.config.trust import CONFIG_NAME, TrustKind, TrustStore
    from hermes.config.yamltext import read_yaml_text

    home = Home.from_env()
    chosen = folder or find_project(Path.cwd(), home) or Path.cwd()
    target = TrustStore(home, TrustKind.SERVERS).trust_project(chosen)
    config_file = target / CONFIG_NAME
    servers = ConfigStore(home, config_file).parse(read_yaml_text(config_file)).mcp_servers \
        if config_file.is_file() else {}
    asks = all_grants(servers, target)
    if asks:
        say(f"Its servers ask for more than the folder {target}:")
        for name, asked in asks.items():
            say(f"  {name}: " + "; ".join(asked))
        if grant is None and sys.stdin.isatty():
            answer = click.prompt("Type 'grant' to give them this, or press Enter to trust without it",
                                  default="", show_default=False)
            grant = answer.strip().lower() == "grant"
        stores = TrustStore(home, TrustKind.GRANTS)
        if grant:
            stores.trust(target)
            say(f"Granted: {', '.join(asks)} get what they ask, until .hermes changes.")
        else:
            stores.forget(target)
    say(f"Trusted {target} for its servers: the MCP servers of its .hermes/config.yaml start from now on "
        f"(its skills are trusted on their own, with `hermes skills trust`); any change to .hermes asks again.")
    if asks and not grant:
        say(f"Not granted: they run confined to the folder. To give them what they ask, run "
            f"`hermes mcp trust --grant {target}`.")
    reload_running(home)
