"""Saved chats: each conversation as a private file, to resume later (`--resume`, `--continue`, `/resume`).

`HERMES_HOME/transcripts/<id>.jsonl`, 0600: a header line (the id, when it started, the folder it ran
in, the model) and then the conversation's messages, one per line, exactly as they were sent to the
model, so already redacted: nothing a transcript holds was not in a request. Saved after every
turn: appended while the history only grows, rewritten (atomically) when it was cut or replaced.
The newest `KEEP` transcripts stay; older ones are removed when a new one starts.

A transcript is read back as hostile input: bounded in size and count, every line checked for the
shape a message has, the history then made valid again (every tool call answered, no two user
messages in a row) by the same conversation that keeps it valid while chatting.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.errors import HermesError
from hermes.files import (
    TooLarge,
    UnreadableFile,
    atomic_write,
    open_private_append,
    private_dir,
    read_bounded,
    read_head,
)
from hermes.home import Home

KEEP = 200
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
MAX_MESSAGES = 20_000
_HEADER_BYTES = 64 * 1024
_ROLES = ("user", "assistant", "tool")


class TranscriptError(HermesError):
    exit_code = 2


@dataclass(frozen=True)
class Summary:
    """One saved chat, as a list shows it."""

    id: str
    started: float
    folder: str
    model: str
    first: str  # the first thing the user said, one line
    path: Path

    def line(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.started))
        return f"{self.id}  {when}  {self.model}  {self.first[:60]}"


def folder_of(home: Home) -> Path:
    return home.root / "transcripts"


def new_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


class Transcript:
    """The file one conversation is saved to."""

    def __init__(self, home: Home, *, folder: Path, model: str, transcript_id: str | None = None) -> None:
        self.id = transcript_id or new_id()
        self.path = folder_of(home) / f"{self.id}.jsonl"
        self._header = {"hermes_transcript": 1, "id": self.id, "started": time.time(), "folder": str(folder),
                        "model": model}
        self._saved: list[dict[str, Any]] = []
        self._home = home

    @classmethod
    def resumed(cls, home: Home, summary: Summary, messages: list[dict[str, Any]]) -> Transcript:
        transcript = cls(home, folder=Path(summary.folder), model=summary.model, transcript_id=summary.id)
        transcript._header["started"] = summary.started
        transcript._saved = list(messages)
        return transcript

    def save(self, messages: list[dict[str, Any]]) -> None:
        """Bring the file up to `messages`; never raises (a full disk must not end the chat)."""
        if not messages and not self._saved:
            return
        with contextlib.suppress(OSError, ValueError):
            saved = len(self._saved)
            if saved and messages[:saved] == self._saved:
                new = messages[saved:]
                if new:
                    with open_private_append(self.path) as handle:
                        handle.write("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in new))
            else:
                if not saved:
                    _prune(folder_of(self._home))
                lines = [self._header, *messages]
                atomic_write(self.path, "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in lines))
            self._saved = list(messages)


def _prune(folder: Path) -> None:
    private_dir(folder)
    files = sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime if p.exists() else 0)
    for old in files[:max(0, len(files) - KEEP + 1)]:
        with contextlib.suppress(OSError):
            old.unlink()


def _summary(path: Path) -> Summary | None:
    """The header and first user message of a transcript; None when it is not one."""
    try:
        head = read_head(path, _HEADER_BYTES, follow_symlinks=False)  # never a FIFO's blocking open
    except OSError:
        return None
    lines = head.split(b"\n")
    try:
        header = json.loads(lines[0])
    except (ValueError, RecursionError):
        return None
    if not isinstance(header, dict) or header.get("hermes_transcript") != 1 or header.get("id") != path.stem:
        return None
    first = ""
    for raw in lines[1:-1]:
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            break
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            first = " ".join(message["content"].split())
            break
    started = header.get("started")
    return Summary(path.stem, float(started) if isinstance(started, (int, float)) else path.stat().st_mtime,
                   str(header.get("folder", "")), str(header.get("model", "")), first, path)


def recent(home: Home, *, folder: Path | None = None, limit: int = 20) -> list[Summary]:
    """The newest transcripts first (of `folder` only, when given)."""
    place = folder_of(home)
    if not place.is_dir():
        return []
    paths = sorted(place.glob("*.jsonl"), key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
    found = []
    for path in paths:
        summary = _summary(path)
        if summary is None or (folder is not None and summary.folder != str(folder)):
            continue
        found.append(summary)
        if len(found) >= limit:
            break
    return found


def find(home: Home, wanted: str) -> Summary:
    """The transcript `wanted` names: its id, or the start of exactly one id."""
    matches = [s for s in recent(home, limit=KEEP) if s.id == wanted or s.id.startswith(wanted)]
    exact = [s for s in matches if s.id == wanted]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
    if not matches:
        raise TranscriptError(f"No saved chat '{wanted}' in {folder_of(home)} (`hermes chat --resume` lists them).")
    raise TranscriptError(f"'{wanted}' starts {len(matches)} saved chats' ids: "
                          f"{', '.join(s.id for s in matches[:5])}; give more of it.")


def _message(value: Any, line: int, path: Path) -> dict[str, Any]:
    def bad(rule: str) -> TranscriptError:
        return TranscriptError(f"{path}: line {line} {rule}; the chat cannot be resumed from it.")

    if not isinstance(value, dict) or value.get("role") not in _ROLES:
        raise bad("is not a message (a role of user, assistant or tool)")
    content = value.get("content")
    if not (content is None or isinstance(content, str)):
        raise bad("has a content that is not text")
    message: dict[str, Any] = {"role": value["role"], "content": content}
    if value["role"] == "tool":
        if not isinstance(value.get("tool_call_id"), str):
            raise bad("is a tool result without a tool_call_id")
        message["tool_call_id"] = value["tool_call_id"]
    calls = value.get("tool_calls")
    if value["role"] == "assistant" and calls:
        if not isinstance(calls, list) or not all(_is_call(c) for c in calls):
            raise bad("has tool_calls that are not calls (id, function name and arguments text)")
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["function"]["name"],
                                               "arguments": c["function"]["arguments"]}} for c in calls]
    return message


def _is_call(call: Any) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return isinstance(call, dict) and isinstance(call.get("id"), str) and isinstance(function, dict) \
        and isinstance(function.get("name"), str) and isinstance(function.get("arguments"), str)


def load(summary: Summary) -> list[dict[str, Any]]:
    """The messages of a transcript, checked line by line; one sentence naming the file when it is broken."""
    path = summary.path
    try:
        raw = read_bounded(path, MAX_TRANSCRIPT_BYTES, follow_symlinks=False)
    except TooLarge:
        raise TranscriptError(f"{path} is larger than {MAX_TRANSCRIPT_BYTES} bytes; it cannot be resumed.") from None
    except UnreadableFile as exc:
        raise TranscriptError(f"{path} cannot be resumed: {exc.reason}.") from None
    except OSError as exc:
        raise TranscriptError(f"{path} cannot be read ({os.strerror(exc.errno) if exc.errno else exc}).") from None
    lines = raw.decode("utf-8", errors="replace").split("\n")[1:]
    messages: list[dict[str, Any]] = []
    for number, text in enumerate(lines, start=2):
        if not text.strip():
            continue
        if len(messages) >= MAX_MESSAGES:
            raise TranscriptError(f"{path} holds more than {MAX_MESSAGES} messages; it cannot be resumed.")
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            if number == len(lines) + 1:
                break  # the last line was cut (hermes stopped while writing it): the rest holds
            raise TranscriptError(f"{path}: line {number} is not JSON; the chat cannot be resumed from it.") from None
        messages.append(_message(value, number, path))
    return messages
