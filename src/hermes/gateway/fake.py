"""An in-memory platform for the gateway's own rules (rooms, questions, access), beside `Platform`.

The real platforms are tested against their real servers (Synapse) or at their library's seam;
this one only stands in where the rule under test needs no network: a test says something in a
room and waits for what the gateway sends back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import TaskStatus

from hermes.gateway.platform import Button, Deliver, Incoming


@dataclass(frozen=True)
class Sent:
    room: str
    text: str
    buttons: tuple[Button, ...]

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(button.label for button in self.buttons)


class FakePlatform:
    def __init__(self, name: str = "matrix", *, max_text: int = 4000) -> None:
        self._name = name
        self._max_text = max_text
        self.sent: list[Sent] = []
        self._deliver: Deliver | None = None
        self._changed = anyio.Event()

    @property
    def name(self) -> str:
        return self._name

    @property
    def max_text(self) -> int:
        return self._max_text

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        self._deliver = deliver
        task_status.started()
        await anyio.sleep_forever()

    async def send(self, room: str, text: str, buttons: Sequence[Button] = ()) -> None:
        self.sent.append(Sent(room, text, tuple(buttons)))
        self._changed.set()
        self._changed = anyio.Event()

    async def say(self, room: str, sender: str, text: str, *, direct: bool = False) -> None:
        assert self._deliver is not None, "the gateway has not started this platform"
        await self._deliver(Incoming(room, sender, text, direct))

    async def press(self, room: str, sender: str, label: str, *, on: Sent | None = None) -> None:
        """A press on the button `label` of `on` (by default the last message to `room` with buttons)."""
        assert self._deliver is not None, "the gateway has not started this platform"
        message = on or next(sent for sent in reversed(self.sent) if sent.room == room and sent.buttons)
        button = next(button for button in message.buttons if button.label == label)
        await self._deliver(Incoming(room, sender, "", pressed=button.data))

    async def reply(self, room: str, *, after: int = 0, containing: str = "") -> Sent:
        """The first message sent to `room` at index `after` or later that contains `containing`."""
        while True:
            for sent in self.sent[after:]:
                if sent.room == room and containing in sent.text:
                    return sent
            await self._changed.wait()
