"""Running the gateway: the platforms config.yaml names, their messages handed to the rooms.

The model is checked before any platform connects (a gateway without one could only refuse), and
every platform's settings are resolved first (a `${VAR}` that is not set stops the start with the
key that uses it). A platform that cannot sign in stops the gateway with one sentence; one that
loses its connection later reconnects on its own (each platform's library retries).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import anyio
from anyio.abc import TaskStatus

from hermes.agent.chat import ChatOptions, model_settings
from hermes.config.gateway_settings import PlatformSettings
from hermes.config.model import HermesConfig
from hermes.config.store import ConfigStore
from hermes.errors import HermesError, leaf
from hermes.gateway.access import Access
from hermes.gateway.platform import Platform
from hermes.gateway.rooms import Rooms
from hermes.gateway.service import clear_state, write_state
from hermes.home import Home

NO_PLATFORM = """No messaging platform is configured: add one under gateway: in {path}, for example

gateway:
  matrix:
    homeserver: https://matrix.example.org
    user_id: "@hermes:example.org"
    access_token: ${{MATRIX_ACCESS_TOKEN}}   # kept in the .env file of HERMES_HOME
    allowed_users: ["@you:example.org"]"""


def configured_platforms(home: Home) -> tuple[list[Platform], list[str]]:
    """The platforms of config.yaml's `gateway:` with their secrets filled in, and those secrets."""
    store = ConfigStore(home)
    config = store.load()
    variables = store.variables()
    platforms: list[Platform] = []
    secrets: list[str] = []
    for name, written in config.gateway.platforms.items():
        settings, hidden = written.resolved(variables, home.config)
        secrets += hidden
        platforms.append(platform_for(name, settings))
    if not platforms:
        raise HermesError(NO_PLATFORM.format(path=home.config))
    return platforms, secrets


def platform_for(name: str, settings: PlatformSettings) -> Platform:
    """The platform's adapter (its library imported only now: a gateway on Matrix never loads Discord's)."""
    if name == "matrix":
        from hermes.gateway.matrix_platform import MatrixPlatform

        return MatrixPlatform(settings)
    if name == "email":
        from hermes.gateway.email_platform import EmailPlatform

        return EmailPlatform(settings)
    if name == "telegram":
        from hermes.gateway.telegram_platform import TelegramPlatform

        return TelegramPlatform(settings)
    from hermes.gateway.discord_platform import DiscordPlatform

    return DiscordPlatform(settings)


async def run_gateway(home: Home, platforms: Sequence[Platform] | None = None, secrets: Sequence[str] = (), *,
                      task_status: TaskStatus[Rooms] = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve until cancelled; `platforms`: these instead of config.yaml's (with their `secrets`)."""
    def prepare() -> tuple[HermesConfig, list[Platform], list[str]]:
        model_settings(home, ChatOptions())  # no model: the one sentence that says what to add, before anything
        if platforms is not None:
            return ConfigStore(home).load(), list(platforms), list(secrets)
        chosen, found = configured_platforms(home)
        return ConfigStore(home).load(), chosen, [*secrets, *found]

    config, chosen, secrets = await anyio.to_thread.run_sync(prepare)
    access = Access(home, {name: settings.allowed_users for name, settings in config.gateway.platforms.items()})
    try:
        async with anyio.create_task_group() as tasks:
            rooms = Rooms(home, config.gateway, access, tasks, secrets=list(secrets))
            for platform in chosen:
                await tasks.start(partial(platform.run, partial(rooms.deliver, platform)))
            write_state(home, [platform.name for platform in chosen])
            try:
                task_status.started(rooms)
                await anyio.sleep_forever()
            finally:
                clear_state(home)
    except BaseExceptionGroup as group:
        # A platform that cannot sign in ends the start in its own sentence, not in a task group's.
        cause = leaf(group)
        if isinstance(cause, HermesError):
            raise cause from None
        raise
