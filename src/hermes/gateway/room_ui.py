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
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types

from hermes.agent.approval import Decision
from hermes.agent.forms import form_content, form_fields
from hermes.agent.ui import RunStatus
from hermes.errors import UsageError
from hermes.gateway.platform import Button, Platform, SendFailed, parts
from hermes.mcp.tasks import Progress
from hermes.security.redact import Redactor
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool

MAX_SHOWN_ARGUMENTS = 1_500  # characters of a tool's arguments shown in its approval
MAX_BUTTONS = 10  # more choices than this are listed by number instead (platforms cap their buttons)
KEEP = "-"  # a form field's reply that keeps its default
FORM_STOPS = ("decline", "cancel")


@dataclass(frozen=True)
class Choice:
    value: str  # what the answer is
    label: str  # what the person reads (a form's option title, or the value itself)


def plain(*values: str) -> tuple[Choice, ...]:
    return tuple(Choice(value, value) for value in values)


DECISIONS = plain(*(decision.value for decision in Decision))


class NoAnswer(Exception):
    """Nobody answered in time, or the platform could not show the question."""


@dataclass
class _Question:
    choices: tuple[Choice, ...]
    free: bool = False  # any text answers (the choices are only its ways to stop)
    keep: bool = False  # `KEEP` answers too (a field with a default, or one that may stay empty)
    id: str = field(default_factory=lambda: secrets.token_hex(4))
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: str = ""


LOG = logging.getLogger("hermes.gateway")


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

    async def say(self, text: str, buttons: Sequence[Button] = (), *, shown_as_is: str = "") -> None:
        """A message to the room: redacted (all but `shown_as_is`, a link the person must open whole),
        cut to the platform's length, the buttons on its last part. Raises `SendFailed`."""
        pieces = parts(self._redactor(text) + shown_as_is, self.platform.max_text) or ["(empty)"]
        for index, piece in enumerate(pieces):
            await self.platform.send(self.room, piece, buttons if index == len(pieces) - 1 else ())

    async def tell(self, text: str) -> None:
        """A message that may fail without stopping anything (the failure is logged)."""
        try:
            await self.say(text)
        except Exception as exc:  # SendFailed, or a platform's own bug: the conversation goes on regardless
            LOG.warning("%s: a message to %s was not sent: %s", self.platform.name, self.room, exc)

    # -- what the loop says ----------------------------------------------------------------------

    async def text(self, delta: str) -> None:
        """Not streamed: a room gets the whole answer when the turn ends."""

    def waiting(self, model: str | None) -> None:
        """A room shows no timer."""

    async def tool_started(self, call_id: str, name: str, arguments: dict[str, Any] | None) -> None:
        """Quiet: the answer says what was done."""

    async def tool_finished(self, call_id: str, name: str, status: RunStatus, seconds: float, summary: str) -> None:
        if status is RunStatus.UNAVAILABLE:
            await self.tell(f"⚠ {name}: {summary}")

    def progress(self, call_id: str, name: str) -> Progress | None:
        return None

    async def notice(self, text: str) -> None:
        await self.tell(text)

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
                                            f"Reply done when you have finished there.\n",
                                            _Question(plain("done", "decline")), link=params.url)
                    return types.ElicitResult(action="accept" if reply == "done" else "decline")
                schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
                await self.tell(f"MCP server '{server}' asks: {params.message}")
                content: dict[str, Any] = {}
                for spec in form_fields(schema):
                    value = await self._field(spec)
                    if value in FORM_STOPS:
                        return types.ElicitResult(action="decline" if value == "decline" else "cancel")
                    content.update(value)
                return types.ElicitResult(action="accept", content=content)
        except NoAnswer:
            await self.tell("No answer in time: the form was cancelled.")
            return types.ElicitResult(action="cancel")

    async def _field(self, spec: dict[str, Any]) -> Any:
        """One field's value ({name: value}, or {} when left empty), or a reply in `FORM_STOPS`."""
        choices = tuple(Choice(str(value), title) for value, title in spec["options"])
        if spec["type"] == "boolean":
            choices = plain("yes", "no")
        keep = spec["default"] is not None or not spec["required"]  # `KEEP` keeps the default, or leaves it empty
        lines = [f"{spec['label']}" + (f": {spec['description']}" if spec["description"] else "")]
        if keep:
            lines.append(f"Reply {KEEP} to " + ("leave it empty." if spec["default"] is None else
                                                f"keep {spec['default']}."))
        lines.append("Reply decline or cancel to stop.")
        while True:
            question = _Question((*choices, *plain(*FORM_STOPS)), free=not choices, keep=keep)
            reply = await self._ask("\n".join(lines), question)
            if reply in FORM_STOPS:
                return reply
            raw: Any = spec["default"] if reply == KEEP else reply
            if spec["type"] == "boolean" and reply != KEEP:
                raw = reply == "yes"
            try:
                return form_content([spec], {spec["name"]: raw})
            except UsageError as exc:
                await self.tell(str(exc))

    async def _decision(self, text: str) -> Decision:
        try:
            async with self._asking:
                return Decision(await self._ask(text, _Question(DECISIONS)))
        except NoAnswer:
            await self.tell("No answer in time: not allowed.")
            return Decision.DENY

    async def _ask(self, text: str, question: _Question, *, link: str = "") -> str:
        """Put `question` to the room and wait for the asker's answer (a choice's value, or free text)."""
        offered = question.choices if len(question.choices) <= MAX_BUTTONS else ()
        buttons = [Button(choice.label, f"{question.id}:{index}") for index, choice in enumerate(offered, 1)]
        if not question.free:
            labels = [f"{index} = {choice.label}" if choice.label != choice.value else choice.label
                      for index, choice in enumerate(question.choices, 1)]
            text += f"\nReply {', '.join(labels[:-1])} or {labels[-1]}" + \
                (f" (or {', '.join(str(n) for n in range(1, len(labels) + 1))})."
                 if all(choice.label == choice.value for choice in question.choices) else ".")
        self._question = question
        try:
            try:
                await self.say(text, buttons, shown_as_is=link)
            except SendFailed as exc:
                raise NoAnswer from exc  # a question nobody can see is not waited for
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

    async def reply(self, sender: str, text: str, pressed: str | None = None) -> bool:
        """A message or a press while a question may wait: True when it was taken (as the answer, as a
        try at one, or as a press that answers nothing now); False: a message for the next turn."""
        question = self._question
        if pressed is not None:
            return await self._press(question, sender, pressed)
        if question is None or (self.asker is not None and sender != self.asker):
            return False
        answer = text.strip()
        if question.keep and answer == KEEP:
            picked: str | None = KEEP
        elif question.free:
            picked = answer.lower() if answer.lower() in FORM_STOPS else answer
        else:
            picked = _pick(answer, question.choices)
        if picked is None:
            await self.tell(f"Please reply {', '.join(choice.label for choice in question.choices)}.")
            return True
        self._take(question, picked)
        return True

    async def _press(self, question: _Question | None, sender: str, pressed: str) -> bool:
        asked, _, index = pressed.partition(":")
        if question is None or asked != question.id or not index.isdigit() or \
                not 1 <= int(index) <= len(question.choices):
            await self.tell("That question is no longer waiting for an answer.")
            return True
        if self.asker is not None and sender != self.asker:
            return True  # only the person whose message started the turn answers its questions
        self._take(question, question.choices[int(index) - 1].value)
        return True

    def _take(self, question: _Question, answer: str) -> None:
        question.answer = answer
        question.answered.set()
        self._question = None  # taken: a second quick reply is a message of its own, not a new answer


def _pick(answer: str, choices: tuple[Choice, ...]) -> str | None:
    """The choice a reply means: its value or label (any case), its number, or a start only one has."""
    said = answer.strip().lower()
    for choice in choices:
        if said in (choice.value.lower(), choice.label.lower()):
            return choice.value
    if said.isdigit() and 1 <= int(said) <= len(choices):
        return choices[int(said) - 1].value
    starting = [choice for choice in choices if said and (choice.label.lower().startswith(said)
                                                          or choice.value.lower().startswith(said))]
    return starting[0].value if len(starting) == 1 else None
