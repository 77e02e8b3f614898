"""The interactive side of `hermes mcp install`: prompts, progress, the tool checklist."""

from __future__ import annotations

import sys

import questionary

from hermes.catalog.install import InstallOutcome, Override, install_entry
from hermes.catalog.manifest import Setting
from hermes.cli.asking import answer_to
from hermes.cli.output import say
from hermes.cli.progress import progress
from hermes.config.launchers import Warmed, run_warm
from hermes.home import Home
from hermes.session.probe import probe_server
from hermes.session.status import ProbeReport


def _ask(setting: Setting) -> str | None:
    if setting.secret:
        answer = answer_to(questionary.password(f"{setting.prompt}:"))
    else:
        answer = answer_to(questionary.text(f"{setting.prompt}:", default=setting.default or ""))
    if answer is None:
        raise KeyboardInterrupt
    return str(answer) or None


def _choose(tools: list[tuple[str, str]], preselected: set[str], cautions: set[str]) -> list[str] | None:
    def label(name: str, description: str) -> str:
        mark = "  [changes things: uncheck it if you do not need it]" if name in cautions else ""
        return f"{name}  {description.splitlines()[0] if description else ''}".rstrip() + mark

    choices = [questionary.Choice(label(name, description), value=name, checked=name in preselected)
               for name, description in tools]
    picked = answer_to(questionary.checkbox("Tools to offer (space toggles, enter saves):", choices=choices))
    if picked is None:
        raise KeyboardInterrupt
    return [str(p) for p in picked]


def _probe(home: Home, name: str) -> ProbeReport:
    with progress(f"Starting '{name}' to list its tools (a cold npx/uvx start can take a minute)…"):
        return probe_server(home, name)


def run_install(home: Home, name: str, given: dict[str, str], *, interactive: bool,
                override: Override | None = None) -> int:
    yes = not interactive
    interactive = interactive and sys.stdin.isatty()

    def confirm(reason: str) -> bool:
        say(f"The server did not start: {reason}")
        if not interactive:
            if not yes:  # no terminal to ask, and no --yes: nothing is kept
                say("Nothing was changed (no terminal to ask whether to keep it; --yes keeps it, disabled).")
                return False
            say("Keeping it in config.yaml, disabled (--yes).")
            return True
        answer = answer_to(questionary.confirm("Save it anyway, disabled, to fix later?", default=True))
        if answer is None:  # Ctrl-C: the install is abandoned, and its transaction undone
            raise KeyboardInterrupt
        return bool(answer)

    def login(home: Home, server: str) -> None:
        from hermes import interrupts
        from hermes.mcp.oauth.login import login as oauth_login

        say(f"'{server}' uses OAuth: authorize it in your browser.")
        interrupts.run(lambda: oauth_login(home, server, say=say))

    def prepare(command: list[str]) -> Warmed:
        with progress(f"Preparing: {' '.join(command)} (a cold npx/uvx download can take minutes)…"):
            return run_warm(command)

    outcome: InstallOutcome = install_entry(
        home, name, given=given, ask=_ask if interactive else None, choose=_choose if interactive else None,
        confirm_save_disabled=confirm, override=override, probe=_probe, login=login if interactive else None,
        prepare=prepare)
    for warning in outcome.warnings:
        say(f"warning: {warning}", err=True)
    if not outcome.saved:
        say(f"Nothing was installed; config.yaml and .env are as they were. Reason: {outcome.failure}")
        return 1
    if not outcome.enabled:
        say(f"Saved '{name}' disabled. Fix the cause, then `hermes mcp test {name}` and `hermes mcp enable {name}`.")
        return 1
    say(f"Installed '{name}' with {outcome.selection}.")
    if outcome.post_install:
        say(outcome.post_install)
    say("Running sessions pick it up on `hermes mcp reload`.")
    return 0
