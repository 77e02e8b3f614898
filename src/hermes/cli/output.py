"""Printing: JSON for scripts, plain tables for people (colour only on a terminal, NO_COLOR wins)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click

from hermes.validation import valid_text


def print_json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False)
    if not valid_text(text):
        # A lone surrogate (a YAML "\ud800" escape, a file name's undecodable byte) has no UTF-8 form;
        # JSON's own escape writes it, as `\ud800`, and every reader gets the same string back.
        text = json.dumps(data, indent=2, ensure_ascii=True, sort_keys=False)
    click.echo(text)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, shrink: Sequence[str] = ()) -> None:
    """A column-aligned table; plain text so that piping and grepping work the same as reading.

    On a terminal (or with COLUMNS set) the table fits the width: the columns named in `shrink`
    (long ones such as a target or an include list) are cut with '…', the last named first.
    """
    if not rows:
        return
    rows = [[printable(cell).replace("\n", " ") for cell in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    limit = _width()
    if limit is not None:
        for name in reversed(shrink):
            index = list(headers).index(name)
            excess = sum(widths) + 2 * (len(widths) - 1) - limit
            if excess <= 0:
                break
            widths[index] = max(len(name), 12, widths[index] - excess)

    def fit(cell: str, width: int) -> str:
        return cell if len(cell) <= width else cell[:width - 1] + "…"

    def line(cells: Sequence[str]) -> str:
        return "  ".join(fit(c, w).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    header = line(headers)
    click.echo(click.style(header, bold=True) if _colour() else header)
    for row in rows:
        click.echo(line(row))


def _width() -> int | None:
    """The width to fit: COLUMNS when set, the terminal's when stdout is one; else None (no cutting)."""
    import os
    import shutil

    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def _colour() -> bool:
    import os

    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def colour_output() -> bool:
    """Whether stdout is a terminal that takes colour (no NO_COLOR)."""
    return _colour()


_CONTROL = {c: None for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]}


def printable(text: str) -> str:
    """Text for the terminal: control characters (escape sequences a plugin, server or model could
    plant in a name or a description) and hidden characters removed; newlines and tabs kept."""
    from hermes.security.invisible import visible

    shown = visible(text).translate(_CONTROL)
    if not valid_text(shown):
        # A lone surrogate (a YAML "\ud800" escape, an undecodable byte of a file name) cannot be
        # written to a UTF-8 terminal: it is shown as the replacement character.
        shown = "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in shown)
    return shown


def say(text: str, *, err: bool = False, fg: str | None = None) -> None:
    text = printable(text)
    click.echo(click.style(text, fg=fg) if fg and _colour() else text, err=err)
