"""One conversation per room: the agent of `hermes chat`, opened when a room first speaks.

Each room gets its own chat (`open_chat`: the model, the tool loop, skills, a transcript) over its
own session, with its own server processes and its own folder for the file and terminal tools. So a
server's question always reaches the room whose call caused it, and nothing one room's tools saw or
wrote is in reach of another's. The platform's `platform_toolsets` decide the tools.

A room's messages are taken one turn at a time; what arrives meanwhile waits its turn, except the
answer to a question the turn asked and `/stop`. A room left alone for `idle_minutes` closes (its
servers stop); its next message opens it again and takes up the same transcript. At most
`max_rooms` are open or closing: a new room closes the longest-idle one that has nothing to do.

A room's life: open (in `_rooms`) → closing (out of `_rooms`, its servers stopping) → gone. Only
an open room takes messages; a message for a room that is closing opens a new one, which waits
until the old one is gone (they share a folder and a transcript), and messages the old one still
held are handed to it. Nothing a room does (a broken server, a platform that refuses a message)
ends the gateway or another room.

Nobody not allowed reaches a room (see `access`): strangers get a pairing code in a one-to-one
chat and silence in a group room; a press on a button answers only the question it belongs to.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hermes.agent.chat import Chat, ChatOptions, open_chat
from hermes.agent.loop import TurnStopped
from hermes.agent.transcripts import Summary, TranscriptError, find, load
from hermes.config.gateway_settings import GatewaySettings
from hermes.errors import HermesError
from hermes.files import private_dir
from hermes.gateway.access import Access
from hermes.gateway.platform import Incoming, Platform, SendFailed
from hermes.gateway.room_log import RoomLog
from hermes.gateway.room_ui import RoomUI
from hermes.gateway.throttle import Throttle
from hermes.home import Home
from hermes.security.redact import Redactor
from hermes.validation import suggestion

LOG = logging.getLogger("hermes.gateway")
WAITING = 8  # messages a busy room keeps for its next turns
HELP = ("Write to me as you would in `hermes chat`. /new starts a new conversation, /stop stops the one "
        "running now, /tools lists what I can use here, /status says which servers are missing and why.")
COMMANDS = ("/help", "/new", "/stop", "/tools", "/status")
Key = tuple[str, str]  # (platform, room)
SAY_AGAIN_SECONDS = 60.0  # "busy", "full" and pairing codes: once a minute per room or stranger, however many write


@dataclass
class Room:
    platform: Platform
    id: str
    ui: RoomUI
    inbox: MemoryObjectSendStream[Incoming]
    outbox: MemoryObjectReceiveStream[Incoming]
    used: float = field(default_factory=time.monotonic)
    turn: anyio.CancelScope | None = None  # set while a turn runs (and its answer is sent)
    transcript: str | None = None  # the transcript rooms.json names for it (written again only when it changes)
    close: anyio.Event = field(default_factory=anyio.Event)  # asked to close when next idle
    gone: anyio.Event = field(default_factory=anyio.Event)  # its chat has ended

    @property
    def key(self) -> Key:
        return self.platform.name, self.id

    @property
    def idle(self) -> bool:
        """Nothing running, nothing waiting, nothing asked: closing it loses nothing."""
        return self.turn is None and not self.ui.asking and self.outbox.statistics().current_buffer_used == 0


class Rooms:
    def __init__(self, home: Home, settings: GatewaySettings, access: Access, tasks: TaskGroup,
                 redactor: Redactor) -> None:
        """`redactor`: shared by every room (the secrets of one config: hiding them everywhere leaks
        nothing from one room to another, and the gateway's one log uses it)."""
        self._home = home
        self._settings = settings
        self._access = access
        self._tasks = tasks
        self._redactor = redactor
        self._rooms: dict[Key, Room] = {}
        self._closing: dict[Key, Room] = {}
        self._log = RoomLog(home)
        self._said = Throttle(SAY_AGAIN_SECONDS)

    @property
    def open(self) -> list[Key]:
        return list(self._rooms)

    async def deliver(self, platform: Platform, message: Incoming) -> None:
        """A message from a platform; returns at once (turns run in the room's own task)."""
        allowed = await anyio.to_thread.run_sync(self._access.allowed, platform.name, message.sender)
        if not allowed:
            if message.pressed is None:
                await self._stranger(platform, message)
            return
        room = self._rooms.get((platform.name, message.room))
        if message.pressed is None and message.text.strip() == "/stop":  # before a waiting question takes it
            if room is not None and room.turn is not None:
                room.turn.cancel()
                return
            await _send_quietly(platform, message.room, "Nothing is running.")
            return
        if room is not None and await room.ui.reply(message.sender, message.text, message.pressed):
            room.used = time.monotonic()
            return
        if message.pressed is not None:
            return  # a press for a room with no question: nothing to answer, and never a prompt
        room = room or await self._start(platform, message.room)
        if room is None:
            return
        room.used = time.monotonic()
        try:
            room.inbox.send_nowait(message)
        except anyio.WouldBlock:
            if self._said.allows((*room.key, "waiting")):
                await room.ui.tell(f"{WAITING} messages are already waiting for me here; send this again later.")

    async def _stranger(self, platform: Platform, message: Incoming) -> None:
        if not message.direct:
            return  # a group room: a stranger's message is not for the bot, and a code there helps no one
        if not self._said.allows((platform.name, message.sender, "code")):
            return  # a flood from one stranger: one answer (and one write of the record) a minute
        try:
            code = await anyio.to_thread.run_sync(self._access.code_for, platform.name, message.sender)
            text = (f"I do not know you yet. Your pairing code is {code}: the owner of this hermes lets you in "
                    f"with `hermes gateway pair {code}` (it works for an hour).")
        except (HermesError, OSError) as exc:
            LOG.warning("%s: no pairing code for %s: %s", platform.name, message.sender, exc)
            text = "I cannot take new users now; the owner of this hermes can see why in its log."
        await _send_quietly(platform, message.room, text)

    async def _start(self, platform: Platform, room_id: str) -> Room | None:
        if len(self._rooms) + len(self._closing) >= self._settings.max_rooms and not self._make_room():
            if self._said.allows((platform.name, room_id, "full")):
                await _send_quietly(platform, room_id, f"I am in {len(self._rooms)} conversations already; write "
                                                       f"again in a moment.")
            return None
        ui = RoomUI(platform, room_id, self._redactor, answer_seconds=self._settings.answer_minutes * 60.0)
        inbox, outbox = anyio.create_memory_object_stream[Incoming](WAITING)
        room = Room(platform, room_id, ui, inbox, outbox)
        self._rooms[room.key] = room
        self._tasks.start_soon(self._serve, room)
        return room

    def _make_room(self) -> bool:
        """Ask the longest-idle room to close; False when none is idle (then no new room opens)."""
        idle = [room for room in self._rooms.values() if room.idle and not room.close.is_set()]
        if not idle:
            return False
        oldest = min(idle, key=lambda room: room.used)
        oldest.close.set()
        self._retire(oldest)
        return True

    def _retire(self, room: Room) -> None:
        """From open to closing: no message reaches it any more."""
        if self._rooms.get(room.key) is room:
            del self._rooms[room.key]
            self._closing[room.key] = room
        room.inbox.close()

    async def _serve(self, room: Room) -> None:
        opened = False
        try:
            before = self._closing.get(room.key)
            if before is not None and before is not room:
                await before.gone.wait()  # the same folder and transcript: one chat at a time
            opened = await self._chat(room)
        except Exception:  # a room's failure is that room's: logged and said there, never the gateway's
            LOG.exception("%s room %s failed", room.platform.name, room.id)
            if self._said.allows((*room.key, "failed")):
                await room.ui.tell("Something went wrong in this conversation; it starts again with your next "
                                   "message. The gateway's log has the details.")
        finally:
            self._retire(room)
            leftover = self._leftover(room)
            if self._closing.get(room.key) is room:
                del self._closing[room.key]
            room.outbox.close()
            room.gone.set()
            # Said while it closed: a new room takes them up. Not after a room that could not open:
            # the next would fail the same way, and the messages would go round for ever.
            for message in leftover if opened else ():
                await self.deliver(room.platform, message)

    def _leftover(self, room: Room) -> list[Incoming]:
        found = []
        while True:
            try:
                found.append(room.outbox.receive_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return found

    async def _chat(self, room: Room) -> bool:
        """The room's conversation, until it closes; False when its chat could not open (said in the room,
        once a minute however many messages wait)."""
        base = Path(self._settings.workdir).expanduser() if self._settings.workdir else None
        folder = await anyio.to_thread.run_sync(private_dir, room_folder(self._home, room.platform.name, room.id,
                                                                         base))
        saved, problem = await anyio.to_thread.run_sync(self._saved, room)
        if problem:
            await room.ui.tell(f"The saved conversation of this room could not be read ({problem}); a new one "
                               f"starts.")
        options = ChatOptions(platform=room.platform.name, folder=folder, room_folder=folder)
        try:
            async with open_chat(self._home, options, room.ui, redactor=self._redactor) as chat:
                if saved is not None:  # read (and checked) once, above: taken up as it is
                    chat.restore(*saved)
                    room.transcript = saved[0].id
                await self._conversation(room, chat)
                return True
        except HermesError as exc:
            if self._said.allows((*room.key, "failed")):
                await room.ui.tell(f"hermes cannot answer here: {exc}")
            return False

    async def _conversation(self, room: Room, chat: Chat) -> None:
        idle = self._settings.idle_minutes * 60.0
        while True:
            message = None
            with anyio.move_on_after(idle):
                message = await self._next(room)
            if message is None:
                # Idle, or asked to close: no message reaches it from now on (its next one opens a
                # new room, which waits for this one's servers to stop).
                self._retire(room)
                return
            await self._handle(room, chat, message)

    async def _next(self, room: Room) -> Incoming | None:
        """The room's next message; None once it is asked to close (or its inbox is closed)."""
        found: list[Incoming] = []
        async with anyio.create_task_group() as race:
            async def receive() -> None:
                with contextlib.suppress(anyio.EndOfStream):
                    found.append(await room.outbox.receive())
                race.cancel_scope.cancel()

            async def closed() -> None:
                await room.close.wait()
                race.cancel_scope.cancel()

            race.start_soon(receive)
            race.start_soon(closed)
        return found[0] if found else None

    async def _handle(self, room: Room, chat: Chat, message: Incoming) -> None:
        command = message.text.strip()
        if command.startswith("/") and " " not in command and command not in COMMANDS:
            near = suggestion(command, COMMANDS)
            if near:  # a mistyped command, not a message for the model ("/usr/bin is full" still is one)
                await room.ui.tell(f"Unknown command {command}{near}; /help lists them.")
                return
        if command == "/help":
            await room.ui.tell(HELP)
        elif command == "/new":
            chat.new()
            await room.ui.tell("A new conversation starts here.")
        elif command == "/tools":
            names = sorted(chat.session.surface().tools)
            await room.ui.tell("Tools here: " + (", ".join(names) if names else "none"))
        elif command == "/status":
            missing = [f"{why.server}: {why.sentence}" for why in chat.session.unavailable()]
            await room.ui.tell("Every server is connected." if not missing else "\n".join(missing))
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
        try:
            if chat.transcript.id != room.transcript:  # a new room, or /new
                await anyio.to_thread.run_sync(self._log.remember, room.key, chat.transcript.id)
                room.transcript = chat.transcript.id
            await room.ui.tell(answer if answer is not None else "Stopped.")
        finally:
            room.turn = None  # only now may the room be closed: its answer has been sent
            room.used = time.monotonic()

    def _saved(self, room: Room) -> tuple[tuple[Summary, list[dict[str, Any]]] | None, str | None]:
        """The room's last transcript and its messages, to take up (None: a new room, or its transcript is
        gone), and why a saved one cannot be taken up. Blocking: reads the transcript whole."""
        transcript_id = self._log.transcript_of(room.key)
        if transcript_id is None:
            return None, None
        try:
            summary = find(self._home, transcript_id)
        except TranscriptError:
            return None, None  # pruned with the oldest transcripts: a new conversation, nothing to say
        try:
            return (summary, load(summary)), None
        except TranscriptError as exc:
            return None, str(exc)


async def _send_quietly(platform: Platform, room: str, text: str) -> None:
    """A message of the gateway's own outside any conversation (to a stranger, to a room not open); a
    platform that does not take it is logged, never the end of anything."""
    try:
        await platform.send(room, text)
    except SendFailed as exc:
        LOG.warning("%s: a message to %s was not sent: %s", platform.name, room, exc)


def room_folder(home: Home, platform: str, room: str, base: Path | None = None) -> Path:
    """The room's own folder (its file and terminal tools work there), under `gateway.workdir` or
    HERMES_HOME; named by a digest of the room's id, which may hold any characters."""
    digest = hashlib.sha256(f"{platform}\0{room}".encode()).hexdigest()[:20]
    return (base or home.gateway / "rooms") / f"{platform}-{digest}"
