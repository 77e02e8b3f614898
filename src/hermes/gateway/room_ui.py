"""The chat's user in a messaging room: what the tool loop shows and asks, as messages.

`RoomUI` is the agent's `ChatUI` for one room. A tool that asks, a server that wants the model,
a server's form: each becomes a message with its choices (buttons where the platform has them),
and the loop waits for the reply of the person whose message started the turn. A form is asked
one field at a time and each answer is checked against the server's schema before the next.
Nobody answering within `answer_seconds` means no (the tool does not run, the form is cancelled).
A tool whose server or app is missing is told to the room in its own words ("Blender is not
running. Start Blender, then try again.") besides reaching the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types

from hermes.agent.approval import Decision
from hermes.agent.forms import form_content, form_fields
from hermes.agent.ui import RunStatus
from hermes.errors import UsageError
from hermes.gateway.platform import Platform, parts
from hermes.mcp.tasks import Progress
from hermes.security.redact import Redactor
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool

DECISIONS = tuple(decision.value for decision in Decision)
MAX_SHOWN_ARGUMENTS = 1_500  # characters of a tool's arguments shown in its approval
KEEP = "-"  # a form field's reply that keeps its default
FORM_STOPS = ("decline", "cancel")


class NoAnswer(Exception):
    """Nobody answered in time, or the turn was stopped while asking."""


@dataclass
class _Question:
    choices: tuple[str, ...]  # empty: any text answers
    keep: bool = False  # `KEEP` answers too (a field with a default, or one that may stay empty)
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: str = ""


class RoomUI:
    interactive = True

    def __init__(self, platform: Platform, room: str, redactor: Redactor, *, answer_seconds: float) -> None:
        self.platform = platform
        self.room = room
        self.asker: str | None = None  # whose message started the turn: only they answer its questions
        self._redactor = redactor
        self._answer_seconds = answer_seconds
        self._asking = anyio.Lock()  # one question at a time, as in a terminal
        self._question: _Question | None = None

    async def say(self, text: str, choices: Sequence[str] = ()) -> None:
        """A message to the room (redacted, cut to the platform's length)."""
        pieces = parts(self._redactor(text), self.platform.max_text) or ["(empty)"]
        for index, piece in enumerate(pieces):
            await self.platform.send(self.room, piece, choices if index == len(pieces) - 1 else ())

    # -- what the loop says ----------------------------------------------------------------------

    async def text(self, delta: str) -> None:
        """Not streamed: a room gets the whole answer when the turn ends."""

    def waiting(self, model: str | None) -> None:
        """A room shows no timer."""

    async def tool_started(self, call_id: str, name: str, arguments: dict[str, Any] | None) -> None:
        """Quiet: the answer says what was done."""

    async def tool_finished(self, call_id: str, name: str, status: RunStatus, seconds: float, summary: str) -> None:
        if status is RunStatus.UNAVAILABLE:
            await self.say(f"⚠ {name}: {summary}")

    def progress(self, call_id: str, name: str) -> Progress | None:
        return None

    async def notice(self, text: str) -> None:
        await self.say(text)

    # -- what it asks ----------------------------------------------------------------------------

    async def approve_tool(self, tool: SurfaceTool, arguments: dict[str, Any], verdict: Verdict) -> Decision:
        shown = json.dumps(self._redactor.value(arguments), ensure_ascii=False)
        if len(shown) > MAX_SHOWN_ARGUMENTS:
            shown = shown[:MAX_SHOWN_ARGUMENTS] + "…"
        text = f"Run {tool.name}? It asks first: {verdict.because}.\nArguments: {shown}"
        return await self._decision(text)

    async def approve_sampling(self, server: str, params: types.CreateMessageRequestParams) -> Decision:
        return await self._decision(f"MCP server '{server}' asks to use the model (up to {params.max_tokens} "
                                    f"tokens). Allow it?")

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        try:
            async with self._asking:
                if not isinstance(params, types.ElicitRequestFormParams):
                    # A page the server wants opened: the link is shown; the person opens it or not.
                    reply = await self._ask(f"MCP server '{server}' asks you to open a page: {params.message}\n"
                                            f"{params.url}\nReply done when you have finished there.",
                                            ("done", "decline"))
                    return types.ElicitResult(action="accept" if reply == "done" else "decline")
                schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
                await self.say(f"MCP server '{server}' asks: {params.message}")
                content: dict[str, Any] = {}
                for spec in form_fields(schema):
                    value = await self._field(spec)
                    if value in FORM_STOPS:
                        return types.ElicitResult(action="decline" if value == "decline" else "cancel")
                    content.update(value)
                return types.ElicitResult(action="accept", content=content)
        except NoAnswer:
            return types.ElicitResult(action="cancel")

    async def _field(self, spec: dict[str, Any]) -> Any:
        """One field's value ({name: value}, or {} when skipped), or a reply in `FORM_STOPS`."""
        options = [str(value) for value, _ in spec["options"]]
        choices = tuple(options) if options else ("yes", "no") if spec["type"] == "boolean" else ()
        lines = [f"{spec['label']}" + (f": {spec['description']}" if spec["description"] else "")]
        if spec["default"] is not None:
            lines.append(f"Reply {KEEP} to keep {spec['default']}.")
        elif not spec["required"]:
            lines.append(f"Reply {KEEP} to leave it empty.")
        lines.append("Reply decline or cancel to stop.")
        keep = spec["default"] is not None or not spec["required"]
        while True:
            reply = await self._ask("\n".join(lines), (*choices, *FORM_STOPS), free=not choices, keep=keep)
            if reply.lower() in FORM_STOPS:
                return reply.lower()
            raw: Any = spec["default"] if reply == KEEP else reply
            if spec["type"] == "boolean" and reply != KEEP:
                raw = reply.lower() == "yes"
            try:
                return form_content([spec], {spec["name"]: raw})
            except UsageError as exc:
                await self.say(str(exc))

    async def _decision(self, text: str) -> Decision:
        try:
            async with self._asking:
                return Decision(await self._ask(text, DECISIONS))
        except NoAnswer:
            await self.say("No answer in time: not allowed.")
            return Decision.DENY

    async def _ask(self, text: str, choices: tuple[str, ...], *, free: bool = False, keep: bool = False) -> str:
        question = _Question(() if free else choices, keep)
        hint = ""  # a free answer's stops are in its text; a choice's are listed (and numbered) here
        if not free and len(choices) > 1:
            numbers = ", ".join(str(n) for n in range(1, len(choices) + 1))
            hint = f"Reply {', '.join(choices[:-1])} or {choices[-1]} (or {numbers})"
        self._question = question
        try:
            await self.say(f"{text}\n{hint}." if hint else text, choices)
            with anyio.move_on_after(self._answer_seconds):
                await question.answered.wait()
                return question.answer
            raise NoAnswer
        finally:
            self._question = None

    # -- the room's replies ----------------------------------------------------------------------

    @property
    def asking(self) -> bool:
        return self._question is not None

    async def reply(self, sender: str, text: str) -> bool:
        """A message while a question waits: True when it was taken as the answer (or as a try at one)."""
        question = self._question
        if question is None or (self.asker is not None and sender != self.asker):
            return False
        answer = text.strip()
        if question.choices and not (question.keep and answer == KEEP):
            picked = _pick(answer, question.choices)
            if picked is None:
                await self.say(f"Please reply {', '.join(question.choices)}.")
                return True
            answer = picked
        question.answer = answer
        question.answered.set()
        self._question = None  # taken: a second quick reply is a message of its own, not a new answer
        return True


def _pick(answer: str, choices: tuple[str, ...]) -> str | None:
    """The choice a reply means: its word (any case), its number, or a start only one choice has."""
    said = answer.strip().lower()
    if said.isdigit() and 1 <= int(said) <= len(choices):
        return choices[int(said) - 1]
    exact = [choice for choice in choices if choice.lower() == said]
    if exact:
        return exact[0]
    starting = [choice for choice in choices if said and choice.lower().startswith(said)]
    return starting[0] if len(starting) == 1 else None
