"""Which saved chat `hermes chat --resume/--continue` and `/resume` take up."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from hermes.agent.transcripts import Summary, TranscriptError, find, load, recent
from hermes.cli.output import printable, say
from hermes.home import Home

_LISTED = 10


def chosen_transcript(home: Home, resume: str | None, keep_going: bool, folder: Path) -> Summary | None:
    """`--continue`: the newest chat of this folder; `--resume ID`; `--resume` alone: a list to pick from."""
    if keep_going:
        latest = recent(home, folder=folder.resolve(), limit=1) or recent(home, folder=folder, limit=1)
        if not latest:
            raise TranscriptError(f"No saved chat from {folder} to continue (`hermes chat --resume` lists them all).")
        summary = latest[0]
    elif resume:
        summary = find(home, resume)
    elif resume is not None:
        summary = _pick(home)
    else:
        return None
    load(summary)  # a broken file is refused now, before any server starts
    return summary


def _pick(home: Home) -> Summary:
    listed = recent(home, limit=_LISTED)
    if not listed:
        raise TranscriptError("There is no saved chat yet.")
    if not sys.stdin.isatty():
        lines = "\n".join(f"  {printable(s.line())}" for s in listed)
        raise TranscriptError(f"Give the chat to resume: `hermes chat --resume ID`. The newest:\n{lines}")
    for number, summary in enumerate(listed, start=1):
        say(f"{number:>2}. {printable(summary.line())}", err=True)
    answer = click.prompt("Resume which (number or id)", default="1", err=True)
    if answer.strip().isdigit() and 1 <= int(answer) <= len(listed):
        return listed[int(answer) - 1]
    return find(home, answer.strip())


def resumed_line(summary: Summary, count: int) -> str:
    return f"Resumed {summary.id} ({count} messages, started in {summary.folder})."


def slash_resume(chat: Any, text: str, home: Home) -> None:
    """`/resume` lists the newest saved chats; `/resume ID` takes one up (this one stays saved)."""
    parts = text.split()
    if len(parts) == 1:
        listed = recent(home, limit=_LISTED)
        for summary in listed:
            mark = "*" if summary.id == chat.transcript.id else " "
            say(f"{mark} {printable(summary.line())}")
        say("`/resume ID` takes one up." if listed else "No saved chat yet.")
        return
    try:
        summary = find(home, parts[1])
        count = chat.resume(summary)
    except TranscriptError as exc:
        say(str(exc))
        return
    say(resumed_line(summary, count))
