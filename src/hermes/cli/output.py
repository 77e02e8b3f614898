"""Printing: JSON for scripts, plain tables for people (colour only on a terminal, NO_COLOR wins)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A column-aligned table; plain text so that piping and grepping work the same as reading."""
    if not rows:
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    header = line(headers)
    click.echo(click.style(header, bold=True) if _colour() else header)
    for row in rows:
        click.echo(line(row))


def _colour() -> bool:
    import os

    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def say(text: str, *, err: bool = False, fg: str | None = None) -> None:
    click.echo(click.style(text, fg=fg) if fg and _colour() else text, err=err)
