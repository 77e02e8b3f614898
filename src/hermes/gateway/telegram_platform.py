"""Telegram through python-telegram-bot's `Bot`: long polling in the gateway's own task, buttons for choices.

The bot's token is checked first (`getMe`); updates that were waiting before the start are skipped,
so a restart never answers old messages. A question's choices are an inline keyboard; a press
comes back with the button's data (which question, which choice). Users are Telegram's numeric
ids (names can change hands; ids cannot).
`gateway.telegram.api_url` points at a self-hosted Bot API server instead of Telegram's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import anyio
from anyio.abc import TaskStatus

from hermes.config.gateway_settings import PlatformSettings
from hermes.errors import HermesError
from hermes.gateway.platform import Button, Deliver, Incoming, SendFailed, closing

LOG = logging.getLogger("hermes.gateway.telegram")
POLL_SECONDS = 30  # Telegram holds a getUpdates this long when nothing comes
MAX_RETRY_AFTER = 60  # seconds of flood control a message waits out once; longer: it fails
RETRY_SECONDS = 5.0


class TelegramPlatform:
    name = "telegram"
    max_text = 4096

    def __init__(self, settings: PlatformSettings) -> None:
        self._token = settings.values["token"]
        self._api_url = settings.values.get("api_url")
        self._bot: Any = None

    async def run(self, deliver: Deliver, *, task_status: TaskStatus[None]) -> None:
        import telegram
        from telegram.error import Conflict, InvalidToken, NetworkError, RetryAfter, TelegramError, TimedOut

        options: dict[str, Any] = {"base_url": self._api_url.rstrip("/") + "/bot"} if self._api_url else {}
        bot = telegram.Bot(self._token, **options)
        try:
            await bot.initialize()  # getMe: a wrong token is said now, not at the first message
        except InvalidToken:
            raise HermesError("Telegram refused the bot token (gateway.telegram.token).") from None
        except TelegramError as exc:
            raise HermesError(f"Telegram: signing in failed: {exc.message}") from None
        try:
            waiting = await bot.get_updates(offset=-1, timeout=0)  # what came before: skipped
            offset = waiting[-1].update_id + 1 if waiting else None
            self._bot = bot
            task_status.started()
            while True:
                try:
                    updates = await bot.get_updates(offset=offset, timeout=POLL_SECONDS,
                                                    allowed_updates=["message", "callback_query"])
                except RetryAfter as exc:
                    await anyio.sleep(float(exc.retry_after) if isinstance(exc.retry_after, (int, float))
                                      else RETRY_SECONDS)
                    continue
                except (NetworkError, TimedOut) as exc:  # Telegram or the network is away: try again
                    LOG.warning("Telegram: polling failed (%s); trying again", exc.message)
                    await anyio.sleep(RETRY_SECONDS)
                    continue
                except Conflict:
                    raise HermesError("Telegram: another program is reading this bot's updates (a second "
                                      "gateway, or a webhook); stop it first.") from None
                for update in updates:
                    offset = update.update_id + 1
                    incoming = await _incoming(update)
                    if incoming is not None:
                        await deliver(incoming)
        finally:
            self._bot = None
            await closing(bot.shutdown, "Telegram")

    async def send(self, room: str, text: str, buttons: Sequence[Button] = ()) -> None:
        from telegram import InlineKeyboardButton, InlineKeyboardMarkup
        from telegram.error import RetryAfter, TelegramError

        bot = self._bot
        if bot is None:
            raise SendFailed("not connected")
        markup = None
        if buttons:  # up to three in a row, as Telegram's clients show them well
            rows = [buttons[start:start + 3] for start in range(0, len(buttons), 3)]
            markup = InlineKeyboardMarkup([[InlineKeyboardButton(b.label[:64], callback_data=b.data) for b in row]
                                           for row in rows])
        for attempt in range(2):
            try:
                await bot.send_message(chat_id=int(room), text=text, reply_markup=markup)
                return
            except RetryAfter as exc:  # flood control: Telegram says when to send again
                wait = exc.retry_after if isinstance(exc.retry_after, (int, float)) else 5
                if attempt or wait > MAX_RETRY_AFTER:
                    raise SendFailed(f"Telegram asked to wait {wait} s") from None
                await anyio.sleep(float(wait))
            except TelegramError as exc:
                raise SendFailed(exc.message) from None


async def _incoming(update: Any) -> Incoming | None:
    """The message or button press an update carries; None for anything else (or a bot's own)."""
    from telegram.error import TelegramError

    query = update.callback_query
    if query is not None and query.message is not None and query.data:
        with contextlib.suppress(TelegramError):
            await query.answer()  # the client stops showing the button as pressed
        chat = query.message.chat
        return Incoming(str(chat.id), str(query.from_user.id), "", direct=chat.type == "private",
                        pressed=str(query.data))
    message = update.message
    if message is None or message.text is None or message.from_user is None or message.from_user.is_bot:
        return None
    return Incoming(str(message.chat.id), str(message.from_user.id), message.text,
                    direct=message.chat.type == "private")
