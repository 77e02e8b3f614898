"""`--sandbox-read` / `--sandbox-write`: folders a stdio server's sandbox shares, from the command line.

`hermes mcp add` writes them with the entry; `hermes mcp configure NAME --sandbox-read PATH` adds
them to an existing entry, the fix hermes names when a sandboxed start fails for want of a folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from hermes.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])


def sandbox_path_options(command: F) -> F:
    command = click.option("--sandbox-write", "sandbox_write", multiple=True, metavar="PATH",
                           help="A folder or file its sandbox lets it write (repeatable).")(command)
    return click.option("--sandbox-read", "sandbox_read", multiple=True, metavar="PATH",
                        help="A folder or file its sandbox lets it read (repeatable).")(command)


def sandbox_paths(option: str, values: tuple[str, ...]) -> list[str]:
    """The paths as config.yaml keeps them: `~/…` as typed, a relative one made absolute from here,
    each checked by the same rules as the config's own `sandbox.read`/`write`."""
    from hermes.config.sandbox import SandboxSettings
    from hermes.validation import Invalid

    paths = [value if value.startswith(("/", "~")) else os.path.abspath(value) for value in values]
    try:
        SandboxSettings.read_setting({"read": paths}, (option,))
    except Invalid as exc:
        raise UsageError(f"{option} {exc.rule}.") from None
    return paths


def grant_sandbox_paths(name: str, scope: str, read: tuple[str, ...], write: tuple[str, ...]) -> None:
    """`hermes mcp configure NAME --sandbox-read/--sandbox-write`: add them to the entry in `scope`'s file."""
    from hermes.cli.mcp_config_commands import edited, reload_running
    from hermes.cli.output import say
    from hermes.config.edit import add_sandbox_paths
    from hermes.home import Home

    home = Home.from_env()
    readable, writable = sandbox_paths("--sandbox-read", read), sandbox_paths("--sandbox-write", write)
    store, edit = edited(home, scope)
    if name not in store.load().mcp_servers:
        raise UsageError(f"MCP server '{name}' is not in the {scope} config ({Path(store.path)}); see "
                         f"`hermes mcp list` for its scope and add --scope.")
    with store.edit() as doc:
        add_sandbox_paths(doc, name, readable, writable)
    edit.done()
    granted = [f"read {p}" for p in readable] + [f"write {p}" for p in writable]
    say(f"MCP server '{name}' may now {', '.join(granted)} inside its sandbox ({store.path}).")
    reload_running(home)
