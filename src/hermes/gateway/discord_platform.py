"""Discord through discord.py: the bot's gateway connection, its channels as conversations.

The bot reads message content (the privileged "Message Content" intent must be on in the
developer portal), ignores other bots and itself, and answers in the channel (a thread or a DM
alike). A question's choices are buttons; a press comes back with the button's id (which question,
which choice). Nothing the
model writes pings anyone (`@everyone`, roles, users): every message is sent with no mentions.
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

LOG = logging.getLogger("hermes.gateway.discord")
MAX_BUTTONS = 25  # five rows of five: Discord's own limit
VIEW_SECONDS = 24 * 3600.0


class DiscordPlatform:
    name = "discord"
    max_text = 2000

    def __init__(self, settings: PlatformSettings) -> None:
        self._token = settings.values["token"]
        self.client: Any = None

    def make_client(self, deliver: Deliver) -> Any:
        """The discord.py client whose events reach `deliver` (its library seam: tests feed it events)."""
        import discord

        intents = discord.Intents.default()
        intents.message_content = True
        client = discord.Client(intents=intents)

        async def on_message(message: discord.Message) -> None:
            if message.author.bot or (client.user is not None and message.author.id == client.user.id):
                return
            await deliver(Incoming(str(message.channel.id), str(message.author.id), message.content,
                                   direct=isinstance(message.channel, discord.DMChannel)))

        async def on_interaction(interaction: discord.Interaction) -> None:
            data: Any = interaction.data or {}
            custom_id = data.get("custom_id") if isinstance(data, dict) else None
            if interaction.type is not discord.InteractionType.component or not isinstance(custom_id, str):
                return
            try:
                await interaction.response.defer()  # the press is taken; the answer comes as a message
            except Exception as exc:  # whatever the acknowledgement meets, the press itself still counts
                LOG.warning("Discord: a button press was not acknowledged: %s", exc)
            channel = interaction.channel
            if channel is not None:
                await deliver(Incoming(str(channel.id), str(interaction.user.id), "",
                                       direct=isinstance(channel, discord.DMChannel), pressed=custom_id))

        client.event(on_message)
        client.event(on_interaction)
        self.client = client
        return client

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        import discord

        client = self.make_client(deliver)
        ready = anyio.Event()

        async def on_ready() -> None:
            ready.set()

        client.event(on_ready)
        try:
            try:
                await client.login(self._token)
            except discord.LoginFailure:
                raise HermesError("Discord refused the bot token (gateway.discord.token).") from None
            except discord.HTTPException as exc:
                raise HermesError(f"Discord: signing in failed: {exc.text or exc.status}") from None
            async def connect() -> None:
                try:
                    await client.connect()  # reconnects on its own when the connection drops
                except discord.PrivilegedIntentsRequired:
                    raise HermesError("Discord: the bot needs the Message Content intent; turn it on in the "
                                      "developer portal (Bot → Privileged Gateway Intents).") from None

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(connect)
                await ready.wait()
                task_status.started()
        finally:
            self.client = None
            await closing(client.close, "Discord")

    async def send(self, room: str, text: str, buttons: Sequence[Button] = ()) -> None:
        import discord

        client = self.client
        if client is None:
            raise SendFailed("not connected")
        try:
            channel = client.get_channel(int(room)) or await client.fetch_channel(int(room))
            kwargs: dict[str, Any] = {}
            if buttons:
                # Not kept by discord.py once it ends (a view without a timeout would stay forever).
                view = discord.ui.View(timeout=VIEW_SECONDS)
                for index, button in enumerate(buttons[:MAX_BUTTONS]):
                    view.add_item(discord.ui.Button(label=button.label[:80], custom_id=button.data[:100],
                                                    row=index // 5))
                kwargs["view"] = view
            await channel.send(text, allowed_mentions=discord.AllowedMentions.none(), **kwargs)
        except (discord.DiscordException, ValueError) as exc:
            raise SendFailed(str(exc)) from None
