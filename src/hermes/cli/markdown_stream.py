"""The model's answer as rendered markdown on a terminal, while it streams in.

Re-drawing a whole answer on every token (a live view) cannot erase what has scrolled off the top
of the screen, and long answers end up printed twice. So the answer is printed block by block: a
block (a paragraph, a list, a table, a fenced code block) is rendered once it is complete — a blank
line follows it, outside any open code fence — and stays as printed; the last block comes when the
answer ends. Everything is made printable first: the model's text never carries escape sequences
of its own to the terminal.
"""

from __future__ import annotations

import re
from typing import IO

from rich.console import Console
from rich.markdown import Markdown

from hermes.cli.output import printable

_FENCE = re.compile(r"^\s{0,3}(```|~~~)", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


class MarkdownStream:
    def __init__(self, out: IO[str]) -> None:
        self._console = Console(file=out, soft_wrap=False, highlight=False)
        self._pending = ""
        self._blocks = 0
        self.started = False

    def feed(self, delta: str) -> None:
        self.started = True
        self._pending += delta
        cut = self._complete_blocks()
        if cut:
            self._render(self._pending[:cut])
            self._pending = self._pending[cut:]

    def finish(self) -> None:
        """The answer ended: render what is left."""
        if self._pending.strip():
            self._render(self._pending)
        self._pending = ""
        self._blocks = 0
        self.started = False

    def _complete_blocks(self) -> int:
        """Where the complete blocks of the pending text end (0: none is complete yet)."""
        end, fences, counted = 0, 0, 0
        for match in _BLANK_LINE.finditer(self._pending):
            # Fences are counted once, up to each blank line in turn: a single pass over the text.
            fences += len(_FENCE.findall(self._pending, counted, match.start()))
            counted = match.start()
            if fences % 2 == 0:
                end = match.end()
        return end

    def _render(self, text: str) -> None:
        if self._blocks:
            self._console.print()
        self._blocks += 1
        self._console.print(Markdown(printable(text).strip("\n")))
