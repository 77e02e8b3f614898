"""`hermes mcp` with no command: browse the catalog, install, enable/disable, configure, remove."""

from __future__ import annotations

import shutil
import sys

import questionary

from hermes.catalog.install import catalog_states
from hermes.catalog.states import DISABLED, CatalogState
from hermes.cli.asking import answer_to
from hermes.cli.catalog_flow import run_install
from hermes.cli.configure import configure_tools
from hermes.cli.output import say
from hermes.config.edit import remove_server, set_server_enabled
from hermes.config.store import ConfigStore
from hermes.home import Home

_QUIT = "__quit__"


def _set_enabled(home: Home, name: str, enabled: bool) -> None:
    with ConfigStore(home).edit() as doc:
        set_server_enabled(doc, name, enabled)


def _remove(home: Home, name: str) -> None:
    from hermes.mcp.oauth.storage import delete_tokens

    with ConfigStore(home).edit() as doc:
        remove_server(doc, name)
    delete_tokens(home, name)


def _actions(state: CatalogState) -> list[questionary.Choice]:
    if state is CatalogState.AVAILABLE:
        return [questionary.Choice("Install", value="install"), questionary.Choice("Back", value="back")]
    toggle = questionary.Choice("Enable", value="enable") if state in DISABLED else \
        questionary.Choice("Disable", value="disable")
    return [toggle, questionary.Choice("Configure tools", value="configure"),
            questionary.Choice("Remove", value="remove"), questionary.Choice("Back", value="back")]


def _fit(text: str, room: int) -> str:
    return text if len(text) <= room else text[:room - 1] + "…"


def run_picker(home: Home) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        say("`hermes mcp` is interactive and needs a terminal; use `hermes mcp catalog` and "
            "`hermes mcp install NAME --yes` in scripts.", err=True)
        return 2
    while True:
        rows, custom, _ = catalog_states(home)
        states = {r.entry.name: r.state for r in rows} | {c.name: c.state for c in custom}
        width = max(len(n) for n in states) if states else 10
        room = max(20, shutil.get_terminal_size().columns - width - 30)  # the description fits the line
        choices = [questionary.Choice(f"{r.entry.name:<{width}}  {r.state.value:<22} {_fit(r.entry.description, room)}",
                                      value=r.entry.name) for r in rows]
        choices += [questionary.Choice(f"{c.name:<{width}}  {c.state.value:<22} (custom)", value=c.name)
                    for c in custom]
        choices.append(questionary.Choice("Quit", value=_QUIT))
        picked = answer_to(questionary.select("MCP servers (enter to choose, ctrl-c to quit):", choices=choices))
        if picked is None:
            return 130  # Ctrl-C: interrupted, as every other command says it
        if picked == _QUIT:
            return 0
        name = str(picked)
        action = answer_to(questionary.select(f"{name} [{states[name].value}]:", choices=_actions(states[name])))
        if action in (None, "back"):
            continue
        if action == "install":
            run_install(home, name, {}, interactive=True)
        elif action in ("enable", "disable"):
            _set_enabled(home, name, action == "enable")
            say(f"{name} {action}d. Running sessions pick this up on `hermes mcp reload`.")
        elif action == "configure":
            configure_tools(home, name)
        elif action == "remove" and answer_to(questionary.confirm(f"Remove {name} (and its OAuth tokens)?",
                                                        default=False)):
            _remove(home, name)
            say(f"Removed {name}.")
