"""Matrix through matrix-nio: the bot's account on a homeserver, its rooms as conversations.

It signs in with an access token (checked with `whoami`) or a password, takes the rooms it is
invited to, and skips everything sent before it started (one sync without handlers first), so a
restart never answers old messages again. Matrix has no buttons: a question lists its choices and
the person replies. nio is installed without its end-to-end encryption parts: an encrypted room's
messages cannot be read, and the room is told so once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
from anyio.abc import TaskStatus

from hermes.config.gateway_settings import PlatformSettings
from hermes.errors import HermesError
from hermes.gateway.platform import Button, Deliver, Incoming, SendFailed, closing

LOG = logging.getLogger("hermes.gateway.matrix")
SYNC_MS = 30_000  # a long poll: the homeserver answers as soon as something happens
SIGN_IN_SECONDS = 60.0  # nio retries a homeserver it cannot reach forever; the start must not
MAX_TEXT = 30_000  # an event is at most 64 KiB of JSON; room for escaping and the envelope


class MatrixPlatform:
    name = "matrix"
    max_text = MAX_TEXT

    def __init__(self, settings: PlatformSettings) -> None:
        self._homeserver = settings.values["homeserver"]
        self._user = settings.values["user_id"]
        self._token = settings.values.get("access_token")
        self._password = settings.values.get("password")
        self._device_name = settings.values.get("device_name") or "hermes gateway"
        self._client: Any = None
        self._told_encrypted: set[str] = set()

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        import nio

        client = nio.AsyncClient(self._homeserver, self._user, config=nio.AsyncClientConfig(
            encryption_enabled=False, max_timeouts=None, request_timeout=SYNC_MS / 1000 + 30))
        try:
            try:
                with anyio.fail_after(SIGN_IN_SECONDS):
                    await self._sign_in(client)
                    first = await client.sync(timeout=0, full_state=True)
            except TimeoutError:
                raise HermesError(f"Matrix: {self._homeserver} did not answer within {SIGN_IN_SECONDS:.0f} s "
                                  f"(is gateway.matrix.homeserver right, and is it up?).") from None
            if not isinstance(first, nio.SyncResponse):
                raise HermesError(f"Matrix: the first sync with {self._homeserver} failed: {first.message}")
            for room_id in first.rooms.invite:  # invites that came while the gateway was not running
                await client.join(room_id)
            self._client = client

            async def message(room: nio.MatrixRoom, event: nio.RoomMessageText) -> None:
                if event.sender != client.user_id:
                    await deliver(Incoming(room.room_id, event.sender, event.body, direct=room.member_count <= 2))

            async def invited(room: nio.MatrixRoom, event: nio.InviteMemberEvent) -> None:
                if event.state_key == client.user_id and event.membership == "invite":
                    await client.join(room.room_id)

            async def encrypted(room: nio.MatrixRoom, event: nio.MegolmEvent) -> None:
                if event.sender != client.user_id and room.room_id not in self._told_encrypted:
                    self._told_encrypted.add(room.room_id)
                    await self.send(room.room_id, "This room is encrypted, and hermes cannot read encrypted "
                                                  "messages: talk to me in a room without encryption.")

            client.add_event_callback(message, nio.RoomMessageText)
            client.add_event_callback(encrypted, nio.MegolmEvent)
            client.add_event_callback(invited, nio.InviteMemberEvent)
            task_status.started()
            await client.sync_forever(timeout=SYNC_MS, since=first.next_batch)
        finally:
            self._client = None
            await closing(client.close, "Matrix")

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
