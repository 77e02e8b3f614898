"""Shell completion: commands, server names, tool names and plugin names (bash, zsh, fish).

Completion runs on every Tab, so nothing here connects to a server: server names come from the
config files, tool names from the cache a session keeps of what each server offered last time,
plugin names from the plugins folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from hermes.home import Home

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")


def _matching(names: list[str], incomplete: str) -> list[CompletionItem]:
    # Loaded at a Tab only: every command that offers completion imports this module (1.5 ms).
    from click.shell_completion import CompletionItem

    return [CompletionItem(name) for name in sorted(set(names)) if name.startswith(incomplete)]


def complete_servers(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from pathlib import Path

    from hermes.session.servers import known_server_names

    return _matching(known_server_names(Home.from_env(), Path.cwd()), incomplete)


def complete_tools(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from hermes.session.known_tools import KnownToolCounts

    cache = KnownToolCounts(Home.from_env().known_tools)
    return _matching([name for names in cache.names.values() for name in names], incomplete)


def complete_plugins(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    folder = Home.from_env().plugins
    names = [p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")] if folder.is_dir() else []
    return _matching(names, incomplete)


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion_command(shell: str) -> None:
    """Print the completion script for SHELL (see the README for where to put it)."""
    from click.shell_completion import get_completion_class

    root: Any = click.get_current_context().find_root().command
    cls = get_completion_class(shell)
    assert cls is not None
    click.echo(cls(root, {}, "hermes", "_HERMES_COMPLETE").source())


