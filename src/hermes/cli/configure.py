"""`hermes mcp configure`: a checklist of a server's tools that writes `tools.include`."""

from __future__ import annotations

import questionary

from hermes.cli.asking import answer_to
from hermes.cli.output import say
from hermes.cli.progress import progress
from hermes.config.edit import set_tool_include
from hermes.config.store import ConfigStore
from hermes.home import Home
from hermes.session.probe import probe_server


def configure_tools(home: Home, name: str) -> int:
    with progress(f"Listing the tools of '{name}'…"):
        report = probe_server(home, name)
    if not report.ok:
        say(f"{name}: cannot list its tools: {report.reason}", err=True)
        return 1
    tools = report.tools
    if not tools:
        say(f"{name} offers no tools.")
        return 0
    choices = [questionary.Choice(t.name, value=t.name, checked=t.selected) for t in tools]
    picked = answer_to(questionary.checkbox(f"Tools of '{name}' to offer (space toggles, enter saves):",
                                  choices=choices))
    if picked is None:
        say("Nothing changed.")
        return 1
    say(write_tool_selection(ConfigStore(home), name, [t.name for t in tools], picked))
    say("Running sessions pick this up on `hermes mcp reload`.")
    return 0


def write_tool_selection(store: ConfigStore, name: str, offered: list[str], picked: list[str]) -> str:
    """Write `tools.include` from a checklist of `offered` (every one picked: no filter at all), as
    `hermes mcp configure` and the dashboard do; the sentence that says what was written."""
    include = None if set(picked) >= set(offered) else [tool for tool in offered if tool in picked]
    with store.edit() as doc:
        set_tool_include(doc, name, include)
    if include is None:
        return f"All {len(offered)} tools of '{name}' selected (no filter written)."
    return f"Selected {len(include)} of {len(offered)} tools of '{name}' (tools.include written)."
