"""`hermes gateway`: the agent on messaging platforms (config.yaml's `gateway:`), in the foreground or
as a background service, and who may talk to it."""

from __future__ import annotations

import sys
import time
from functools import partial

import click

from hermes.cli.options import json_option
from hermes.cli.output import print_json, say
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
    say("hermes gateway: connecting…", err=True)

    def ready(platforms: list[str]) -> None:
        say(f"hermes gateway: serving on {', '.join(platforms)} (Ctrl-C or SIGTERM stops it).", err=True)

    interrupts.run(partial(run_gateway, home, ready=ready), stop_on_signal=True)
    say("hermes gateway: stopped.", err=True)
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
@json_option
def status_command(as_json: bool) -> None:
    """Whether the gateway runs, since when, on which platforms; exit 1 when it does not.
    The settings are checked first, as a start would check them (keys, ${VAR}s, toolsets, sandbox)."""
    from hermes.config.store import ConfigStore
    from hermes.gateway.access import Access
    from hermes.gateway.service import running
    from hermes.gateway.settings import check_settings, configured_platforms

    home = Home.from_env()
    config = ConfigStore(home).load()
    if config.gateway_settings().platforms:
        platforms, _ = configured_platforms(home, config, Access(home, {}))
        check_settings(home, config, [platform.name for platform in platforms])
    found = running(home)
    if as_json:
        print_json({"running": found is not None, "pid": found.pid if found else None,
                    "started": found.started if found else None, "platforms": list(found.platforms) if found else []})
        sys.exit(0 if found else 1)
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
    from hermes.config.gateway_settings import PLATFORM_KEYS
    from hermes.config.store import ConfigStore
    from hermes.errors import UsageError
    from hermes.gateway.access import unpair
    from hermes.validation import suggestion

    home = Home.from_env()
    if platform not in PLATFORM_KEYS:
        raise UsageError(f"Unknown platform '{platform}'{suggestion(platform, PLATFORM_KEYS)}; the gateway's "
                         f"platforms are {', '.join(PLATFORM_KEYS)}.")
    listed = ConfigStore(home).load().gateway_settings().platforms.get(platform)
    if not unpair(home, platform, user):
        if listed is not None and user in listed.allowed_users:
            raise UsageError(f"{user} is not paired but listed under gateway.{platform}.allowed_users in "
                             f"{home.config}; remove them there.")
        raise UsageError(f"{user} is not paired on {platform} (`hermes gateway users` lists who is).")
    say(f"{user} on {platform} can no longer talk to the gateway.")


@gateway_group.command("users")
@json_option
def users_command(as_json: bool) -> None:
    """Who may talk to the gateway (config.yaml's allowed_users and the paired users), and who is
    waiting with a pairing code."""
    from hermes.config.store import ConfigStore
    from hermes.gateway.access import paired, waiting

    home = Home.from_env()
    config = ConfigStore(home).load()
    listed = [{"platform": name, "user": user, "how": "config.yaml"}
              for name, settings in config.gateway_settings().platforms.items() for user in settings.allowed_users]
    listed += [{"platform": name, "user": user, "how": "paired"} for name, users in paired(home).items()
               for user in users]
    pending = waiting(home)
    if as_json:
        print_json({"users": listed, "waiting": [{"platform": p.platform, "user": p.user, "code": p.code,
                                                  "expires": p.expires} for p in pending]})
        return
    lines = [f"{entry['platform']}: {entry['user']} ({entry['how']})" for entry in listed]
    lines += [f"{p.platform}: {p.user} is waiting with code {p.code} ({max(1, int((p.expires - time.time()) // 60))} "
              f"min left; `hermes gateway pair {p.code}` lets them in)" for p in pending]
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
