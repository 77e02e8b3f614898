"""The tool loop: the model gets the session's surface; its tool calls run; results go back; repeat.

- The model sees exactly the session's surface (filters, platform toolsets, names), or with
  deferred tools `tool_search` and `call_tool`, a list that never changes (prompt caches hold).
- The tool calls of one reply run concurrently. An unavailable tool answers with its structured
  payload (state, user_action, retry), so the model can tell the user what to do; arguments that
  are not a JSON object come back as an error result, never a crash, and never back to the server
  as they were (`conversation` keeps the history valid for strict chat templates).
- A reply cut off at `max_tokens` inside a tool call is asked again once with a larger budget;
  an answer cut off is returned marked as such (`Turn.cut_off`), never as if it were complete.
- Tools that can change things ask first (see `approval`); the answer goes back as the result.
- Everything sent to the model passes the session's redactor.
- The system prompt is fixed when the agent starts (see `prompt`); when the surface changes, a
  short notice goes in front of the next user message, and the new tools are simply there.
- `max_tool_rounds` bounds a turn; past it the turn stops with a sentence that says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from hermes.agent.approval import Decision, denied_text
from hermes.agent.context import ContextBudget
from hermes.agent.conversation import PLACEHOLDER_ARGUMENTS, Arguments, Conversation, parse_arguments, short_id
from hermes.agent.held_call_text import HeldCallText
from hermes.agent.provider import ModelError, ModelReply, Provider, ToolCallRequest, tool_definition
from hermes.agent.text_calls import text_calls
from hermes.agent.ui import ChatUI, RunStatus
from hermes.config.model_settings import ModelSettings
from hermes.session.core import Session
from hermes.tools.call_result import Outcome
from hermes.tools.deferred import SEARCH_TOOL, search_answer
from hermes.tools.permissions import Permission, Verdict
from hermes.tools.surface import SurfaceTool
from hermes.tools.views import view_hint
from hermes.validation import counted

SEARCH_DEFINITION = tool_definition(
    SEARCH_TOOL, "Find tools by service and action (for example 'github create issue'); it answers with each tool's "
                 "name and input schema. Then run one with call_tool.",
    {"type": "object", "properties": {"query": {"type": "string", "description": "service and action"}},
     "required": ["query"]})
CALL_TOOL = "call_tool"
CALL_DEFINITION = tool_definition(
    CALL_TOOL, "Run a tool that tool_search found, by its name, with arguments that follow its input schema.",
    {"type": "object", "properties": {"name": {"type": "string", "description": "the tool's name, as tool_search "
                                                                                "gave it"},
                                      "arguments": {"type": "object", "description": "the tool's arguments"}},
     "required": ["name"]})
# With deferred tools the model's tool list is these two, always: a list that grows with every
# discovery would change the start of every later prompt and empty the provider's prompt cache.
DEFERRED_DEFINITIONS = [SEARCH_DEFINITION, CALL_DEFINITION]
CANCELLED = "Cancelled: the user interrupted the turn before this tool finished."


class TurnStopped(Exception):
    """The turn ended without an answer (tool rounds exhausted); the message says why."""


# A cut-off tool call is asked again once with this much more room, up to this many tokens.
RETRY_FACTOR = 4
RETRY_CEILING = 32_768
MAX_TOOL_NAME = 256


@dataclass
class ToolRun:
    id: str
    name: str
    arguments: Any
    status: RunStatus
    result: str  # exactly what the model got
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "status": self.status,
                "result": self.result, "seconds": round(self.seconds, 3)}


@dataclass
class Turn:
    answer: str = ""
    tool_runs: list[ToolRun] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    rounds: int = 0
    finish_reason: str | None = None
    retried_cut_off: int = 0  # tool calls cut off at max_tokens, asked again with more room

    @property
    def cut_off(self) -> bool:
        """The answer stopped at the token limit: it is not the whole answer."""
        return self.finish_reason == "length"

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value

    @property
    def cached_share(self) -> float | None:
        """Of this turn's prompt tokens, the share the provider's cache served (when it says)."""
        prompt, cached = self.usage.get("prompt_tokens"), self.usage.get("cached_prompt_tokens")
        return cached / prompt if prompt and cached is not None else None


@dataclass(frozen=True)
class PlannedCall:
    """A tool call of the model's reply as hermes records and runs it."""

    id: str  # hermes's own, as the conversation carries it
    request: ToolCallRequest
    arguments: Arguments


def _server_states(session: Session) -> dict[str, str]:
    """Per server, one phrase a notice can compare: how many tools, or why none."""
    states = {server: f"available ({counted(len(tools), 'tool')})"
              for server, tools in session.surface().servers()}
    for missing in session.unavailable():
        states[missing.server] = f"unavailable: {missing.sentence}"
    return states


def change_notice(before: dict[str, str], after: dict[str, str]) -> str | None:
    lines = []
    for server in sorted(before.keys() | after.keys()):
        old, new = before.get(server), after.get(server)
        if old == new:
            continue
        if new is None:
            lines.append(f"- MCP server '{server}' was removed; its tools are gone.")
        elif old is None:
            lines.append(f"- MCP server '{server}' was added: {new}.")
        else:
            lines.append(f"- MCP server '{server}' is now {new}.")
    if not lines:
        return None
    return "[hermes] The available tools changed since the last message:\n" + "\n".join(lines)


class Agent:
    def __init__(self, session: Session, provider: Provider, ui: ChatUI, *, system_prompt: str,
                 settings: ModelSettings, deferred: bool = False, yes: bool = False,
                 remember: Callable[[str], Awaitable[str | None]] | None = None) -> None:
        """`remember`: keep a tool allowed for good ("always"); says where it was written, or None."""
        self.session = session
        self.provider = provider
        self.ui = ui
        self.settings = settings
        self.budget = ContextBudget(settings.context_window, settings.max_tokens or 4096)
        self.deferred = deferred
        self.yes = yes
        self.remember = remember
        # Redacted once, when the session starts, and then sent byte for byte on every request.
        self.system = {"role": "system", "content": session.redactor(system_prompt)}
        self.conversation = Conversation(session.redactor)
        self._always: set[str] = set()
        self.last_turn: Turn | None = None  # for /status: its tokens and what the prompt cache served
        # What the system prompt describes; a fresh conversation hears what changed since then.
        self._initial_states = self._states = _server_states(session)

    # -- the conversation ------------------------------------------------------------------------

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.conversation.messages

    def new_conversation(self) -> None:
        self.conversation.clear()
        self._states = self._initial_states

    def note_changes(self) -> str | None:
        """If the surface changed since the model last heard, a notice for the next user message (returned)."""
        now = _server_states(self.session)
        notice = change_notice(self._states, now)
        self._states = now
        if notice is not None:
            self.conversation.notice(notice)
        return notice

    def messages(self) -> list[dict[str, Any]]:
        """What the next request sends: the fixed system prompt, then the (redacted) conversation."""
        return [self.system, *self.conversation.messages]

    def _offered(self) -> list[str]:
        """The names of the tools the last request offered (what a call written as text may name)."""
        return [SEARCH_TOOL, CALL_TOOL] if self.deferred else list(self.session.surface().tools)

    def tool_definitions(self) -> list[dict[str, Any]]:
        if self.deferred:
            return DEFERRED_DEFINITIONS
        return [tool_definition(t.name, t.description, t.input_schema) for t in self.session.surface().tools.values()]

    # -- one turn --------------------------------------------------------------------------------

    async def turn(self, text: str, *, stream: bool = False) -> Turn:
        """Run one user turn to its answer; raises `ModelError` or `TurnStopped` (saying why).

        However the turn ends (an answer, an error, the user's Ctrl-C), the conversation is left
        valid for the next one: see `conversation`."""
        self.note_changes()
        mark = self.conversation.mark()
        self.conversation.user(text)
        turn = self.last_turn = Turn()
        try:
            return await self._rounds(turn, stream)
        except ModelError as exc:
            # A request refused before the model said anything (too long for its context, say)
            # would be refused again on every later turn if its message stayed: it is forgotten.
            if self.conversation.rewind(mark):
                exc.message_kept = False
            else:
                self.conversation.close("(No answer: the request to the model failed.)")
            raise
        except TurnStopped:
            self.conversation.close("(No answer: the turn reached its limit of tool rounds.)")
            raise
        except BaseException:  # cancelled (Ctrl-C), or anything else: the next turn must still be valid
            self.conversation.close("(No answer: the user interrupted this turn.)")
            raise

    async def _rounds(self, turn: Turn, stream: bool) -> Turn:
        while True:
            reply = await self._ask(turn, stream)
            calls = self._record(reply)
            if not calls:
                turn.answer, turn.finish_reason = reply.content, reply.finish_reason
                return turn
            if turn.rounds >= self.settings.max_tool_rounds:
                raise TurnStopped(f"The model still wanted tools after {turn.rounds} rounds; the turn stopped there "
                                  f"(model.max_tool_rounds is {self.settings.max_tool_rounds}).")
            turn.rounds += 1
            turn.tool_runs += await self._run_calls(calls)
            self.note_changes()

    async def _complete(self, tools: list[dict[str, Any]], stream: bool, *,
                        max_tokens: int | None = None) -> ModelReply:
        """One request, with the calls a model wrote as text recognised (and not shown as its answer)."""
        offered = self._offered()
        shown = HeldCallText(self.ui.text, offered) if stream else None
        self.ui.waiting(self.provider.settings.name)
        try:
            reply = await self.provider.complete(self.messages(), tools or None, max_tokens=max_tokens,
                                                 on_text=shown.feed if shown is not None else None)
        finally:
            self.ui.waiting(None)
        called = text_calls(reply, offered)
        if shown is not None:
            await shown.end(recognised=called is not reply)
        return called

    async def _ask(self, turn: Turn, stream: bool) -> ModelReply:
        """One request; a reply cut off inside a tool call is asked again, once, with more room."""
        tools = self.tool_definitions()
        self.budget.fit(self.system, self.conversation.messages, tools)
        reply = await self._complete(tools, stream)
        turn.add_usage(reply.usage)
        self.budget.learn(reply.usage)
        limit = self.settings.max_tokens
        if reply.finish_reason == "length" and reply.tool_calls and limit:
            turn.retried_cut_off += 1
            room = min(limit * RETRY_FACTOR, RETRY_CEILING)
            if self.settings.context_window:
                room = min(room, max(limit, self.settings.context_window // 2))
            if room > limit:
                reply = await self._complete(tools, stream, max_tokens=room)
                turn.add_usage(reply.usage)
        return reply

    def _record(self, reply: ModelReply) -> list[PlannedCall]:
        """Put the reply into the conversation with only valid tool calls; the calls to run."""
        cut = reply.finish_reason == "length"
        planned = []
        for index, call in enumerate(reply.tool_calls):
            name = call.name[:MAX_TOOL_NAME]
            arguments = parse_arguments(name, call.arguments, cut_off=cut)
            planned.append(PlannedCall(short_id(call.id, index), ToolCallRequest(call.id, name, call.arguments),
                                       arguments))
        self.conversation.assistant(reply.content, [
            (p.id, p.request.name, p.request.arguments if p.arguments.value is not None else PLACEHOLDER_ARGUMENTS)
            for p in planned])
        return planned

    async def _run_calls(self, calls: list[PlannedCall]) -> list[ToolRun]:
        runs: dict[int, ToolRun] = {}
        try:
            async with anyio.create_task_group() as group:
                for index, call in enumerate(calls):
                    async def run(index: int = index, call: PlannedCall = call) -> None:
                        runs[index] = await self._run_one(call)

                    group.start_soon(run)
        finally:
            # Every call gets its answer in the conversation, even when the turn was interrupted:
            # a request with an unanswered tool call is refused by the model's API.
            for index, call in enumerate(calls):
                if index not in runs:
                    runs[index] = ToolRun(call.request.id, call.request.name, call.request.arguments,
                                          RunStatus.CANCELLED, CANCELLED)
                self.conversation.tool(call.id, runs[index].result)
        return [runs[index] for index in range(len(calls))]

    async def _run_one(self, planned: PlannedCall) -> ToolRun:
        started = time.monotonic()
        call, arguments = planned.request, planned.arguments.value
        if arguments is None:
            text = json.dumps({"error": planned.arguments.problem, "note": "hermes recorded this call with {} "
                                                                           "as its arguments"})
            return await self._finish(call, call.arguments, RunStatus.INVALID, text, started)
        if self.deferred and call.name == SEARCH_TOOL:
            found = await self._search(str(arguments.get("query", "")))
            return await self._finish(call, arguments, RunStatus.OK, found, started)
        if self.deferred and call.name == CALL_TOOL:
            inner = arguments.get("arguments", {})
            if not isinstance(arguments.get("name"), str) or not isinstance(inner, dict):
                text = json.dumps({"error": "call_tool needs a tool name (text) and arguments (a JSON object)."})
                return await self._finish(call, arguments, RunStatus.INVALID, text, started)
            call, arguments = ToolCallRequest(call.id, arguments["name"][:MAX_TOOL_NAME], json.dumps(inner)), inner
        tool = self.session.surface().tools.get(call.name)
        refusal = await self._approval(tool, arguments) if tool is not None else None
        if refusal is not None:
            return await self._finish(call, arguments, RunStatus.DENIED, json.dumps({"error": refusal}), started)
        started = time.monotonic()  # the time the user took to answer is not the tool's

        async def asked(asked_for: SurfaceTool, _: dict[str, Any], found: Verdict) -> str | None:
            # The question was put (and answered yes) above; anything else asking now was not.
            return None if tool is not None and asked_for.name == tool.name else \
                denied_text(asked_for, found, one_shot=not self.ui.interactive)

        await self.ui.tool_started(call.id, call.name, self.session.redactor.value(arguments))
        result = await self.session.call(call.name, arguments, on_progress=self.ui.progress(call.id, call.name),
                                         asker=asked, cautious=True)
        # A missing server's summary is its sentence and what to do (the model gets the whole payload).
        summary = result.text if result.outcome is Outcome.UNAVAILABLE else None
        finished = await self._finish(call, arguments, _STATUS[result.outcome], result.for_model(), started, summary)
        hint = view_hint(tool.server, tool.definition) if tool is not None and not result.is_error else None
        if hint is not None:
            await self.ui.notice(hint)
        return finished

    async def _approval(self, tool: SurfaceTool, arguments: dict[str, Any]) -> str | None:
        """Ask for a tool that asks (None: go ahead; a text: why it did not run, for the model)."""
        found = self.session.tools.verdict(tool, cautious=True)
        if found.permission is not Permission.ASK or tool.name in self._always:
            return None
        if not self.ui.interactive:
            return None if self.yes else denied_text(tool, found, one_shot=True)
        decision = await self.ui.approve_tool(tool, arguments, found)
        if decision is Decision.DENY:
            return denied_text(tool, found, one_shot=False)
        if decision is Decision.ALWAYS:
            self._always.add(tool.name)
            if not found.ruled and self.remember is not None:
                where = await self.remember(tool.name)
                if where is not None:
                    await self.ui.notice(where)
        return None

    async def _finish(self, call: ToolCallRequest, arguments: Any, status: RunStatus, text: str,
                      started: float, summary: str | None = None) -> ToolRun:
        """`text` is what the model gets: a call result (redacted where it was built) or hermes's own words;
        `summary`, the line the user reads (by default the first of `text`)."""
        seconds = time.monotonic() - started
        if summary is None:
            summary = text.splitlines()[0][:160] if text else ""
        await self.ui.tool_finished(call.id, call.name, status, seconds, summary)
        return ToolRun(call.id, call.name, self.session.redactor.value(arguments), status, text, seconds)

    async def _search(self, query: str) -> str:
        tools, text = await self.session.tools.search(query)
        answer = search_answer(tools, text)
        if answer is None:
            return text
        # Strong matches as the bare list models have always had; weak ones with the note that says so.
        return json.dumps(answer if "note" in answer else answer["tools"], ensure_ascii=False)


_STATUS = {Outcome.OK: RunStatus.OK, Outcome.ERROR: RunStatus.ERROR, Outcome.UNAVAILABLE: RunStatus.UNAVAILABLE,
           Outcome.DECLINED: RunStatus.DENIED}
