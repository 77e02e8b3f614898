"""Matrix through matrix-nio: the bot's account on a homeserver, its rooms as conversations.

It signs in with an access token (checked with `whoami`) or a password, takes the rooms allowed
users invite it to (and a stranger's one-to-one chat, for a pairing code), and skips everything
sent before it started (one sync without handlers first) or before it was invited, so a restart
or a join never answers old messages. Matrix has no buttons: a question lists its choices and
the person replies. nio is installed without its end-to-end encryption parts: an encrypted room's
messages cannot be read, and the room is told so once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import secrets
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from hermes.config.gateway_settings import PlatformSettings
from hermes.errors import HermesError
from hermes.gateway.matrix_joins import after_own_membership, newest_messages, read_back
from hermes.gateway.platform import Button, Deliver, Incoming, SendFailed, closing

LOG = logging.getLogger("hermes.gateway.matrix")
SYNC_MS = 30_000  # a long poll: the homeserver answers as soon as something happens
MAX_ROOMS = 1_000  # rooms the bot joins at most (an invite flood must not grow without bound)
MAX_PAUSE = 60.0
SIGNED_OUT = ("M_UNKNOWN_TOKEN", "M_MISSING_TOKEN", "M_FORBIDDEN", "M_USER_DEACTIVATED")
SIGN_IN_SECONDS = 60.0
START_TRIES = 2  # nio retries a homeserver it cannot reach forever; the start must not
MAX_TEXT = 30_000  # an event is at most 64 KiB of JSON; room for escaping and the envelope


class MatrixPlatform:
    name = "matrix"
    max_text = MAX_TEXT

    def __init__(self, settings: PlatformSettings, allowed: Callable[[str], bool] | None = None) -> None:
        """`allowed(user)`: whether a user may talk to the gateway (blocking); a room they invite the bot
        to is joined. A stranger's invite is joined only for a one-to-one chat (where they get a
        pairing code), and only while the bot is in fewer than `MAX_ROOMS` rooms."""
        self._homeserver = settings.values["homeserver"]
        self._user = settings.values["user_id"]
        self._token = settings.values.get("access_token")
        self._password = settings.values.get("password")
        self._device_name = settings.values.get("device_name") or "hermes gateway"
        self._allowed = allowed or (lambda user: False)
        self._client: Any = None
        self._told_encrypted: set[str] = set()
        self._joining: set[str] = set()  # rooms joined whose join the bot has not seen in a sync yet

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        import nio

        # At the start a homeserver that cannot be reached is said at once (a few tries); once serving,
        # nio tries again for ever, as a connection that drops should.
        starting = nio.AsyncClientConfig(encryption_enabled=False, max_timeouts=START_TRIES,
                                         request_timeout=SYNC_MS / 1000 + 30)
        client = nio.AsyncClient(self._homeserver, self._user, config=starting)
        try:
            try:
                with anyio.fail_after(SIGN_IN_SECONDS):
                    await self._sign_in(client)
                    # Synapse keeps a sync's answer for two minutes, found by what was asked: a start
                    # asking what the last run's start asked would get that run's answer and place,
                    # and answer again what the last run answered. A full-state sync is answered at once.
                    first = await client.sync(timeout=1 + secrets.randbelow(1000), full_state=True)
            except TimeoutError:
                raise HermesError(f"Matrix: {self._homeserver} did not answer within {SIGN_IN_SECONDS:.0f} s "
                                  f"(is gateway.matrix.homeserver right, and is it up?).") from None
            except OSError as exc:  # aiohttp's connection errors are OSErrors: refused, unknown host, …
                raise HermesError(f"Matrix: {self._homeserver} cannot be reached ({exc}); is "
                                  f"gateway.matrix.homeserver right, and is it up?") from None
            client.config = dataclasses.replace(starting, max_timeouts=None)
            if not isinstance(first, nio.SyncResponse):
                raise HermesError(f"Matrix: the first sync with {self._homeserver} failed: {first.message}")
            self._client = client
            # Joins run beside the sync loop: joining a large room over federation can take minutes,
            # and nio tries a request that times out again for ever; no other room waits for one.
            async with anyio.create_task_group() as joins:
                await self._invites(client, first, joins)  # invites that came while it was not running
                task_status.started()
                await self._sync(client, first.next_batch, deliver, joins)
        finally:
            self._client = None
            if self._password and client.access_token:  # its own sign-in: the device it made goes with it
                await closing(client.logout, "Matrix")
            await closing(client.close, "Matrix")

    async def _invites(self, client: Any, answer: Any, joins: TaskGroup) -> None:
        for room_id, invite in answer.rooms.invite.items():
            inviter, direct = _invite_of(invite.invite_state, client.user_id)
            if room_id in client.rooms or room_id in self._joining or inviter is None:
                continue
            stranger_may = direct and len(client.rooms) < MAX_ROOMS  # for a pairing code, in a one-to-one chat
            if not stranger_may and not await anyio.to_thread.run_sync(self._allowed, inviter):
                continue
            if len(self._joining) >= MAX_ROOMS:
                continue
            self._joining.add(room_id)
            joins.start_soon(self._join, client, room_id)

    async def _join(self, client: Any, room_id: str) -> None:
        import nio

        if not isinstance(await client.join(room_id), nio.JoinResponse):
            self._joining.discard(room_id)

    async def _sync(self, client: Any, since: str, deliver: Deliver, joins: TaskGroup) -> None:
        """Long-poll the homeserver for ever; a refused sign-in ends the gateway, anything else is tried
        again after a growing pause (never a tight loop against a homeserver in trouble)."""
        import nio

        failures = 0
        while True:
            answer = await client.sync(timeout=SYNC_MS, since=since)
            if isinstance(answer, nio.SyncResponse):
                asked_from, since, failures = since, answer.next_batch, 0
                for room_id in answer.rooms.leave:  # left or put out: an invite back is taken again
                    client.rooms.pop(room_id, None)
                    self._joining.discard(room_id)
                await self._invites(client, answer, joins)
                await self._messages(client, answer, asked_from, deliver)
                continue
            if answer.status_code in SIGNED_OUT:
                raise HermesError(f"Matrix: {self._homeserver} no longer accepts the bot's sign-in "
                                  f"({answer.message}); renew gateway.matrix's token or password.")
            failures += 1
            LOG.warning("Matrix: a sync with %s failed (%s); trying again", self._homeserver, answer.message)
            await anyio.sleep(min(MAX_PAUSE, 2.0 ** failures))

    async def _messages(self, client: Any, answer: Any, since: str, deliver: Deliver) -> None:
        """The new messages of a sync asked from `since`, in the homeserver's order. In a room the bot
        has just joined, what precedes its own join in the timeline is the room's history, not a
        message for it (`hermes.gateway.matrix_joins`)."""
        import nio

        for room_id, joined in answer.rooms.join.items():
            self._joining.discard(room_id)
            events = list(joined.timeline.events)
            # After a membership of the bot's own (its join, whoever made it), only what follows is new.
            since_join = after_own_membership(events, client.user_id)
            if since_join is not None:
                events = since_join
            elif joined.timeline.limited:  # more came since the last sync than a batch holds: read back
                events = [*await read_back(client, room_id, joined.timeline, since=since), *events]
            events = newest_messages(events, client.user_id, room_id)
            room = client.rooms.get(room_id)
            direct = room is not None and room.member_count <= 2
            for event in events:
                if getattr(event, "sender", None) == client.user_id:
                    continue
                if isinstance(event, nio.RoomMessageText):
                    await deliver(Incoming(room_id, event.sender, _within(event.body), direct=direct))
                elif isinstance(event, nio.MegolmEvent) and room_id not in self._told_encrypted \
                        and len(self._told_encrypted) < MAX_ROOMS:
                    self._told_encrypted.add(room_id)
                    with contextlib.suppress(SendFailed):
                        await self.send(room_id, "This room is encrypted, and hermes cannot read encrypted "
                                                 "messages: talk to me in a room without encryption.")

    async def _sign_in(self, client: Any) -> None:
        import nio

        where = f"Matrix: signing in as {self._user} at {self._homeserver}"
        if self._token:
            client.access_token = self._token
            client.user_id = self._user
            found = await client.whoami()
            if not isinstance(found, nio.WhoamiResponse):
                raise HermesError(f"{where} failed: the access token was refused ({found.message}).")
            if found.user_id != self._user:
                raise HermesError(f"{where} failed: the access token belongs to {found.user_id}.")
            client.device_id = found.device_id or ""
            return
        answer = await client.login(self._password, device_name=self._device_name)
        if not isinstance(answer, nio.LoginResponse):
            raise HermesError(f"{where} failed: {answer.message}.")

    async def send(self, room: str, text: str, buttons: Sequence[Button] = ()) -> None:
        """Matrix has no buttons: the question's text lists its choices."""
        import nio

        client = self._client
        if client is None:
            raise SendFailed("not connected")
        sent = await client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": text,
                                                                # nobody is pinged by what the model wrote
                                                                "m.mentions": {}})
        if not isinstance(sent, nio.RoomSendResponse):
            raise SendFailed(sent.message)


def _within(body: str) -> str:
    """A message's text within what hermes reads of one (the protocol allows 64 KiB an event; a
    homeserver may send more)."""
    return body if len(body) <= MAX_TEXT else body[:MAX_TEXT] + " [cut by hermes: the message was longer]"


def _invite_of(state: list[Any], user_id: str) -> tuple[str | None, bool]:
    """Who invited `user_id` and whether as a one-to-one chat, from an invite's stripped state."""
    for event in state:
        if getattr(event, "state_key", None) == user_id and getattr(event, "membership", None) == "invite":
            content = getattr(event, "content", None) or {}
            return getattr(event, "sender", None), bool(content.get("is_direct"))
    return None, False
