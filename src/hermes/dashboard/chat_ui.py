"""The chat's user in a browser: what the tool loop shows and asks, as events a page follows.

`WebChatUI` is the agent's `ChatUI` for the dashboard's chat page. What the loop says (streamed
text, tool activity, notices) becomes an event in `ChatEvents`; what it asks (approve a tool,
let a server use the model, fill a server's form) becomes a `Question` the page shows as buttons
or a form, and the loop waits until the page answers it. Events are plain data: the page puts
them on the screen as text, never as markup.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types

from hermes.agent.approval import Decision
from hermes.agent.forms import form_content, form_fields
from hermes.agent.ui import RunStatus
from hermes.dashboard.streams import Pulse
from hermes.errors import UsageError
from hermes.mcp.tasks import Progress
from hermes.security.redact import Redactor
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool

MAX_EVENTS = 5_000  # kept for pages that join late; the oldest go first
CHOICES = tuple(decision.value for decision in Decision)


class ChatEvents:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.seq = 0
        self.pulse = Pulse()

    def publish(self, type: str, **data: Any) -> None:
        self.seq += 1
        self.events.append({"seq": self.seq, "type": type, **data})
        del self.events[:-MAX_EVENTS]
        self.pulse.fire()

    async def after(self, seq: int) -> list[dict[str, Any]] | None:
        """The events newer than `seq`, once there is at least one; None once the dashboard is stopping."""
        if not await self.pulse.until(lambda: self.seq > seq):
            return None
        return [event for event in self.events if event["seq"] > seq]


@dataclass
class Question:
    id: str
    kind: str  # tool, sampling, form, link
    fields: list[dict[str, Any]] = field(default_factory=list)
    shown: dict[str, Any] = field(default_factory=dict)  # the event that put it on the page
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: dict[str, Any] = field(default_factory=dict)


class WebChatUI:
    interactive = True

    def __init__(self, redactor: Redactor) -> None:
        self.events = ChatEvents()
        self.questions: dict[str, Question] = {}
        self._redactor = redactor
        self._asking = anyio.Lock()  # one question on the page at a time, as in a terminal

    # -- what the loop says ----------------------------------------------------------------------

    async def text(self, delta: str) -> None:
        self.events.publish("text", text=delta)

    def waiting(self, model: str | None) -> None:
        self.events.publish("waiting", model=model)

    async def tool_started(self, call_id: str, name: str, arguments: dict[str, Any] | None) -> None:
        self.events.publish("tool", id=call_id, name=name, arguments=arguments or {})

    async def tool_finished(self, call_id: str, name: str, status: RunStatus, seconds: float, summary: str) -> None:
        self.events.publish("tool_done", id=call_id, name=name, status=status.value, seconds=round(seconds, 2),
                            summary=summary)

    def progress(self, call_id: str, name: str) -> Progress | None:
        async def show(progress: float, total: float | None, message: str | None) -> None:
            self.events.publish("progress", id=call_id, progress=progress, total=total, message=message or "")

        return show

    async def notice(self, text: str) -> None:
        self.events.publish("notice", text=text)

    # -- what it asks ----------------------------------------------------------------------------

    async def approve_tool(self, tool: SurfaceTool, arguments: dict[str, Any], verdict: Verdict) -> Decision:
        text = f"Run {tool.name}? It asks first: {verdict.because}."
        answer = await self._ask("tool", text, arguments=self._redactor.value(arguments), choices=list(CHOICES))
        return Decision(answer.get("choice", Decision.DENY.value))

    async def approve_sampling(self, server: str, params: types.CreateMessageRequestParams) -> Decision:
        text = f"MCP server '{server}' asks to use the model (up to {params.max_tokens} tokens). Allow it?"
        answer = await self._ask("sampling", text, choices=list(CHOICES))
        return Decision(answer.get("choice", Decision.DENY.value))

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        if not isinstance(params, types.ElicitRequestFormParams):
            # A page the server wants opened: shown, never opened for the user.
            answer = await self._ask("link", f"MCP server '{server}' asks you to open a page: {params.message}",
                                     url=params.url, choices=["accept", "decline"])
            return types.ElicitResult(action="accept" if answer.get("choice") == "accept" else "decline")
        schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
        answer = await self._ask("form", f"MCP server '{server}' asks: {params.message}", fields=form_fields(schema),
                                 choices=["accept", "decline", "cancel"])
        action = answer.get("choice", "cancel")
        if action != "accept":
            return types.ElicitResult(action="decline" if action == "decline" else "cancel")
        return types.ElicitResult(action="accept", content=answer.get("content", {}))

    async def _ask(self, kind: str, text: str, *, fields: list[dict[str, Any]] | None = None,
                   **shown: Any) -> dict[str, Any]:
        async with self._asking:
            question = Question(secrets.token_urlsafe(9), kind, fields or [])
            question.shown = {"type": "question", "id": question.id, "kind": kind, "text": self._redactor(text),
                              "fields": question.fields, **shown}
            self.questions[question.id] = question
            self.events.publish(**question.shown)
            try:
                await question.answered.wait()
            finally:
                self.questions.pop(question.id, None)
                self.events.publish("answered", id=question.id)
            return question.answer

    def pending(self) -> dict[str, Any]:
        """What a page that opens now must show: the questions waiting, and where its stream starts."""
        return {"seq": self.events.seq, "pending": [q.shown for q in self.questions.values()]}

    def answer(self, question_id: str, choice: str, values: dict[str, Any]) -> None:
        """The page's answer; a form's values are checked against its fields first."""
        question = self.questions.get(question_id)
        if question is None:
            raise UsageError("That question was already answered, or has gone.")
        allowed = ("accept", "decline", "cancel") if question.kind in ("form", "link") else CHOICES
        if choice not in allowed:
            raise UsageError(f"The answer is one of {', '.join(allowed)}.")
        question.answer = {"choice": choice}
        if question.kind == "form" and choice == "accept":
            question.answer["content"] = form_content(question.fields, values)
        question.answered.set()
