"""A spinner on stderr for work that can take a while, shown only to a person at a terminal."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import click


@contextlib.contextmanager
def progress(message: str) -> Iterator[None]:
    if not sys.stderr.isatty():  # a script reading stderr wants results and errors, not a spinner
        yield
        return
    if os.environ.get("CI"):  # a terminal that is recorded, not watched: one plain line, no animation
        click.echo(message, err=True)
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield
