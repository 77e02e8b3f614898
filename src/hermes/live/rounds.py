"""A 2026-07-28 client's request through `serve` whose upstream asks something: input-required rounds.

A client of the 2026-07-28 revision has no back-channel: what an upstream server asks during a call
(a form for the user, the client's model, its roots) must reach it as an `InputRequiredResult`, and
its answers come back on a retry of the same request. So the upstream request is *parked*: it keeps
running in `serve`'s own task group while the client's request returns the question, under a
`requestState` that names the parked request (sealed by the SDK's request-state boundary, so a
client cannot forge or alter it); the retry hands the answers to the waiting upstream request and
waits for the next question or the result. A retry that leaves a question unanswered gets that
question again at once.

Bounds: a question waits `PARK_LIMIT` for its answer; at most `MAX_WAITING` parked requests may be
waiting on their clients at once (past that, new questions are refused, not new calls); a request
whose client went away is cancelled upstream, and a result nobody is waiting for is dropped.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, TypeAdapter, ValidationError

PARK_LIMIT = 300.0  # seconds a question waits for the client's retry
MAX_WAITING = 256
_GATHER_CHECKPOINTS = 20
R = TypeVar("R", bound=types.Result)
CROWDED = types.ErrorData(code=types.INTERNAL_ERROR, message=f"hermes mcp serve has {MAX_WAITING} calls waiting for "
                                                              f"their clients' answers; it asks nothing more until "
                                                              f"some are answered or given up")


def wire(value: Any) -> Any:
    """A value as it goes on the wire: a model dumped the protocol's way, anything else as it is."""
    return value.model_dump(mode="json", by_alias=True, exclude_none=True) if isinstance(value, BaseModel) else value


_ANY_ANSWER: tuple[str, TypeAdapter[Any]] = ("an answer", TypeAdapter(Any))
_ANSWERS: dict[str, tuple[str, TypeAdapter[Any]]] = {
    "elicitation/create": ("an elicitation result", TypeAdapter(types.ElicitResult)),
    "sampling/createMessage": ("a sampling result",
                               TypeAdapter(types.CreateMessageResult | types.CreateMessageResultWithTools)),
    "roots/list": ("a roots list", TypeAdapter(types.ListRootsResult)),
}


def read_answers(answers: dict[str, Any], asked: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """The answers to questions in `asked`, each read as what its question asks for (a key nobody
    asked is left out). An answer of another kind is refused (-32602, nothing taken) when `strict`,
    else left out: its question stays waiting."""
    read = {}
    for key, value in answers.items():
        question = asked.get(key)
        if question is None:
            continue
        method = question.get("method") if isinstance(question, dict) else getattr(question, "method", None)
        kind, adapter = _ANSWERS.get(str(method), _ANY_ANSWER)
        try:
            read[key] = adapter.validate_python(wire(value))
        except ValidationError:
            if strict:
                raise MCPError(types.INVALID_PARAMS, f"The answer to '{key[:80]}' is not {kind}, which its question "
                                                     f"asks for") from None
    return read


class Escalated(types.Result):
    """What a round answers when the call's upstream made it a task: `serve` makes it one downstream."""


ESCALATED = Escalated()


@dataclass
class _Question:
    request: Any
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Any = None
    sent: bool = False


class Parked:
    """One upstream request waiting, between rounds, for its client's answers."""

    def __init__(self, ident: str, method: str, answered: dict[str, Any] | None = None, *,
                 crowded: Callable[[], bool] = lambda: False) -> None:
        self.id = ident
        self.method = method  # the request it answers: a round of a tool call cannot finish a prompt
        self._given = dict(answered or {})  # answers the client sent before it was asked (first request)
        self._crowded = crowded
        self.questions: dict[str, _Question] = {}
        self.result: types.Result | None = None
        self.failure: BaseException | None = None
        self.done = anyio.Event()
        self.watching = 0  # the client's requests waiting on this one now
        self._scope: anyio.CancelScope | None = None
        self._changed = anyio.Event()
        self.version = 0  # counts its changes: a waiter says which one it has seen, so none is missed
        self._count = 0
        self.escalated = False  # its upstream made the call a task: from then on it is one downstream too
        self._escalation_told = False

    def _touch(self) -> None:
        self.version += 1
        self._changed.set()

    def escalate(self) -> None:
        self.escalated = True
        self._touch()

    async def change(self, seen: int) -> None:
        """Wait until it has changed since `version` was `seen` (a question, an answer, the end)."""
        while self.version == seen:
            if self._changed.is_set():
                self._changed = anyio.Event()
            await self._changed.wait()

    def send_unanswered(self) -> dict[str, Any]:
        """The questions waiting for answers (a task's `inputRequests`), counted as sent from now on."""
        waiting = {key: q for key, q in self.questions.items() if not q.answered.is_set()}
        for question in waiting.values():
            question.sent = True
        return {key: q.request for key, q in waiting.items()}

    def waiting(self) -> bool:
        """Stopped on questions its client has been sent and not answered yet."""
        return any(q.sent and not q.answered.is_set() for q in self.questions.values())

    async def ask(self, request: Any, key: str | None = None) -> Any:
        """What the upstream asks, answered by the client on its next round (None: no answer came;
        `CROWDED`: too many calls wait on their clients already). `key`: the upstream's own name for
        the question (a 2026-07-28 upstream's input request), kept when free, so the client sees it."""
        if key is not None and key in self._given:
            return self._given.pop(key)
        if self._crowded():
            return CROWDED
        self._count += 1
        if not key or key in self.questions or len(key) > 256:
            key = f"q{self._count}"
        question = self.questions[key] = _Question(request)
        self._touch()
        with anyio.move_on_after(PARK_LIMIT):
            await question.answered.wait()
        self.questions.pop(key, None)
        self._touch()
        return question.answer

    def answer(self, responses: dict[str, Any], *, strict: bool = True) -> None:
        """Answers to questions the client was sent (read as what each asks for; see `read_answers`)."""
        sent = {key: q.request for key, q in self.questions.items() if q.sent and not q.answered.is_set()}
        for key, response in read_answers(responses, sent, strict=strict).items():
            question = self.questions.get(key)
            if question is not None and question.sent and not question.answered.is_set():
                question.answer = response
                question.answered.set()
                self._touch()

    def _round(self, questions: dict[str, _Question]) -> types.InputRequiredResult:
        for question in questions.values():
            question.sent = True
        return types.InputRequiredResult(input_requests={k: q.request for k, q in questions.items()},
                                         request_state=self.id)

    async def next_round(self, *, retry: bool = False) -> types.Result:
        """The result once there is one, or the questions the client has not seen yet; on a retry
        that left some unanswered, those again at once."""
        if retry:
            unanswered = {k: q for k, q in self.questions.items() if q.sent and not q.answered.is_set()}
            if unanswered:
                return self._round({**unanswered, **{k: q for k, q in self.questions.items() if not q.sent}})
        while True:
            seen = self.version
            if self.escalated and not self._escalation_told:
                self._escalation_told = True  # its questions are the task's from now on
                return ESCALATED
            unsent = {key: q for key, q in self.questions.items() if not q.sent}
            if unsent:
                # An upstream's round may hold several questions, asked side by side: let them all
                # arrive, so the client gets them in one round too.
                for _ in range(_GATHER_CHECKPOINTS):
                    await anyio.lowlevel.checkpoint()
                return self._round({key: q for key, q in self.questions.items() if not q.sent})
            if self.done.is_set():
                if self.failure is not None:
                    raise self.failure
                assert self.result is not None
                return self.result
            await self.change(seen)

    def cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def run(self, call: Callable[[], Awaitable[types.Result]], finished: Callable[[Parked], None]) -> None:
        try:
            with anyio.CancelScope() as self._scope:
                self.result = await call()
        except Exception as exc:  # the client hears it on its next round
            self.failure = self.failure or exc
        finally:
            if self.result is None and self.failure is None:
                self.failure = MCPError(code=types.INTERNAL_ERROR, message="the call was given up")
            self.done.set()
            self._touch()
            finished(self)


class Rounds:
    """The parked requests of one `serve`."""

    def __init__(self, tasks: anyio.abc.TaskGroup) -> None:
        """`tasks`: where parked calls run, beyond the request that started them (serve's task group)."""
        self._parked: dict[str, Parked] = {}
        self._tasks = tasks

    def _crowded(self) -> bool:
        return sum(1 for p in self._parked.values() if p.watching == 0 and p.waiting()) >= MAX_WAITING

    def _finished(self, parked: Parked) -> None:
        if parked.watching == 0:  # nobody is waiting for this result, and nobody can ask for it now
            self._parked.pop(parked.id, None)

    def start(self, method: str, answered: dict[str, Any] | None = None) -> Parked:
        parked = Parked(secrets.token_urlsafe(16), method, answered, crowded=self._crowded)
        self._parked[parked.id] = parked
        return parked

    def resumed(self, state: str, responses: dict[str, Any], method: str) -> Parked:
        parked = self._parked.get(state)
        if parked is None or parked.method != method:
            raise MCPError(code=types.INVALID_PARAMS, message="this input-required round is not known to hermes "
                                                              f"for {method} (it expired, was answered, or belongs "
                                                              f"to another request); send the request again")
        parked.answer(responses)
        return parked

    async def call(self, parked: Parked, run: Callable[[], Awaitable[R]] | None) -> R | types.InputRequiredResult:
        """Start the request (first round) or go on with it; the next round's answer to the client.
        A retry carries no type of its own: the parked request's result is what it was started with."""
        parked.watching += 1
        try:
            if run is not None:
                self._tasks.start_soon(parked.run, run, self._finished)
            outcome = await parked.next_round(retry=run is None)
        except BaseException:
            # The client went away (or the call failed): nobody will come back for this one.
            self._parked.pop(parked.id, None)
            parked.cancel()
            raise
        finally:
            parked.watching -= 1
        if not isinstance(outcome, types.InputRequiredResult):
            self._parked.pop(parked.id, None)
        return cast(R, outcome)
