"""`hermes gateway`: the agent on messaging platforms (config.yaml's `gateway:`), in the foreground or
as a background service, and who may talk to it."""

from __future__ import annotations

import sys
import time

import click

from hermes.cli.output import say
from hermes.home import Home


@click.group("gateway", invoke_without_command=True)
@click.pass_context
def gateway_group(ctx: click.Context) -> None:
    """The agent on messaging platforms: each room its own conversation, with the tools
    platform_toolsets gives that platform. Without a subcommand: `run`."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(run_command)


@gateway_group.command("run")
def run_command() -> None:
    """Serve in the foreground until Ctrl-C (or SIGTERM)."""
    from hermes import interrupts
    from hermes.gateway.run import run_gateway

    home = Home.from_env()
    say("hermes gateway: connecting (Ctrl-C stops it)…", err=True)
    interrupts.run(run_gateway, home, stop_on_signal=True)
    sys.exit(0)


@gateway_group.command("start")
def start_command() -> None:
    """Run the gateway in the background (its log in HERMES_HOME/logs/gateway.log)."""
    from hermes.gateway.service import log_path, start

    home = Home.from_env()
    found = start(home)
    say(f"The gateway is serving on {', '.join(found.platforms)} (pid {found.pid}; log {log_path(home)}).")


@gateway_group.command("stop")
def stop_command() -> None:
    """Stop the background gateway."""
    from hermes.gateway.service import stop

    found = stop(Home.from_env())
    say("No gateway was running." if found is None else f"The gateway (pid {found.pid}) stopped.")


@gateway_group.command("status")
def status_command() -> None:
    """Whether the gateway runs, since when, on which platforms; exit 1 when it does not.
    The settings under gateway: are checked first (a broken one is named with its key)."""
    from hermes.config.store import ConfigStore
    from hermes.gateway.service import running

    home = Home.from_env()
    ConfigStore(home).load()
    found = running(home)
    if found is None:
        say("The gateway is not running (`hermes gateway start` starts it).")
        sys.exit(1)
    since = time.strftime("%Y-%m-%d %H:%M", time.localtime(found.started))
    say(f"The gateway is running since {since} on {', '.join(found.platforms)} (pid {found.pid}).")


@gateway_group.command("pair")
@click.argument("code")
def pair_command(code: str) -> None:
    """Let in the user who was given CODE (they got it by writing to the bot)."""
    from hermes.gateway.access import pair

    found = pair(Home.from_env(), code)
    say(f"{found.user} on {found.platform} may talk to the gateway from now on.")


@gateway_group.command("unpair")
@click.argument("platform")
@click.argument("user")
def unpair_command(platform: str, user: str) -> None:
    """Take a paired USER's access on PLATFORM away (users listed in config.yaml stay)."""
    from hermes.errors import UsageError
    from hermes.gateway.access import unpair

    if not unpair(Home.from_env(), platform, user):
        raise UsageError(f"{user} is not paired on {platform} (`hermes gateway users` lists who is).")
    say(f"{user} on {platform} can no longer talk to the gateway.")


@gateway_group.command("users")
def users_command() -> None:
    """Who may talk to the gateway: config.yaml's allowed_users and the paired users."""
    from hermes.config.store import ConfigStore
    from hermes.gateway.access import paired

    home = Home.from_env()
    config = ConfigStore(home).load()
    lines = [f"{name}: {user} (config.yaml)" for name, settings in config.gateway.platforms.items()
             for user in settings.allowed_users]
    lines += [f"{name}: {user} (paired)" for name, users in paired(home).items() for user in users]
    say("\n".join(lines) if lines else "Nobody yet: list allowed_users under gateway.<platform> in config.yaml, "
                                       "or pair users by their code.")


@gateway_group.command("install-service")
def install_service_command() -> None:
    """Write a systemd user unit that runs the gateway (restarted on failure, started at login)."""
    import os

    from hermes.gateway.service import install_unit

    path = install_unit(Home.from_env(), os.environ)
    say(f"Wrote {path}. Start it now and at every login with:\n"
        f"  systemctl --user daemon-reload && systemctl --user enable --now hermes-gateway\n"
        f"and keep it running while you are logged out with `loginctl enable-linger`.")


@gateway_group.command("uninstall-service")
def uninstall_service_command() -> None:
    """Remove the systemd user unit `install-service` wrote (stop it first: `systemctl --user disable --now
    hermes-gateway`)."""
    import os

    from hermes.gateway.service import uninstall_unit

    path = uninstall_unit(os.environ)
    say("There was no hermes-gateway unit." if path is None else f"Removed {path}.")
