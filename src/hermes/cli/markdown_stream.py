"""The model's answer as rendered markdown on a terminal, while it streams in.

Re-drawing a whole answer on every token (a live view) cannot erase what has scrolled off the top
of the screen, and long answers end up printed twice. So the answer is printed block by block: a
block (a paragraph, a list, a table, a fenced code block) is rendered once it is complete — a blank
line follows it, outside any open code fence — and stays as printed; the last block comes when the
answer ends. Until its block is complete, the text shows as it comes, plain; the rendered block
then takes its place (when the plain text still fits on the screen: what scrolled off cannot be
erased, so such a block stays plain). An answer cut short (Ctrl-C) keeps what was shown and
forgets the rest: nothing of it comes back before the next answer. Everything is made printable
first: the model's text never carries escape sequences of its own to the terminal.
"""

from __future__ import annotations

import math
import re
import shutil
from typing import IO

from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown

from hermes.cli.output import printable

_FENCE = re.compile(r"^\s{0,3}(```|~~~)", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


class MarkdownStream:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._console = Console(file=out, soft_wrap=False, highlight=False)
        self._pending = ""
        self._shown = ""  # the pending text as shown so far, plain
        self._blocks = 0
        self.started = False

    def feed(self, delta: str) -> None:
        self.started = True
        self._pending += delta
        cut = self._complete_blocks()
        if not cut:
            self._show(delta)
            return
        self._replace(self._pending[:cut])
        self._pending = self._pending[cut:]
        self._show(self._pending)

    def finish(self) -> None:
        """The answer ended: render what is left."""
        if self._pending.strip():
            self._replace(self._pending)
        elif self._shown:
            self._out.write("\n")
        self._reset()

    def abandon(self) -> None:
        """The answer was cut short: what was shown stays, the rest is forgotten."""
        if self._shown:
            self._out.write("\n")
            self._out.flush()
        self._reset()

    def _reset(self) -> None:
        self._pending = self._shown = ""
        self._blocks = 0
        self.started = False

    def _show(self, text: str) -> None:
        if not text:
            return
        if not self._shown and self._blocks:
            self._out.write("\n")  # where the blank line between rendered blocks will be
            self._shown = "\n"
        self._out.write(printable(text))
        self._out.flush()
        self._shown += text

    def _replace(self, block: str) -> None:
        """Render `block` where its plain text is shown (or, when that scrolled away, leave it plain)."""
        shown, self._shown = self._shown, ""
        if shown:
            size = shutil.get_terminal_size()
            width = max(size.columns, 1)
            rows = sum(max(1, math.ceil(cell_len(line) / width)) for line in printable(shown).split("\n"))
            if rows >= size.lines:
                if not shown.endswith("\n"):
                    self._out.write("\n")
                self._blocks += 1
                return
            self._out.write("\r" + (f"\x1b[{rows - 1}A" if rows > 1 else "") + "\x1b[J")
        self._render(block)

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
