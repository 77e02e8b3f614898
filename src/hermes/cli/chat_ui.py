"""The two faces of `hermes chat`: a one-shot run (no one to ask) and a terminal with a person.

One-shot: tool activity goes to stderr as plain lines, the answer to stdout; a tool that asks for
approval is refused unless `--yes`; sampling follows the server's `auto_approve`; elicitation is
declined. Terminal: the answer streams in, a live status line says which tools run, for how long
and how far (their progress), a line per tool when it ends, and questions
(approve this tool? this sampling request? this form?) are asked in place, one at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import click
import mcp_types as types

from hermes.agent.approval import Decision
from hermes.agent.ui import RunStatus
from hermes.cli.interaction import elicitation_handler
from hermes.cli.output import colour_output, printable
from hermes.cli.status_line import StatusLine
from hermes.mcp.tasks import Progress
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool

if TYPE_CHECKING:
    from hermes.cli.markdown_stream import MarkdownStream

# An approval question shows every argument; past this many lines, a head and a tail, and [v]iew.
FOLD_AFTER, FOLD_HEAD, FOLD_TAIL = 40, 30, 5
_MARKS = {RunStatus.OK: "✓", RunStatus.ERROR: "✗", RunStatus.UNAVAILABLE: "⚠", RunStatus.DENIED: "⊘",
          RunStatus.INVALID: "✗", RunStatus.CANCELLED: "⊘"}


def _brief(arguments: dict[str, Any] | None, limit: int = 100) -> str:
    text = printable(json.dumps(arguments, ensure_ascii=False)) if arguments else ""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _style(text: str, **how: Any) -> str:
    return text if "NO_COLOR" in os.environ else click.style(text, **how)


_MODEL_REQUEST = "model request"  # the status line's key for a request in flight


class OneShotUI:
    interactive = False

    async def text(self, delta: str) -> None:
        return None

    def waiting(self, model: str | None) -> None:
        return None

    async def tool_started(self, call_id: str, name: str, arguments: dict[str, Any] | None) -> None:
        # The name is the model's choice, not a tool's: it may hold anything, escapes included.
        click.echo(f"→ {printable(name)} {_brief(arguments)}".rstrip(), err=True)

    async def tool_finished(self, call_id: str, name: str, status: RunStatus, seconds: float, summary: str) -> None:
        detail = f": {printable(summary)}" if status is not RunStatus.OK and summary else ""
        click.echo(f"{_MARKS.get(status, '?')} {printable(name)} {status} ({seconds:.1f} s){detail}", err=True)

    def progress(self, call_id: str, name: str) -> Progress | None:
        return None

    async def approve_tool(self, tool: SurfaceTool, arguments: dict[str, Any], verdict: Verdict) -> Decision:
        return Decision.DENY

    async def notice(self, text: str) -> None:
        click.echo(printable(text), err=True)

    async def approve_sampling(self, server: str, params: types.CreateMessageRequestParams) -> Decision:
        return Decision.DENY

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        click.echo(f"MCP server '{server}' asked for input ({params.message!r}); declined: a one-shot run "
                   f"has no one to ask.", err=True)
        return types.ElicitResult(action="decline")


class TerminalUI:
    """Interactive chat: streamed answer on stdout, activity and questions on the terminal."""

    interactive = True

    def __init__(self) -> None:
        self._asking = anyio.Lock()  # one question on the screen at a time
        self._elicit = elicitation_handler(yes=False)
        self.streamed = False
        self.tools_running: set[str] = set()  # calls started and not finished (cancelled ones stay)
        # A live line while tools run when stderr is a terminal; plain lines otherwise.
        self._status = StatusLine(sys.stderr) if sys.stderr.isatty() else None
        # Answers rendered as markdown on a colour terminal; as written with NO_COLOR or no terminal.
        self._markdown: MarkdownStream | None = None
        if colour_output():
            # rich's markdown brings pygments' lexer table: a tenth of a second no plain chat needs.
            from hermes.cli.markdown_stream import MarkdownStream

            self._markdown = MarkdownStream(sys.stdout)

    async def text(self, delta: str) -> None:
        # What the model writes reaches a terminal: no escape sequence of its own (a clipboard
        # write, a window title) gets through, only text.
        self.waiting(None)
        self.streamed = True
        if self._markdown is not None:
            self._markdown.feed(delta)
            return
        sys.stdout.write(printable(delta))
        sys.stdout.flush()

    def finish_answer(self, answer: str) -> None:
        """The turn's answer is complete: what was not streamed is shown, and the line ended."""
        if not self.streamed and answer:
            if self._markdown is not None:
                self._markdown.feed(answer)
            else:
                sys.stdout.write(printable(answer))
            self.streamed = True
        if self.streamed:
            self._end_line()  # the rest of the markdown rendered, or the plain line ended
        else:
            sys.stdout.write("\n")
        sys.stdout.flush()

    def abandon_answer(self) -> None:
        """The turn ended without its answer (Ctrl-C, an error): what was shown stays, nothing of
        the rest comes back later."""
        if self._markdown is not None:
            self._markdown.abandon()
        elif self.streamed:
            sys.stdout.write("\n")
            sys.stdout.flush()
        self.streamed = False

    def waiting(self, model: str | None) -> None:
        if self._status is None:
            return
        if model is None:
            self._status.finished(_MODEL_REQUEST)
        elif not self.streamed:
            self._status.started(_MODEL_REQUEST, f"waiting for {printable(model)}")

    async def tool_started(self, call_id: str, name: str, arguments: dict[str, Any] | None) -> None:
        self.tools_running.add(call_id)
        self._end_line()
        detail, name = _brief(arguments, 60), printable(name)
        if self._status is not None:
            self._status.started(call_id, name, detail)
        else:
            click.echo(_style(f"  ⋯ {name} {detail}".rstrip(), dim=True), err=True)

    async def tool_finished(self, call_id: str, name: str, status: RunStatus, seconds: float, summary: str) -> None:
        self.tools_running.discard(call_id)
        if self._status is not None:
            self._status.finished(call_id)
        detail = f": {printable(summary)}" if status is not RunStatus.OK and summary else ""
        colour = "green" if status is RunStatus.OK else \
            "yellow" if status in (RunStatus.UNAVAILABLE, RunStatus.DENIED) else "red"
        self._line(_style(f"  {_MARKS.get(status, '?')} {printable(name)} ({seconds:.1f} s){detail}", fg=colour))

    def progress(self, call_id: str, name: str) -> Progress | None:
        async def show(progress: float, total: float | None, message: str | None) -> None:
            amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            text = printable(f"{amount} {message or ''}".rstrip())
            if self._status is not None:
                self._status.advanced(call_id, text)
            else:
                click.echo(_style(f"    {printable(name)}: {text}", dim=True), err=True)

        return show

    def close(self) -> None:
        if self._status is not None:
            self._status.close()

    def _line(self, line: str) -> None:
        if self._status is not None:
            self._status.write_above(line)
        else:
            click.echo(line, err=True)

    @contextlib.contextmanager
    def _question(self) -> Iterator[None]:
        self._end_line()
        if self._status is None:
            yield
            return
        with self._status.paused():
            yield

    def _end_line(self) -> None:
        if self.streamed:
            if self._markdown is not None:
                self._markdown.finish()
            else:
                sys.stdout.write("\n")
            sys.stdout.flush()
            self.streamed = False

    async def _choose(self, question: str, shown: list[str] | None = None, whole: list[str] | None = None, *,
                      always: str = "[a]lways") -> Decision:
        """Ask once / always / deny. `shown` is printed first; when it is a folded form of `whole`,
        [v]iew prints everything and asks again: nothing is ever cut without a way to see it."""
        from prompt_toolkit import PromptSession

        async with self._asking:
            with self._question():
                for line in shown or []:
                    click.echo(printable(line), err=True)
                while True:
                    view = " / [v]iew all" if whole is not None else ""
                    try:
                        answer = await PromptSession[str]().prompt_async(
                            f"{question} [o]nce / {always} / [d]eny{view}: ", handle_sigint=False)
                    except (EOFError, KeyboardInterrupt):
                        return Decision.DENY
                    choice = answer.strip().lower()[:1]
                    if choice == "v" and whole is not None:
                        for line in whole:
                            click.echo(printable(line), err=True)
                        continue
                    return Decision.ONCE if choice == "o" else Decision.ALWAYS if choice == "a" else Decision.DENY

    async def approve_tool(self, tool: SurfaceTool, arguments: dict[str, Any], verdict: Verdict) -> Decision:
        lines = json.dumps(arguments, indent=2, ensure_ascii=False).splitlines()
        heading = f"{tool.name} wants to run with ({'asks: ' if verdict.ruled else ''}{verdict.because}):"
        # "always" is kept in config.yaml unless a rule there says ask: then it holds for this chat.
        always = "[a]lways (this chat)" if verdict.ruled else "[a]lways (kept in config.yaml)"
        if len(lines) <= FOLD_AFTER:
            return await self._choose(f"Allow {tool.name}?", [heading, *lines], always=always)
        hidden = len(lines) - FOLD_HEAD - FOLD_TAIL
        folded = [*lines[:FOLD_HEAD], f"  … {hidden} more lines (answer v to see every line) …", *lines[-FOLD_TAIL:]]
        return await self._choose(f"Allow {tool.name}?", [heading, *folded], lines, always=always)

    async def notice(self, text: str) -> None:
        async with self._asking:
            with self._question():
                click.echo(printable(text), err=True)

    async def approve_sampling(self, server: str, params: types.CreateMessageRequestParams) -> Decision:
        lines = [f"MCP server '{server}' asks the model (up to {params.max_tokens} tokens):"]
        if params.system_prompt:
            lines += ["  system:", *(f"    {line}" for line in params.system_prompt.splitlines())]
        for message in params.messages:
            text = message.content.text if isinstance(message.content, types.TextContent) else \
                f"[{getattr(message.content, 'type', 'content')}]"
            lines += [f"  {message.role}:", *(f"    {line}" for line in text.splitlines() or [""])]
        question = "Allow this request to the model?"
        if len(lines) <= FOLD_AFTER:
            return await self._choose(question, lines)
        hidden = len(lines) - FOLD_HEAD - FOLD_TAIL
        folded = [*lines[:FOLD_HEAD], f"  … {hidden} more lines (answer v to see every line) …", *lines[-FOLD_TAIL:]]
        return await self._choose(question, folded, lines)

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        async with self._asking:
            with self._question():
                answer = await self._elicit(server, params)
        return answer
