"""Running the gateway: the platforms config.yaml names, their messages handed to the rooms.

The model is checked before any platform connects (a gateway without one could only refuse), and
every platform's settings are resolved first (a `${VAR}` that is not set stops the start with the
key that uses it). A platform that cannot sign in stops the gateway with one sentence; one that
loses its connection later reconnects on its own (each platform's library retries).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial

import anyio
from anyio.abc import TaskStatus

from hermes.agent.chat import ChatOptions, model_settings
from hermes.config.model import HermesConfig
from hermes.config.store import ConfigStore
from hermes.errors import HermesError, leaf
from hermes.files import private_dir
from hermes.gateway.access import Access
from hermes.gateway.platform import Platform
from hermes.gateway.rooms import Rooms
from hermes.gateway.service import clear_state, one_gateway, write_state
from hermes.gateway.settings import check_settings, configured_platforms
from hermes.home import Home
from hermes.security.redact import Redactor
from hermes.security.redacted_log import redacted_file_logging

# The platforms' libraries log to hermes.log (redacted) from their warnings up: a URL in an
# error can carry a bot's token.
LIBRARY_LOGGERS = {name: logging.WARNING for name in ("nio", "telegram", "httpx", "discord", "aiohttp",
                                                      "aioimaplib", "aiosmtplib")}
async def run_gateway(home: Home, platforms: Sequence[Platform] | None = None, secrets: Sequence[str] = (), *,
                      ready: Callable[[list[str]], None] | None = None,
                      task_status: TaskStatus[Rooms] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve until cancelled; `platforms`: these instead of config.yaml's (with their `secrets`);
    `ready` hears the platforms' names once every one of them is serving."""
    def prepare() -> tuple[HermesConfig, Access, list[Platform], list[str]]:
        model_settings(home, ChatOptions())  # no model: the one sentence that says what to add, before anything
        home.ensure()
        private_dir(home.logs)
        config = ConfigStore(home).load()
        listed = config.gateway_settings().platforms
        access = Access(home, {name: settings.allowed_users for name, settings in listed.items()})
        if platforms is not None:
            chosen, found = list(platforms), list[str]()
        else:
            chosen, found = configured_platforms(home, config, access)
        check_settings(home, config, [platform.name for platform in chosen])
        return config, access, chosen, [*secrets, *found]

    config, access, chosen, secrets = await anyio.to_thread.run_sync(prepare)
    with one_gateway(home):
        await _serve(home, config, access, chosen, secrets, ready, task_status)


async def _serve(home: Home, config: HermesConfig, access: Access, chosen: list[Platform], secrets: Sequence[str],
                 ready: Callable[[list[str]], None] | None, task_status: TaskStatus[Rooms]) -> None:
    redactor = Redactor(secrets)  # one for every room: they hide the same config's secrets
    try:
        with redacted_file_logging(home.logs / "hermes.log", redactor, LIBRARY_LOGGERS):
            async with anyio.create_task_group() as tasks:
                rooms = Rooms(home, config.gateway_settings(), access, tasks, redactor)
                for platform in chosen:
                    await tasks.start(partial(platform.run, partial(rooms.deliver, platform)))
                write_state(home, [platform.name for platform in chosen])
                if ready is not None:
                    ready([platform.name for platform in chosen])
                try:
                    task_status.started(rooms)
                    await anyio.sleep_forever()
                finally:
                    clear_state(home)
    except BaseExceptionGroup as group:
        # A platform that cannot sign in ends the start in its own sentence, not in a task group's,
        # redacted: a platform's error can quote a URL that holds the bot's token.
        cause = leaf(group)
        if isinstance(cause, HermesError):
            said = HermesError(redactor(str(cause)))
            said.exit_code = cause.exit_code
            raise said from None
        raise
