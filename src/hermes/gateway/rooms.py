"""One conversation per room: the agent of `hermes chat`, opened when a room first speaks.

Each room gets its own chat (`open_chat`: the model, the tool loop, skills, a transcript) over its
own session, with its own server processes and its own folder for the file and terminal tools. So a
server's question always reaches the room whose call caused it, and nothing one room's tools saw or
wrote is in reach of another's. The platform's `platform_toolsets` decide the tools.

A room's messages are taken one turn at a time; what arrives meanwhile waits its turn, except the
answer to a question the turn asked and `/stop`. A room left alone for `idle_minutes` closes (its
servers stop); its next message opens it again and takes up the same transcript. At most
`max_rooms` are open: a new room closes the longest-idle one that is not in a turn.

Nobody not allowed reaches this far (see `access`): strangers get a pairing code in a one-to-one
chat and silence in a group room.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hermes.agent.chat import Chat, ChatOptions, open_chat
from hermes.agent.loop import TurnStopped
from hermes.agent.transcripts import Summary, TranscriptError, find
from hermes.config.gateway_settings import GatewaySettings
from hermes.errors import HermesError
from hermes.files import private_dir
from hermes.gateway.access import Access
from hermes.gateway.platform import Incoming, Platform
from hermes.gateway.room_log import RoomLog
from hermes.gateway.room_ui import RoomUI
from hermes.home import Home
from hermes.security.redact import Redactor

WAITING = 8  # messages a busy room keeps for its next turns
HELP = ("Write to me as you would in `hermes chat`. /new starts a new conversation, /stop stops the one "
        "running now, /tools lists what I can use here, /status says which servers are missing and why.")


@dataclass
class Room:
    platform: Platform
    id: str
    ui: RoomUI
    inbox: MemoryObjectSendStream[Incoming]
    outbox: MemoryObjectReceiveStream[Incoming]
    used: float = field(default_factory=time.monotonic)
    turn: anyio.CancelScope | None = None
    close: anyio.Event = field(default_factory=anyio.Event)

    @property
    def key(self) -> tuple[str, str]:
        return self.platform.name, self.id


class Rooms:
    def __init__(self, home: Home, settings: GatewaySettings, access: Access, tasks: TaskGroup, *,
                 secrets: list[str]) -> None:
        self._home = home
        self._settings = settings
        self._access = access
        self._tasks = tasks
        self._secrets = secrets
        self._rooms: dict[tuple[str, str], Room] = {}
        self._log = RoomLog(home)

    @property
    def open(self) -> list[tuple[str, str]]:
        return list(self._rooms)

    async def deliver(self, platform: Platform, message: Incoming) -> None:
        """A message from a platform; returns at once (turns run in the room's own task)."""
        allowed = await anyio.to_thread.run_sync(self._access.allowed, platform.name, message.sender)
        if not allowed:
            await self._stranger(platform, message)
            return
        room = self._rooms.get((platform.name, message.room)) or await self._start(platform, message.room)
        if room is None:
            return
        room.used = time.monotonic()
        if await room.ui.reply(message.sender, message.text):
            return
        if message.text.strip() == "/stop":
            if room.turn is not None:
                room.turn.cancel()
            else:
                await room.ui.say("Nothing is running.")
            return
        try:
            room.inbox.send_nowait(message)
        except anyio.WouldBlock:
            await room.ui.say(f"{WAITING} messages are already waiting for me here; send this again later.")

    async def _stranger(self, platform: Platform, message: Incoming) -> None:
        if not message.direct:
            return  # a group room: a stranger's message is not for the bot, and a code there helps no one
        try:
            code = await anyio.to_thread.run_sync(self._access.code_for, platform.name, message.sender)
        except (HermesError, OSError) as exc:
            await platform.send(message.room, f"I cannot take new users now: {exc}")
            return
        await platform.send(message.room, f"I do not know you yet. Your pairing code is {code}: the owner of "
                                          f"this hermes lets you in with `hermes gateway pair {code}` (it works "
                                          f"for an hour).")

    async def _start(self, platform: Platform, room_id: str) -> Room | None:
        if len(self._rooms) >= self._settings.max_rooms and not self._make_room():
            await platform.send(room_id, f"I am in {len(self._rooms)} conversations at once already; "
                                         f"write again in a moment.")
            return None
        redactor = Redactor(self._secrets)
        ui = RoomUI(platform, room_id, redactor, answer_seconds=self._settings.answer_minutes * 60.0)
        inbox, outbox = anyio.create_memory_object_stream[Incoming](WAITING)
        room = Room(platform, room_id, ui, inbox, outbox)
        self._rooms[room.key] = room
        self._tasks.start_soon(self._serve, room, redactor)
        return room

    def _make_room(self) -> bool:
        """Close the longest-idle room not in a turn; False when every room is busy."""
        idle = [room for room in self._rooms.values() if room.turn is None and not room.close.is_set()]
        if not idle:
            return False
        oldest = min(idle, key=lambda room: room.used)
        oldest.close.set()
        del self._rooms[oldest.key]
        return True

    async def _serve(self, room: Room, redactor: Redactor) -> None:
        folder = private_dir(room_folder(self._home, room.platform.name, room.id))
        resume = await anyio.to_thread.run_sync(self._saved, room)
        options = ChatOptions(platform=room.platform.name, folder=folder, room_folder=folder, resume=resume)
        try:
            async with open_chat(self._home, options, room.ui, redactor=redactor) as chat:
                await self._conversation(room, chat)
        except HermesError as exc:
            await room.ui.say(f"hermes cannot answer here: {exc}")
        finally:
            if self._rooms.get(room.key) is room:
                del self._rooms[room.key]
            room.inbox.close()

    async def _conversation(self, room: Room, chat: Chat) -> None:
        idle = self._settings.idle_minutes * 60.0
        async with anyio.create_task_group() as watch:
            async def closed() -> None:
                await room.close.wait()
                watch.cancel_scope.cancel()

            watch.start_soon(closed)
            while True:
                message = None
                with anyio.move_on_after(idle):
                    message = await room.outbox.receive()
                if message is None:
                    break  # idle: the room's servers stop; its next message opens it again
                await self._handle(room, chat, message)
            watch.cancel_scope.cancel()

    async def _handle(self, room: Room, chat: Chat, message: Incoming) -> None:
        command = message.text.strip()
        if command == "/help":
            await room.ui.say(HELP)
        elif command == "/new":
            chat.new()
            await room.ui.say("A new conversation starts here.")
        elif command == "/tools":
            names = sorted(chat.session.surface().tools)
            await room.ui.say("Tools here: " + (", ".join(names) if names else "none"))
        elif command == "/status":
            missing = [f"{why.server}: {why.sentence}" for why in chat.session.unavailable()]
            await room.ui.say("Every server is connected." if not missing else "\n".join(missing))
        else:
            await self._turn(room, chat, message)

    async def _turn(self, room: Room, chat: Chat, message: Incoming) -> None:
        room.ui.asker = message.sender
        answer = None
        with anyio.CancelScope() as room.turn:
            try:
                answer = (await chat.turn(message.text)).answer or "(The model gave no answer.)"
            except (HermesError, TurnStopped) as exc:
                answer = str(exc)
        room.turn = None
        room.used = time.monotonic()
        await anyio.to_thread.run_sync(self._log.remember, room.key, chat.transcript.id)
        await room.ui.say(answer if answer is not None else "Stopped.")

    def _saved(self, room: Room) -> Summary | None:
        """The room's last transcript, to take up; None for a new room (or one whose transcript is gone)."""
        transcript_id = self._log.transcript_of(room.key)
        if transcript_id is None:
            return None
        try:
            return find(self._home, transcript_id)
        except TranscriptError:
            return None


def room_folder(home: Home, platform: str, room: str) -> Path:
    """The room's own folder (its file and terminal tools work there); named by a digest of the room's id,
    which may hold any characters."""
    digest = hashlib.sha256(f"{platform}\0{room}".encode()).hexdigest()[:20]
    return home.gateway / "rooms" / f"{platform}-{digest}"
