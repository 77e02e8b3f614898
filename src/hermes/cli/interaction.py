"""The CLI as an MCP client's user: progress on stderr, elicitation forms, and the `--yes` answers.

`hermes tools call` (and anything else that calls tools from a terminal) hands these to the session:
- progress: a live bar on a terminal, plain `progress:` lines otherwise (logs, CI);
- elicitation (form mode): in a terminal, a form with the schema's defaults filled in; with `--yes`,
  the defaults are accepted (a required field without one declines); otherwise declined;
- URL-mode elicitation is declined: hermes never opens a page on a server's say-so.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio.to_thread
import click
import mcp_types as types

from hermes.agent.forms import options_of
from hermes.cli.asking import answer_to
from hermes.cli.output import say
from hermes.mcp.tasks import Progress


@contextlib.contextmanager
def progress_reporter(label: str) -> Iterator[Progress]:
    """A progress callback for one call, shown on stderr while the block runs."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                      TextColumn("{task.fields[note]}"), console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=None, note="")

            async def show(progress: float, total: float | None, message: str | None) -> None:
                bar.update(task, completed=progress, total=total, note=message or "")

            yield show
        return

    async def print_line(progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        say(f"progress: {amount}" + (f" {message}" if message else ""), err=True)

    yield print_line


def defaults_of(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema's defaults as an answer, or None when a required field has no default."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    assert isinstance(properties, dict)
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    answer = {name: spec["default"] for name, spec in properties.items()
              if isinstance(spec, dict) and "default" in spec}
    if any(name not in answer for name in required):
        return None
    return answer


def _ask_form(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """Ask each field in the terminal; None when the user cancels."""
    import questionary

    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    assert isinstance(properties, dict)
    required = set(schema.get("required") or [])
    say(message, err=True)
    answer: dict[str, Any] = {}
    for name, spec in properties.items():
        spec = spec if isinstance(spec, dict) else {}
        label = str(spec.get("title") or name) + ("" if name in required else " (optional)")
        kind, default = spec.get("type"), spec.get("default")
        raw_items = spec.get("items")
        items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
        if kind == "array" and options_of(items):
            # Multi-select (2025-11-25): the answer is a list of the chosen values, never one string.
            picked = default if isinstance(default, list) else []
            value: Any = answer_to(questionary.checkbox(label, choices=[questionary.Choice(title, value=const,
                                                                                 checked=const in picked)
                                                               for const, title in options_of(items)]))
        elif options_of(spec):
            choices = options_of(spec)
            value = answer_to(questionary.select(label, choices=[questionary.Choice(title, value=const)
                                                       for const, title in choices],
                                       default=next((title for const, title in choices if const == default),
                                                    None)))
        elif kind == "boolean":
            value = answer_to(questionary.confirm(label, default=bool(default) if default is not None else False))
        else:
            text = answer_to(questionary.text(label, default="" if default is None else str(default)))
            value = text if text is None or kind not in ("integer", "number") else _number(text, kind)
        if value is None:
            return None
        if value == "" and name not in required:
            continue
        answer[name] = value
    return answer


def _number(text: str, kind: str) -> int | float | str:
    with contextlib.suppress(ValueError):
        return int(text) if kind == "integer" else float(text)
    return text


def elicitation_handler(*, yes: bool) -> Callable[[str, types.ElicitRequestParams],
                                                  Awaitable[types.ElicitResult]]:
    interactive = sys.stdin.isatty() and sys.stderr.isatty()

    async def elicit(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not isinstance(params, types.ElicitRequestFormParams):
            say(f"MCP server '{server}' asked you to open a page; hermes declined it.", err=True)
            return types.ElicitResult(action="decline")
        schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
        if interactive and not yes:
            answer = await anyio.to_thread.run_sync(_ask_form, f"MCP server '{server}' asks: {params.message}",
                                                    schema)
            return types.ElicitResult(action="cancel") if answer is None else \
                types.ElicitResult(action="accept", content=answer)
        defaults = defaults_of(schema) if yes else None
        if defaults is None:
            reason = "a required field has no default" if yes else "no terminal to ask in (use --yes for defaults)"
            click.echo(f"MCP server '{server}' asked for input ({params.message!r}); declined: {reason}.", err=True)
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=defaults)

    return elicit
