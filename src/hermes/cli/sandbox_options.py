"""`--sandbox-read` / `--sandbox-write`: folders a stdio server's sandbox shares, from the command line.

`hermes mcp add` writes them with the entry; `hermes mcp configure NAME --sandbox-read PATH` adds
them to an existing entry, the fix hermes names when a sandboxed start fails for want of a folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
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
