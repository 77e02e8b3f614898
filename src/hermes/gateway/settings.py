"""The gateway's settings checked and its platforms built, before anything connects: what a start
and `hermes gateway status` both check. Kept apart from running the gateway, so that a status
(one reading of config.yaml) loads neither the agent nor the MCP SDK.
"""

from __future__ import annotations

from hermes.config.gateway_settings import PlatformSettings
from hermes.config.model import HermesConfig
from hermes.config.store import ConfigStore
from hermes.errors import HermesError
from hermes.gateway.access import Access
from hermes.gateway.platform import Platform
from hermes.home import Home
from hermes.tools.toolsets import builtin_toolsets

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
    for name, written in config.gateway_settings().platforms.items():
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
