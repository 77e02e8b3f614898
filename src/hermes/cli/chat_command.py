"""`hermes chat`: the agent. One turn with `-q`, or an interactive conversation in a terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from hermes.cli.options import json_option, platform_option, wait_option
from hermes.cli.output import print_json, printable, say
from hermes.errors import UsageError
from hermes.files import PRIVATE_FILE, open_private_append
from hermes.home import Home
from hermes.validation import counted


@click.command("chat")
@click.option("-q", "--query", help="Ask one question, print the answer, and exit (no terminal needed).")
@click.option("--model", help="Model name for this run (overrides model.name).")
@click.option("--base-url", help="OpenAI-compatible endpoint for this run (overrides model.base_url).")
@click.option("-y", "--yes", is_flag=True, help="One-shot: run tools that ask for approval (destructive ones).")
@click.option("--deferred/--no-deferred", default=None,
              help="Offer tool_search and a catalog instead of every tool schema (default: model.deferred_tools).")
@click.option("-r", "--resume", "resume", is_flag=False, flag_value="", default=None, metavar="[ID]",
              help="Take up a saved chat: its id (or the start of it); alone, a list to choose from.")
@click.option("-c", "--continue", "keep_going", is_flag=True, help="Take up the newest saved chat of this folder.")
@platform_option()
@wait_option
@json_option
def chat_command(query: str | None, model: str | None, base_url: str | None, yes: bool, deferred: bool | None,
                 resume: str | None, keep_going: bool, platform: str | None, wait: float, as_json: bool) -> None:
    """Talk to the configured model, with every configured MCP server's tools.

    The chat starts after at most --wait seconds whatever the servers do; a server still starting
    then joins when it is ready, and the model hears that its tools arrived. Every chat is saved
    (HERMES_HOME/transcripts, private, secrets already hidden) to take up later.
    """
    from hermes.agent.chat import ChatOptions
    from hermes.cli.chat_resume import chosen_transcript

    home = Home.from_env()
    if resume is not None and keep_going:
        raise UsageError("--resume and --continue each choose a chat; give one of them.")
    folder = Path.cwd()
    options = ChatOptions(model=model, base_url=base_url, yes=yes, platform=platform, deferred=deferred,
                          folder=folder, wait=wait, resume=chosen_transcript(home, resume, keep_going, folder))
    from hermes import interrupts

    if query is not None:
        sys.exit(interrupts.run(_one_shot, home, options, query, as_json))
    if as_json:
        raise UsageError("--json goes with -q/--query (a whole turn as JSON).")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("Interactive chat needs a terminal; use `hermes chat -q TEXT` in scripts and pipes.")
    if yes:  # a flag accepted and then ignored would let the user believe nothing will ask
        say("note: --yes is for one-shot runs (-q); in this chat, a tool that asks for approval asks here.",
            err=True)
    sys.exit(interrupts.run(_interactive, home, options))


async def _one_shot(home: Home, options: Any, query: str, as_json: bool) -> int:
    from hermes import interrupts
    from hermes.agent.chat import open_chat
    from hermes.agent.loop import Turn, TurnStopped
    from hermes.agent.provider import ModelError
    from hermes.cli.chat_ui import OneShotUI

    async with open_chat(home, options, OneShotUI()) as chat:
        for changed in chat.session.tools.changed_tools():
            say(f"warning: {changed.sentence()}", err=True)
        turn: Turn | None = None
        failure: str | None = None
        try:
            with interrupts.stops_the_command():  # its tool calls are cancelled on their servers first
                turn = await chat.turn(query)
        except (ModelError, TurnStopped) as exc:
            failure = str(exc)
        redact = chat.session.redactor
        cut = turn is not None and turn.cut_off
        if as_json:
            data: dict[str, Any] = {"model": chat.agent.provider.settings.name, "answer": turn.answer if turn else None,
                                    "error": failure, "messages": chat.agent.messages()}
            ran = turn or chat.agent.last_turn  # a turn that stopped still ran its tools: say which
            if ran is not None:
                data |= {"rounds": ran.rounds, "tool_calls": [r.to_json() for r in ran.tool_runs],
                         "usage": ran.usage, "cached_share": ran.cached_share,
                         "finish_reason": ran.finish_reason, "cut_off": ran.cut_off}
            print_json(redact.value(data))
        elif turn is not None:
            click.echo(printable(redact(turn.answer)))
            if not turn.answer.strip():
                say(EMPTY_ANSWER, err=True)
        else:
            say(f"Error: {failure}", err=True)
        if cut and not as_json:
            say(_cut_off_note(chat), err=True)
        return 0 if failure is None and not cut else 1


EMPTY_ANSWER = "(The model answered with no text.)"


def _cut_off_note(chat: Any) -> str:
    limit = chat.agent.settings.max_tokens
    where = f"model.max_tokens is {limit}" if limit else "the model's own limit"
    return f"(The answer was cut off at the token limit ({where}); it is not complete.)"


async def _interactive(home: Home, options: Any) -> int:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    from hermes.agent.chat import open_chat
    from hermes.cli.chat_ui import TerminalUI

    bindings = KeyBindings()

    @bindings.add("c-c")
    def _(event: Any) -> None:
        # Ctrl-C clears what was typed; at an empty prompt it leaves, like Ctrl-D.
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=EOFError)

    home.ensure()
    # prompt_toolkit would create the file with the umask's mode; what was typed (a pasted key
    # among it) is the user's alone, also in a file an older hermes made 0644.
    open_private_append(home.chat_history).close()
    home.chat_history.chmod(PRIVATE_FILE)
    prompt: PromptSession[str] = PromptSession(history=FileHistory(str(home.chat_history)), key_bindings=bindings)
    ui = TerminalUI()
    await _offer_trust(home, options.folder, prompt)
    say("Starting the MCP servers…", err=True)
    async with open_chat(home, options, ui) as chat:
        _banner(chat)
        if options.resume is not None:
            from hermes.cli.chat_resume import resumed_line

            say(resumed_line(options.resume, len(chat.agent.conversation.messages)), err=True)
        asked: set[tuple[str, str, str]] = set()
        while True:
            try:
                text = (await prompt.prompt_async("› ", handle_sigint=False)).strip()
            except EOFError:
                _resume_hint(chat)
                return 0
            if not text:
                continue
            if text.startswith("/"):
                from hermes.cli.chat_slash import slash

                if await slash(text, chat, home) == "exit":
                    _resume_hint(chat)
                    return 0
                continue
            await _review_changes(chat, asked)
            await _turn(chat, ui, text)


async def _review_changes(chat: Any, asked: set[tuple[str, str, str]]) -> None:
    """A tool whose definition changed since it was pinned (or that is new) is held back: show the
    change once and ask whether to accept it, before the model can use it."""
    from prompt_toolkit import PromptSession

    for changed in chat.session.tools.changed_tools():
        key = (changed.server, changed.tool, changed.diff())
        if key in asked:
            continue
        asked.add(key)
        say(f"{changed.sentence()}\n{changed.diff() or '(no change in meaning)'}", err=True)
        try:
            answer = await PromptSession[str]().prompt_async(f"Accept the new definition of {changed.tool}? [y/N]: ",
                                                             handle_sigint=False)
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() in ("y", "yes"):
            chat.session.tools.accept(changed.server, [changed.tool])
            say(f"Accepted: {changed.tool} is available from the next request.", err=True)
        else:
            say(f"Kept back: {changed.tool} stays out of this session (`hermes tools approve "
                f"{changed.server} {changed.tool}` accepts it later).", err=True)


async def _offer_trust(home: Home, folder: Path, prompt: Any) -> None:
    """Untrusted project skills here: ask once whether to trust this folder (the answer is recorded)."""
    from hermes.agent.skills import project_skill_files
    from hermes.config.trust import TrustKind, TrustStore

    names = [path.parent.name for path in project_skill_files(folder)]
    if not names:
        return
    store = TrustStore(home, TrustKind.SKILLS)
    state = store.state(folder)
    if state.trusted:
        return
    why = state.why_not
    say(f"{folder.resolve()} has project skills ({', '.join(names)}) in .hermes/skills; {why}. They come with "
        f"the folder's files, so they load only if you trust it.", err=True)
    try:
        answer = await prompt.prompt_async("Trust this folder's skills and load them (its MCP servers stay "
                                           "off)? [y/N]: ", handle_sigint=False)
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        try:
            store.trust(folder)
            say("Trusted its skills (not its servers); a change to its .hermes folder will ask again.", err=True)
        except OSError as exc:
            say(f"Could not trust it: {exc}", err=True)
    else:
        say("Not trusted: its skills stay out of this session.", err=True)


def _banner(chat: Any) -> None:
    tools = len(chat.session.surface().tools)
    missing = chat.session.unavailable()
    loaded = [s.name for s in chat.skills if s.loaded]
    say(f"hermes chat with {chat.agent.provider.settings.name} at {chat.agent.provider.where}: {tools} tools"
        + (f", {counted(len(missing), 'server')} unavailable (/mcp)" if missing else "")
        + (f", skills: {', '.join(loaded)}" if loaded else "") + ". /help lists commands.", err=True)
    from hermes.mcp.states import ConnectionState
    from hermes.tools.toolsets import shown_server

    slow = sorted(shown_server(name) for name, snapshot in chat.session.snapshots().items()
                  if snapshot.state is ConnectionState.STARTING)
    if slow:
        say(f"still starting: {', '.join(slow)}; their tools join when they are ready.", err=True)
    for skill in chat.skills:
        if not skill.loaded:
            say(f"skill {skill.name} ({skill.source}) not loaded: {skill.why_not}", err=True)


async def _turn(chat: Any, ui: Any, text: str) -> None:
    """One turn; Ctrl-C (SIGINT) cancels it, and the in-flight tool calls with it."""
    from hermes.agent.loop import TurnStopped
    from hermes.agent.provider import ModelError
    from hermes.interrupts import interruptible

    ui.tools_running.clear()
    with interruptible() as caught:
        try:
            turn = await chat.turn(text, stream=True)
            ui.finish_answer(turn.answer)
            if not turn.answer.strip():
                say(EMPTY_ANSWER, err=True)
            if turn.cut_off:
                say(_cut_off_note(chat), err=True)
        except (ModelError, TurnStopped) as exc:
            ui.abandon_answer()
            say(f"\nError: {exc}", err=True)
            if not getattr(exc, "message_kept", True):
                say("(That message was not kept in the conversation: send it again, perhaps shorter.)", err=True)
        except Exception as exc:  # the conversation goes on: one sentence, the details in the log
            from hermes.cli.main import unexpected

            ui.abandon_answer()
            say(f"\nError: {unexpected(exc)}", err=True)
        finally:
            ui.close()  # a cancelled tool may never report its end: take the status line away
    if caught.hit:
        ui.abandon_answer()
        cancelled = "; running tools were cancelled on their servers" if ui.tools_running else ""
        say(f"\n(interrupted: the turn stopped{cancelled})", err=True)


def _resume_hint(chat: Any) -> None:
    """On leaving a chat that said anything: how to take it up again."""
    transcript = chat.transcript
    if chat.agent.conversation.messages and transcript is not None:
        say(f"This chat is saved: `hermes chat --resume {transcript.id}` takes it up again "
            f"(`hermes chat -c` in this folder).", err=True)
