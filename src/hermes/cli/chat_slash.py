"""The interactive chat's slash commands: what the user types that is not for the model.

A command the user typed is done, not asked about again (`/reload-mcp` reloads); a mistyped one
gets the closest command. `/mcp` is the server menu: every server's state, and enable, disable or
reconnect one without leaving the chat (enable and disable write config.yaml as `hermes mcp
enable/disable` do).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hermes.cli.output import print_table, say
from hermes.errors import HermesError
from hermes.home import Home
from hermes.validation import counted, suggestion

HELP = """Commands:
  /help           this list
  /tools          the tools the model has, their permission, and what is unavailable (with why)
  /status         the MCP servers and the last turn's tokens
  /mcp            the MCP servers: state, tools, why one is unavailable
  /mcp enable S   switch server S on in config.yaml (disable: off); the chat reloads
  /mcp reconnect S  restart server S now (a fresh process or connection)
  /reload-mcp     re-read config.yaml and plugins; the model hears what changed
  /model NAME     another model of the same endpoint for the next turns
  /new            a fresh conversation (same session, same system prompt)
  /resume [ID]    the saved chats; with an ID, take that one up
  /exit           leave (so do Ctrl-D, and Ctrl-C at an empty prompt)
Ctrl-C during an answer stops that turn (running tools are cancelled on their servers)."""

COMMANDS = ("/help", "/tools", "/status", "/mcp", "/reload-mcp", "/model", "/new", "/resume", "/exit", "/quit")


async def slash(text: str, chat: Any, home: Home) -> str | None:
    """Do one slash command; "exit" when the chat should end."""
    command, *rest = text.split()
    command = command.lower()
    if command in ("/exit", "/quit"):
        return "exit"
    if command == "/help":
        say(HELP)
    elif command == "/tools":
        show_tools(chat)
    elif command == "/status":
        show_servers(chat)
        say(usage_line(chat))
    elif command == "/mcp":
        await mcp_menu(chat, home, rest)
    elif command == "/model":
        switch_model(chat, rest)
    elif command == "/new":
        chat.new()
        say("A fresh conversation (same tools, same system prompt).")
    elif command == "/resume":
        from hermes.cli.chat_resume import slash_resume

        slash_resume(chat, text, home)
    elif command == "/reload-mcp":
        await reload(chat)
    else:
        say(f"Unknown command {command}{suggestion(command, COMMANDS)}; /help lists them.")
    return None


def show_servers(chat: Any) -> None:
    from hermes.tools.toolsets import shown_server

    for status in chat.session.status():
        why = f": {status.why_unavailable}" if status.why_unavailable else ""
        say(f"{shown_server(status.name)}: {status.state}, {counted(status.tools, 'tool')} ({status.transport}){why}")


async def mcp_menu(chat: Any, home: Home, words: list[str]) -> None:
    if not words:
        show_servers(chat)
        say("`/mcp enable S`, `/mcp disable S`, `/mcp reconnect S` change one.")
        return
    action, names = words[0].lower(), words[1:]
    if action not in ("enable", "disable", "reconnect") or len(names) != 1:
        say(f"`/mcp {action}` is not a server action{suggestion(action, ('enable', 'disable', 'reconnect'))}; "
            f"use `/mcp enable S`, `/mcp disable S` or `/mcp reconnect S`.")
        return
    name = names[0]
    known = list(chat.session.snapshots())
    if action == "reconnect":
        if name not in known:
            say(f"No MCP server '{name}' in this chat{suggestion(name, known)}.")
            return
        snapshot = await chat.session.reconnect(name)
        why = f": {chat.session.why(name).sentence}" if not snapshot.offers_tools else ""
        say(f"Reconnected '{name}': {snapshot.state}{why}")
        return
    from hermes.cli.mcp_config_commands import write_enabled

    try:
        said = write_enabled(home, name, action == "enable")
    except HermesError as exc:
        say(str(exc))
        return
    say(said)
    await reload(chat)


def usage_line(chat: Any) -> str:
    turn = chat.agent.last_turn
    model = f"model {chat.agent.provider.settings.name} at {chat.agent.provider.where}"
    if turn is None or not turn.usage:
        return f"{model}; no turn yet."
    usage = turn.usage
    share = turn.cached_share
    cached = f", {usage['cached_prompt_tokens']} served from the provider's prompt cache ({share:.0%})" \
        if share is not None else ", no cache figures from the provider"
    return f"{model}; last turn: {usage.get('prompt_tokens', '?')} prompt tokens{cached}, " \
           f"{usage.get('completion_tokens', '?')} completion tokens."


def switch_model(chat: Any, words: list[str]) -> None:
    if len(words) != 1:
        say(f"Model: {chat.agent.provider.settings.name}. `/model NAME` switches to another model of the same "
            f"endpoint for the next turns.")
        return
    chat.agent.provider.settings = replace(chat.agent.provider.settings, name=words[0])
    say(f"Switched to {words[0]} for the next turns (same endpoint, same system prompt).")


def show_tools(chat: Any) -> None:
    """One row per tool, fitted to the terminal: a long description is cut with '…', never wrapped."""
    from hermes.session.probe import first_line

    surface = chat.session.surface()
    rows = [[tool.name, chat.session.tools.verdict(tool, cautious=True).permission.value,
             first_line(tool.description)] for tool in surface.tools.values()]
    if rows:
        print_table(["TOOL", "PERMISSION", "DESCRIPTION"], rows, shrink=["DESCRIPTION"])
    else:
        say("No tools.")
    if chat.agent.deferred:
        say("(deferred: the model finds these with tool_search)")
    for missing in chat.session.unavailable():
        say(f"unavailable: {missing.sentence}")
    for changed in chat.session.tools.changed_tools():
        say(f"held back: {changed.sentence()}")


async def reload(chat: Any) -> None:
    """The user asked for it: reload now (within the chat's budget), and say what changed."""
    report, notice = await chat.reload()
    if report is None:
        say("The reload did not finish within 30 s; servers still starting keep starting in the background.")
        return
    changed = [f"{kind}: {', '.join(names)}" for kind, names in report.to_json().items() if names and
               kind != "unchanged"]
    say("Reloaded. " + ("; ".join(changed) if changed else "Nothing changed."))
    if notice:
        say("The model will be told:\n" + notice)
    for missing in chat.session.unavailable():
        say(f"unavailable: {missing.sentence}")
