"""One line at the bottom of the terminal that says which tools are running, for how long, and how far.

It is redrawn in place (carriage return, erase line) a few times a second while anything runs, and
taken away before anything else is written, so finished-tool lines and questions scroll above it as
ordinary lines. The ticks are event-loop timers, not a thread: every write happens on the loop that
also writes everything else, so two writers never interleave. Off a terminal it draws nothing and the
caller prints plain lines instead.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO

TICK_SECONDS = 0.25
_ERASE = "\r\x1b[K"


@dataclass
class _Running:
    name: str
    detail: str  # the arguments, shortened: the first thing cut when the line is too long
    started: float
    progress: str = ""


class StatusLine:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._running: dict[str, _Running] = {}
        self._shown = False
        self._paused = 0
        self._timer: asyncio.TimerHandle | None = None

    def started(self, call_id: str, name: str, detail: str = "") -> None:
        """Something began (or says again that it runs: its clock keeps counting from its start)."""
        earlier = self._running.get(call_id)
        self._running[call_id] = _Running(name, detail, earlier.started if earlier else time.monotonic())
        self._draw()

    def advanced(self, call_id: str, progress: str) -> None:
        running = self._running.get(call_id)
        if running is not None:
            running.progress = progress
            self._draw()

    def finished(self, call_id: str) -> None:
        self._running.pop(call_id, None)
        self._draw()

    def write_above(self, line: str) -> None:
        """A finished-tool line (or any other) goes above the status line, which then comes back."""
        self._erase()
        self._stream.write(line + "\n")
        self._draw()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """While a question is on the screen, the line keeps out of its way."""
        self._paused += 1
        self._erase()
        try:
            yield
        finally:
            self._paused -= 1
            self._draw()

    def close(self) -> None:
        self._running.clear()
        self._erase()
        self._cancel_timer()

    def _text(self) -> str:
        now = time.monotonic()
        parts = []
        for running in self._running.values():
            part = f"{running.name} {now - running.started:.1f} s"
            part = f"{part} · {running.progress}" if running.progress else part
            # With several tools running, their names and times matter more than one tool's arguments.
            parts.append(f"{part} {running.detail}".rstrip() if len(self._running) == 1 else part)
        width = shutil.get_terminal_size().columns - 1
        text = "⋯ " + " | ".join(parts)
        return text if len(text) <= width else text[:max(width - 1, 0)] + "…"

    def _draw(self) -> None:
        if not self._running or self._paused:
            self._erase()
            self._cancel_timer()
            return
        text = self._text() if "NO_COLOR" in os.environ else f"\x1b[2m{self._text()}\x1b[0m"
        self._stream.write(_ERASE + text)
        self._stream.flush()
        self._shown = True
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(TICK_SECONDS, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self._draw()

    def _erase(self) -> None:
        if self._shown:
            self._stream.write(_ERASE)
            self._stream.flush()
            self._shown = False

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
