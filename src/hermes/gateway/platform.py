"""What the gateway needs from a messaging platform, and what a platform hands the gateway.

A platform connects (Matrix through matrix-nio, Telegram through python-telegram-bot, Discord
through discord.py), hands every message it receives to `deliver`, and sends text to a room.
A question's choices become the platform's buttons where it has them; elsewhere the message
lists them and the user answers by replying. The gateway never learns which platform it talks to
beyond its name (whose `platform_toolsets` apply) and how long one message may be.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from anyio.abc import TaskStatus

CLOSE_SECONDS = 10.0


@dataclass(frozen=True)
class Button:
    label: str  # what the person reads
    data: str  # what a press hands back (`Incoming.pressed`): which question, which choice


@dataclass(frozen=True)
class Incoming:
    room: str  # the chat, room or channel: one conversation each
    sender: str  # the platform's id of who wrote it
    text: str  # what they wrote ("" for a press)
    direct: bool = False  # a one-to-one chat with the bot (only there is a pairing code offered)
    pressed: str | None = None  # the `data` of the button pressed, when this is a press


Deliver = Callable[[Incoming], Awaitable[None]]


class Platform(Protocol):
    @property
    def name(self) -> str:
        """The platform's name in `platform_toolsets` (`matrix`, `telegram`, `discord`)."""

    @property
    def max_text(self) -> int:
        """The longest message the platform takes, in characters; longer text is sent in parts."""

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        """Connect, report started once new messages are being received, hand each to `deliver` until
        cancelled. Messages sent before the start and the bot's own messages are never delivered."""

    async def send(self, room: str, text: str, buttons: Sequence[Button] = ()) -> None:
        """Send `text` to `room`, with `buttons` where the platform has them (a press comes back as an
        `Incoming` with `pressed`); raises `SendFailed` when the platform refused or could not take it."""


class SendFailed(Exception):
    """A platform did not take a message (refused, rate-limited past its retry, or unreachable)."""


def parts(text: str, limit: int) -> list[str]:
    """`text` cut into messages of at most `limit` characters, at paragraph, line or word ends where it can."""
    found: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = rest.rfind("\n\n", 0, limit)
        if cut < limit // 2:
            cut = rest.rfind("\n", 0, limit)
        if cut < limit // 2:
            cut = rest.rfind(" ", 0, limit)
        if cut < limit // 2:
            cut = limit
        found.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        found.append(rest)
    return found


async def closing(close: Callable[[], Awaitable[Any]], what: str) -> None:
    """A library's close, run even when the platform's run was cancelled (a cancelled `await` in a
    `finally` would skip it, leaving sessions and connections open), within `CLOSE_SECONDS`."""
    with anyio.CancelScope(shield=True, deadline=anyio.current_time() + CLOSE_SECONDS):
        try:
            await close()
        except Exception as exc:  # closing is best effort: the run is over either way
            logging.getLogger("hermes.gateway").warning("%s: closing failed: %s", what, exc)
