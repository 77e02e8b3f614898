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
from hermes.config.gateway_settings import PlatformSettings
from hermes.config.model import HermesConfig
from hermes.config.store import ConfigStore
from hermes.errors import HermesError, leaf
from hermes.files import private_dir
from hermes.gateway.access import Access
from hermes.gateway.platform import Platform
from hermes.gateway.rooms import Rooms
from hermes.gateway.service import clear_state, one_gateway, write_state
from hermes.home import Home
from hermes.security.redact import Redactor
from hermes.security.redacted_log import redacted_file_logging
from hermes.tools.toolsets import builtin_toolsets

# The platforms' libraries log to hermes.log (redacted) from their warnings up: a URL in an
# error can carry a bot's token.
LIBRARY_LOGGERS = {name: logging.WARNING for name in ("nio", "telegram", "httpx", "discord", "aiohttp",
                                                      "aioimaplib", "aiosmtplib")}
NO_PLATFORM = """No messaging platform is configured: add one under gateway: in {path}, for example

gateway:
  matrix:
    homeserver: https://matrix.example.org
    user_id: "@hermes:example.org"
    access_token: ${{MATRIX_ACCESS_TOKEN}}   # kept in the .env file of HERMES_HOME
    allowed_users: ["@you:example.org"]"""


def configured_platforms(home: Home, config: HermesConfig, access: Access) -> tuple[list[Platform], list[str]]:
    """The platforms of `config`'s `gateway:` with their secrets filled in, and those secrets."""
    variables = ConfigStore(home).variables()
    platforms: list[Platform] = []
    secrets: list[str] = []
    for name, written in config.gateway.platforms.items():
        settings, hidden = written.resolved(variables, home.config)
        secrets += hidden
        platforms.append(platform_for(name, settings, access))
    if not platforms:
        raise HermesError(NO_PLATFORM.format(path=home.config))
    return platforms, secrets


def check_settings(home: Home, config: HermesConfig, platforms: list[str]) -> None:
    """What would stop every room from opening, found before any platform connects (a room that
    cannot open can only say so in the room, message after message): toolsets that name nothing,
    and the file and terminal tools without a sandbox."""
    from hermes.plugins.registry import load_enabled
    from hermes.session.servers import check_toolsets

    check_toolsets(config, load_enabled(home, config), home.config)
    problem = sandbox_problem(config, platforms)
    if problem:
        raise HermesError(problem)


def sandbox_problem(config: HermesConfig, platforms: list[str]) -> str | None:
    """Why the rooms' file and terminal tools could not be confined here (None: they can, or no platform
    has them). Outside the sandbox one room's tools would reach every other room's folder and the
    owner's files, so the gateway does not start that way."""
    from hermes.config.sandbox import SandboxMode, SandboxSettings
    from hermes.mcp.sandbox_support import sandboxed, support

    needing = [name for name in platforms if builtin_toolsets(config.platform_toolsets, name)]
    if not needing:
        return None
    if config.mcp.sandbox is SandboxMode.OFF:
        why = "mcp.sandbox is off in config.yaml"
    elif not sandboxed(config.mcp.sandbox, SandboxSettings()):
        why = "there is no sandbox on this system"
    elif not (found := support()).available:
        why = found.problem
    else:
        return None
    return (f"The gateway gives {', '.join(needing)} the file and terminal tools, which there run only in the "
            f"sandbox (each room reaches its own folder and nothing else), but {why}. Install bubblewrap, or "
            f"leave those tools out: list the platform's toolsets under platform_toolsets without "
            f"hermes-gateway, file and terminal (e.g. `{needing[0]}: [mcp-github]`).")


LIBRARIES = {"matrix": ("nio", "matrix-nio"), "telegram": ("telegram", "python-telegram-bot"),
             "discord": ("discord", "discord.py"), "email": ("aioimaplib", "aioimaplib and aiosmtplib")}


def platform_for(name: str, settings: PlatformSettings, access: Access) -> Platform:
    """The platform's adapter (its library imported only now: a gateway on Matrix never loads Discord's)."""
    import importlib.util

    module, package = LIBRARIES[name]
    if importlib.util.find_spec(module) is None:
        raise HermesError(f"The {name} platform needs {package}, which is not installed: install hermes with its "
                          f"gateway extra (pip install 'hermes-mcp-host[gateway]').")
    if name == "matrix":
        from hermes.gateway.matrix_platform import MatrixPlatform

        return MatrixPlatform(settings, lambda user: access.allowed(name, user))
    if name == "email":
        from hermes.gateway.email_platform import EmailPlatform

        return EmailPlatform(settings)
    if name == "telegram":
        from hermes.gateway.telegram_platform import TelegramPlatform

        return TelegramPlatform(settings)
    from hermes.gateway.discord_platform import DiscordPlatform

    return DiscordPlatform(settings)


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
        access = Access(home, {name: settings.allowed_users for name, settings in config.gateway.platforms.items()})
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
                rooms = Rooms(home, config.gateway, access, tasks, redactor)
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
