"""The tool loop: the model gets the session's surface; its tool calls run; results go back; repeat.

- The model sees exactly the session's surface (filters, platform toolsets, names), or with
  deferred tools a `tool_search` tool plus whatever it has found so far.
- The tool calls of one reply run concurrently. An unavailable tool answers with its structured
  payload (state, user_action, retry), so the model can tell the user what to do; arguments that
  are not a JSON object come back as an error result, never a crash.
- Tools that can change things ask first (see `approval`); the answer goes back as the result.
- Everything sent to the model passes the session's redactor.
- The system prompt is fixed when the agent starts (see `prompt`); when the surface changes between
  two requests, a short user-role notice says what changed, and the new tools are simply there.
- `max_tool_rounds` bounds a turn; past it the turn stops with a sentence that says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from hermes.agent.approval import Decision, denied_text, needs_approval
from hermes.agent.context import ContextBudget
from hermes.agent.provider import ModelReply, Provider, ToolCallRequest, arguments_of, tool_definition
from hermes.agent.ui import ChatUI, RunStatus
from hermes.config.agent_settings import Approval, ModelSettings
from hermes.session.core import Session
from hermes.tools.call_result import Outcome
from hermes.tools.deferred import SEARCH_TOOL, found_tools
from hermes.tools.surface import SurfaceTool

SEARCH_DEFINITION = tool_definition(
    SEARCH_TOOL, "Find tools by service and action (for example 'github create issue'); the tools found can be "
                 "called right after, by name.",
    {"type": "object", "properties": {"query": {"type": "string", "description": "service and action"}},
     "required": ["query"]})
CANCELLED = "Cancelled: the user interrupted the turn before this tool finished."


class TurnStopped(Exception):
    """The turn ended without an answer (tool rounds exhausted); the message says why."""


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

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value


def _server_states(session: Session) -> dict[str, str]:
    """Per server, one phrase a notice can compare: how many tools, or why none."""
    states = {server: f"available ({len(tools)} tool{'' if len(tools) == 1 else 's'})"
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
                 approval_for: Callable[[str], Approval] | None = None) -> None:
        self.session = session
        self.provider = provider
        self.ui = ui
        self.settings = settings
        self.budget = ContextBudget(settings.context_window, settings.max_tokens or 4096)
        self.deferred = deferred
        self.yes = yes
        self.approval_for = approval_for or (lambda server: Approval())
        # Redacted once, when the session starts, and then sent byte for byte on every request.
        self.system = {"role": "system", "content": session.redactor(system_prompt)}
        self.history: list[dict[str, Any]] = []
        self._discovered: set[str] = set()
        self._always: set[str] = set()
        # What the system prompt describes; a fresh conversation hears what changed since then.
        self._initial_states = self._states = _server_states(session)

    # -- the conversation ------------------------------------------------------------------------

    def new_conversation(self) -> None:
        self.history = []
        self._discovered = set()
        self._states = self._initial_states

    def note_changes(self) -> str | None:
        """If the surface changed since the model last heard, say so in the conversation (and return it)."""
        now = _server_states(self.session)
        notice = change_notice(self._states, now)
        self._states = now
        if notice is not None:
            self._append({"role": "user", "content": notice})
        return notice

    def _append(self, message: dict[str, Any]) -> None:
        """Into the conversation, redacted: redacted once, the history is a stable prefix for the cache."""
        self.history.append(self.session.redactor.value(message))

    def messages(self) -> list[dict[str, Any]]:
        """What the next request sends: the fixed system prompt, then the (redacted) conversation."""
        return [self.system, *self.history]

    def tool_definitions(self) -> list[dict[str, Any]]:
        tools = self.session.surface().tools
        if not self.deferred:
            return [tool_definition(t.name, t.description, t.input_schema) for t in tools.values()]
        found = [tools[name] for name in sorted(self._discovered) if name in tools]
        return [SEARCH_DEFINITION, *(tool_definition(t.name, t.description, t.input_schema) for t in found)]

    # -- one turn --------------------------------------------------------------------------------

    async def turn(self, text: str, *, stream: bool = False) -> Turn:
        """Run one user turn to its answer; raises `ModelError` or `TurnStopped` (saying why)."""
        self.note_changes()
        self._append({"role": "user", "content": text})
        turn = Turn()
        while True:
            tools = self.tool_definitions()
            self.budget.fit(self.system, self.history, tools)
            reply = await self.provider.complete(self.messages(), tools or None,
                                                 on_text=self.ui.text if stream else None)
            turn.add_usage(reply.usage)
            self.budget.learn(reply.usage)
            self._append(reply.message())
            if not reply.tool_calls:
                turn.answer = reply.content
                return turn
            if turn.rounds >= self.settings.max_tool_rounds:
                self._answer_unrun(reply, "Not run: the turn reached its limit of tool rounds.")
                raise TurnStopped(f"The model still wanted tools after {turn.rounds} rounds; the turn stopped there "
                                  f"(model.max_tool_rounds is {self.settings.max_tool_rounds}).")
            turn.rounds += 1
            turn.tool_runs += await self._run_calls(reply.tool_calls)
            self.note_changes()

    def _answer_unrun(self, reply: ModelReply, text: str) -> None:
        for call in reply.tool_calls:
            self._append({"role": "tool", "tool_call_id": call.id, "content": text})

    async def _run_calls(self, calls: tuple[ToolCallRequest, ...]) -> list[ToolRun]:
        runs: dict[int, ToolRun] = {}
        try:
            async with anyio.create_task_group() as group:
                for index, call in enumerate(calls):
                    async def run(index: int = index, call: ToolCallRequest = call) -> None:
                        runs[index] = await self._run_one(call)

                    group.start_soon(run)
        finally:
            # Every call gets its answer in the conversation, even when the turn was interrupted:
            # a request with an unanswered tool call is refused by the model's API.
            for index, call in enumerate(calls):
                if index not in runs:
                    runs[index] = ToolRun(call.id, call.name, call.arguments, RunStatus.CANCELLED, CANCELLED)
                # The result was redacted where it was built; a second pass would scan up to 2 MB again.
                self.history.append({"role": "tool", "tool_call_id": self.session.redactor(call.id),
                                     "content": runs[index].result})
        return [runs[index] for index in range(len(calls))]

    async def _run_one(self, call: ToolCallRequest) -> ToolRun:
        started = time.monotonic()
        arguments, problem = arguments_of(call)
        if arguments is None:
            return await self._finish(call, call.arguments, RunStatus.INVALID, json.dumps({"error": problem}), started)
        if self.deferred and call.name == SEARCH_TOOL:
            return await self._finish(call, arguments, RunStatus.OK, self._search(str(arguments.get("query", ""))),
                                      started)
        tool = self.session.surface().tools.get(call.name)
        if tool is not None and not await self._approved(tool, arguments):
            text = denied_text(tool, one_shot=not self.ui.interactive)
            return await self._finish(call, arguments, RunStatus.DENIED, json.dumps({"error": text}), started)
        await self.ui.tool_started(call.id, call.name, self.session.redactor.value(arguments))
        result = await self.session.call(call.name, arguments, on_progress=self.ui.progress(call.id, call.name))
        return await self._finish(call, arguments, _STATUS[result.outcome], result.for_model(), started)

    async def _approved(self, tool: SurfaceTool, arguments: dict[str, Any]) -> bool:
        if tool.name in self._always or not needs_approval(tool, self.approval_for(tool.server)):
            return True
        if not self.ui.interactive:
            return self.yes
        decision = await self.ui.approve_tool(tool, arguments)
        if decision is Decision.ALWAYS:
            self._always.add(tool.name)
        return decision is not Decision.DENY

    async def _finish(self, call: ToolCallRequest, arguments: Any, status: RunStatus, text: str,
                      started: float) -> ToolRun:
        """`text` is what the model gets: a call result (redacted where it was built) or hermes's own words."""
        seconds = time.monotonic() - started
        summary = text.splitlines()[0][:160] if text else ""
        await self.ui.tool_finished(call.id, call.name, status, seconds, summary)
        return ToolRun(call.id, call.name, self.session.redactor.value(arguments), status, text, seconds)

    def _search(self, query: str) -> str:
        tools, text = self.session.tools.search(query)
        if not tools:
            return text
        self._discovered.update(t.name for t in tools)
        return json.dumps(found_tools(tools), ensure_ascii=False)


_STATUS = {Outcome.OK: RunStatus.OK, Outcome.ERROR: RunStatus.ERROR, Outcome.UNAVAILABLE: RunStatus.UNAVAILABLE}
