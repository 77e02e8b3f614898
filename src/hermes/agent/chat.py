"""Putting a chat together: the model from config (or the command line), a session whose servers'
sampling and elicitation reach that model and the user, the skills, the fixed system prompt."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types

from hermes.agent.loop import Agent, Turn
from hermes.agent.prompt import MissingServer, system_prompt
from hermes.agent.provider import Provider
from hermes.agent.sampling import SamplingBroker
from hermes.agent.skills import SkillEntry, all_skills
from hermes.agent.transcripts import Summary, Transcript, load
from hermes.agent.ui import ChatUI
from hermes.config.model_settings import MODEL_BLOCK, ModelSettings
from hermes.config.store import ConfigStore
from hermes.config.trust import TrustKind, TrustStore
from hermes.errors import ConfigError, HermesError
from hermes.home import Home
from hermes.mcp.handlers import ClientHandlers
from hermes.security.redact import Redactor
from hermes.session.core import ReloadReport, Session, SessionSettings
from hermes.tools.naming import registered_name
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool
from hermes.validation import http_url_problem

RELOAD_BUDGET = 30.0


class NoModel(HermesError):
    exit_code = 2

    def __init__(self, path: Path) -> None:
        super().__init__(f"No model is configured: add this to {path} (or pass --model and --base-url):\n\n"
                         f"{MODEL_BLOCK}")


@dataclass(frozen=True)
class ChatOptions:
    model: str | None = None
    base_url: str | None = None
    yes: bool = False  # one-shot: run tools that ask for approval
    platform: str | None = None
    deferred: bool | None = None  # None: as model.deferred_tools says
    folder: Path = field(default_factory=Path.cwd)  # where project skills are looked for
    wait: float | None = None  # seconds the start waits for slow servers; None: each its connect timeout
    resume: Summary | None = None  # a saved chat to take up (`--resume`, `--continue`)
    # A gateway room's own folder: its file and terminal tools work there, no project's
    # `.hermes/config.yaml` applies, only its platform's servers start, and "always" lasts for
    # this conversation only (the chat's user is not the owner at this machine's keyboard).
    room_folder: Path | None = None


def model_settings(home: Home, options: ChatOptions) -> ModelSettings:
    """The configured model with the command line's overrides and its ${VAR}s filled in."""
    store = ConfigStore(home)
    config = store.load()
    configured = config.model
    if config.model_problem and not (options.model and options.base_url):
        raise ConfigError(config.model_problem, path=home.config, key="model")
    if configured is None and not (options.model and options.base_url):
        raise NoModel(home.config)
    settings = configured or ModelSettings(base_url=options.base_url or "", name=options.model or "")
    if options.model:
        settings = replace(settings, name=options.model)
    if options.base_url:
        problem = http_url_problem(options.base_url)
        if problem:
            raise HermesError(f"--base-url {problem}.")
        settings = replace(settings, base_url=options.base_url)
    resolved, _ = settings.resolved(store.variables(), home.config)
    return resolved


@dataclass
class Chat:
    agent: Agent
    session: Session
    skills: list[SkillEntry]
    home: Home
    folder: Path
    transcript: Transcript

    async def turn(self, text: str, *, stream: bool = False) -> Turn:
        """One turn of the agent; the conversation is saved however it ends."""
        try:
            return await self.agent.turn(text, stream=stream)
        finally:
            # Written off the event loop, and also when the turn was cancelled (Ctrl-C, /stop).
            messages = list(self.agent.conversation.messages)
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.transcript.save, messages)

    def new(self) -> None:
        """`/new`: a fresh conversation, saved to a transcript of its own."""
        self.agent.new_conversation()
        self.transcript = Transcript(self.home, folder=self.folder, model=self.agent.provider.settings.name)

    def resume(self, summary: Summary) -> int:
        """Take up a saved chat (its file checked first; nothing changes if it is broken); its messages."""
        return self.restore(summary, load(summary))

    def restore(self, summary: Summary, messages: list[dict[str, Any]]) -> int:
        """Take up a saved chat whose messages were read (and checked) already."""
        self.agent.conversation.restore(messages)
        self.transcript = Transcript.resumed(self.home, summary, self.agent.conversation.messages)
        return len(self.agent.conversation.messages)

    async def reload(self) -> tuple[ReloadReport | None, str | None]:
        """`/reload-mcp`: the session reloads within the budget; the model hears the difference next."""
        with anyio.move_on_after(RELOAD_BUDGET):
            report = await self.session.reload()
            return report, self.agent.note_changes()
        return None, None


def missing_servers(session: Session) -> list[MissingServer]:
    """Every server on this platform whose tools are missing now, with its state and what to do."""
    counts = session.tools.known_counts()
    found = []
    for why in session.unavailable():
        retry = why.payload()["retry"]
        found.append(MissingServer(why.server, why.state.value, why.sentence, str(retry), counts.get(why.server)))
    return found


@asynccontextmanager
async def open_chat(home: Home, options: ChatOptions, ui: ChatUI, *, redactor: Redactor | None = None
                    ) -> AsyncIterator[Chat]:
    """`redactor`: the caller's, when its user interface redacts what it shows as well (the dashboard)."""
    settings = await anyio.to_thread.run_sync(model_settings, home, options)
    deferred = settings.deferred_tools if options.deferred is None else options.deferred
    redactor = redactor or Redactor()
    provider = Provider(settings, redactor)
    # What the session's servers ask of their client goes to this chat's model and user.
    def judge(server: str, tool: types.Tool) -> tuple[SurfaceTool, Verdict]:
        """A sampling tool round's tool (the server's own) under the same permissions as its calls."""
        seen = SurfaceTool(registered_name(server, tool.name), server, "tool", tool.name, tool.description or "",
                           tool.input_schema, tool)
        return seen, session.tools.verdict(seen, cautious=False)

    broker = SamplingBroker(provider, ui.approve_sampling if ui.interactive else None, judge=judge,
                            approve_tool=ui.approve_tool)
    handlers = ClientHandlers(sampling=broker, elicitation=ui.elicit, sampling_with_tools=True)
    settings_of_session = SessionSettings(platform=options.platform, start_wait=options.wait,
                                          workdir=options.room_folder, platform_only=options.room_folder is not None,
                                          file_log=options.room_folder is None,
                                          project=None if options.room_folder else Path.cwd())
    session = Session(home, settings_of_session,
                      handlers=handlers, redactor=redactor)

    async def remember(name: str) -> str | None:
        """"Always" for a tool no rule asks for: kept in config.yaml, as `hermes tools allow` would."""
        from hermes.config.edit import set_permission

        def write() -> None:
            with ConfigStore(home).edit() as doc:
                set_permission(doc, name, "allow")

        try:
            await anyio.to_thread.run_sync(write)
        except (HermesError, OSError) as exc:
            return f"{name} is allowed for this chat; keeping it in config.yaml failed: {exc}"
        return f"{name} is allowed from now on (permissions.allow in {home.config})."
    from hermes.live.control import publish_control

    try:
        # The control endpoint: `hermes mcp reload`, `enable`, `disable` and `status` from another
        # terminal reach this chat as they reach `hermes mcp serve`.
        async with session, anyio.create_task_group() as tasks:
            await tasks.start(publish_control, session)
            trust = TrustStore(home, TrustKind.SKILLS)
            skills = await anyio.to_thread.run_sync(all_skills, session.plugins.plugins, session.host, options.folder,
                                                    trust)
            prompt = system_prompt(catalog=session.tools.catalog() if deferred else None, skills=skills,
                                   missing=missing_servers(session))
            agent = Agent(session, provider, ui, system_prompt=prompt, settings=settings, deferred=deferred,
                          yes=options.yes, remember=None if options.room_folder else remember)
            chat = Chat(agent, session, skills, home, options.folder,
                        Transcript(home, folder=options.folder, model=settings.name))
            if options.resume is not None:
                messages = await anyio.to_thread.run_sync(load, options.resume)
                chat.restore(options.resume, messages)
            try:
                yield chat
            finally:
                tasks.cancel_scope.cancel()
    finally:
        await provider.close()
