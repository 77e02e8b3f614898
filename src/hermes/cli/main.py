"""Entry point: `hermes` and `python -m hermes`.

Exit codes: 0 success, 1 failure, 2 usage or config error, 3 no such server/plugin/tool, 130
interrupted. Every `HermesError` becomes one sentence on stderr and its exit code; an error
nobody expected becomes one sentence plus the path of the log holding the details, never a
traceback. The mapping lives in the root group's `invoke`, so tests that drive the CLI in-process
(click's `CliRunner`) see exactly what a user sees.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Any

import click

from hermes import __version__, sigint
from hermes.cli.lazy_group import LazyGroup
from hermes.cli.output import printable
from hermes.config.dotenv import exposure_warning
from hermes.debugging import DEBUG_VARIABLE, debugging
from hermes.errors import HermesError, causes, leaf
from hermes.files import open_private_append
from hermes.home import Home


def unexpected(exc: BaseException) -> str:
    """Write the details where the user can find them; return one sentence for the terminal."""
    import traceback

    home = Home.from_env()
    log = home.logs / "hermes.log"
    try:
        home.ensure()
        with open_private_append(log) as handle:
            handle.write(_redacted("".join(traceback.format_exception(exc)), home))
        where = f"; details are in {log}"
    except OSError:
        where = ""
    if debugging():
        click.echo(_redacted("".join(traceback.format_exception(exc)), home), err=True)
    return f"hermes hit an unexpected error ({type(exc).__name__}){where}. Please report it."


def _redacted(text: str, home: Home) -> str:
    """The session's redactor is gone by now: hide at least every `.env` value and every token shape."""
    from hermes.config.dotenv import read_dotenv
    from hermes.security.redact import Redactor

    try:
        secrets = list(read_dotenv(home.dotenv).values())
    except (HermesError, OSError):
        secrets = []
    return Redactor(secrets)(text)


def _warn_near_misses(home: Home) -> None:
    """A misspelt top-level key (`mcp_server:`) would otherwise be ignored as another tool's setting."""
    from hermes.config.store import ConfigStore

    try:
        misses = ConfigStore(home).load().near_misses
    except HermesError:
        return  # the command reports a broken file itself, with the file, the line and the rule
    for miss in misses:
        click.echo(f"warning: {home.config}: unknown top-level key {miss}; hermes ignores it.", err=True)


# Each command's module loads only when that command runs (or help lists it).
LAZY_COMMANDS = {
    "mcp": "hermes.cli.mcp_commands:mcp_group",
    "tools": "hermes.cli.tools_commands:tools_group",
    "plugins": "hermes.cli.plugins_commands:plugins_group",
    "skills": "hermes.cli.plugins_commands:skills_group",
    "chat": "hermes.cli.chat_command:chat_command",
    "model": "hermes.cli.model_command:model_command",
    "doctor": "hermes.cli.doctor_command:doctor_command",
    "dashboard": "hermes.cli.dashboard_command:dashboard_command",
    "gateway": "hermes.cli.gateway_command:gateway_group",
    "team": "hermes.cli.team_commands:team_group",
    "completion": "hermes.cli.completion:completion_command",
}


class HermesGroup(LazyGroup):
    def invoke(self, ctx: click.Context) -> Any:
        # `--debug` reaches the session's logging (and its own processes) through the environment;
        # the command's own setting, so it is taken back when the command ends (in-process runs).
        debug = bool(ctx.params.get("debug"))
        before = os.environ.get(DEBUG_VARIABLE)
        if debug:
            os.environ[DEBUG_VARIABLE] = "1"
        try:
            return self._invoke(ctx)
        finally:
            if debug and before is None:
                os.environ.pop(DEBUG_VARIABLE, None)

    def _invoke(self, ctx: click.Context) -> Any:
        home = Home.from_env()
        exposed = exposure_warning(home.dotenv)
        if exposed:
            click.echo(f"warning: {exposed}", err=True)
        _warn_near_misses(home)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit):
            raise
        except HermesError as exc:
            # An interruption (exit 130/143) has nothing to report beyond that it happened.
            click.echo(printable(f"{exc}" if exc.exit_code in (130, 143) else f"Error: {exc}"), err=True)
            ctx.exit(exc.exit_code)
        except BaseExceptionGroup as group:
            # A task group wraps what its tasks raised; one of our own errors inside is still ours.
            cause = leaf(group)
            if isinstance(cause, HermesError):
                click.echo(printable(f"Error: {cause}"), err=True)
                ctx.exit(cause.exit_code)
            if isinstance(cause, KeyboardInterrupt):
                click.echo("Interrupted.", err=True)
                ctx.exit(sigint.exit_code(cause))
            click.echo(f"Error: {unexpected(group)}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt as stop:
            click.echo("Interrupted.", err=True)
            ctx.exit(sigint.exit_code(stop))
        except BrokenPipeError:
            _reader_left()
        except Exception as exc:
            during = _the_interrupt(exc)
            if during is not None:
                click.echo("Interrupted.", err=True)
                ctx.exit(sigint.exit_code(during))
            click.echo(f"Error: {unexpected(exc)}", err=True)
            ctx.exit(1)


@click.group(cls=HermesGroup, lazy_commands=LAZY_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hermes")
@click.option("--debug", is_flag=True, help="Also show the log (debug lines, redacted) on stderr, and an "
                                            "unexpected error's details.")
def cli(debug: bool) -> None:
    """hermes: many MCP servers, one clean, safe and honest tool surface."""


@cli.command("demo")
@click.option("--home", "home_dir", help="Use this HERMES_HOME instead of a temporary folder.")
def demo_command(home_dir: str | None) -> None:
    """Walk the whole story offline: a plain server, then an app-bound server and its app."""
    from hermes.demo.story import run_demo

    sys.exit(run_demo(home_dir))


def _the_interrupt(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM) during which `exc` was raised (a module half imported, a library
    turning the KeyboardInterrupt into an error of its own): the user stopped the command, nothing broke."""
    return next((current for current in causes(exc) if isinstance(current, KeyboardInterrupt)), None)


def _quiet_unraisable(unraisable: Any) -> None:
    """asyncio collects a subprocess transport after its loop closed when a server's helper (one that
    left the server's session) still holds the pipes: the 'Event loop is closed' it then raises in
    `__del__` is nothing a user can act on, and no traceback reaches the terminal for it. Nor for a
    Ctrl-C dropped in a weak reference's callback: it is written down, and the command's next event
    loop stops its work for it (`hermes.sigint`)."""
    if isinstance(unraisable.exc_value, RuntimeError) and "Event loop is closed" in str(unraisable.exc_value):
        return
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and sigint.pending():
        return
    sys.__unraisablehook__(unraisable)


def _reader_left() -> None:
    """`hermes … | head`: the reader closed the pipe. Nothing is wrong; stop quietly, as `cat` does
    (exit 141, what a SIGPIPE death reports), and let nothing try to write there again."""
    import os

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(141)


def main() -> None:
    sys.unraisablehook = _quiet_unraisable
    # The SDK's deprecation notices speak to SDK developers; a user of hermes can do nothing about them.
    # (Matched by text: importing the SDK's warning class would load the SDK for `--help`.)
    warnings.filterwarnings("ignore", message=r".* as of \d{4}-\d{2}-\d{2}")
    try:
        cli.main(prog_name="hermes")
        sys.stdout.flush()
    except KeyboardInterrupt as stop:
        sys.exit(sigint.exit_code(stop))
    except BrokenPipeError:
        _reader_left()
