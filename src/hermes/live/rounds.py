"""A 2026-07-28 client's call through `serve` whose upstream asks something: input-required rounds.

A client of the 2026-07-28 revision has no back-channel: what an upstream server asks during a call
(a form for the user, the client's model, its roots) must reach it as an `InputRequiredResult`, and
its answers come back on a retry of the same call. So the upstream call is *parked*: it keeps running
in `serve`'s own task group while the client's request returns the question, under a `requestState`
that names the parked call (sealed by the SDK's request-state boundary, so a client cannot forge or
alter it); the retry hands the answers to the waiting upstream request and waits for the next
question or the result. A call whose client never comes back is given up after `PARK_LIMIT`.
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

PARK_LIMIT = 300.0  # seconds a question waits for the client's retry
_MAX_PARKED = 256
_GATHER_CHECKPOINTS = 20
R = TypeVar("R", bound=types.Result)


@dataclass
class _Question:
    request: Any
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Any = None
    sent: bool = False


class Parked:
    """One upstream call waiting, between rounds, for its client's answers."""

    def __init__(self, ident: str, method: str, answered: dict[str, Any] | None = None) -> None:
        self.id = ident
        self._given = dict(answered or {})  # answers the client sent before it was asked (first request)
        self.method = method  # the request it answers: a round of a tool call cannot finish a prompt
        self.questions: dict[str, _Question] = {}
        self.result: types.Result | None = None
        self.failure: BaseException | None = None
        self.done = anyio.Event()
        self.finished_at: float | None = None
        self._changed = anyio.Event()
        self._count = 0

    async def ask(self, request: Any, key: str | None = None) -> Any:
        """What the upstream asks, answered by the client on its next round (None: no answer came).
        `key`: the upstream's own name for the question (a 2026-07-28 upstream's input request), kept
        when it is free, so the client sees the server's keys."""
        if key is not None and key in self._given:
            return self._given.pop(key)
        self._count += 1
        if not key or key in self.questions or len(key) > 256:
            key = f"q{self._count}"
        question = self.questions[key] = _Question(request)
        self._changed.set()
        with anyio.move_on_after(PARK_LIMIT):
            await question.answered.wait()
        self.questions.pop(key, None)
        return question.answer

    def waiting(self) -> bool:
        """The call is stopped on questions its client has been sent and not answered yet."""
        return any(q.sent and not q.answered.is_set() for q in self.questions.values())

    def answer(self, responses: dict[str, Any]) -> None:
        for key, response in responses.items():
            question = self.questions.get(key)
            if question is not None and question.sent and not question.answered.is_set():
                question.answer = response
                question.answered.set()

    async def next_round(self) -> types.Result:
        """The call's result once it has one, or the questions the client has not seen yet."""
        while True:
            unsent = {key: q for key, q in self.questions.items() if not q.sent}
            if unsent:
                # An upstream's round may hold several questions, asked side by side: let them all
                # arrive, so the client gets them in one round too.
                for _ in range(_GATHER_CHECKPOINTS):
                    await anyio.lowlevel.checkpoint()
                unsent = {key: q for key, q in self.questions.items() if not q.sent}
                for question in unsent.values():
                    question.sent = True
                return types.InputRequiredResult(input_requests={k: q.request for k, q in unsent.items()},
                                                 request_state=self.id)
            if self.done.is_set():
                if self.failure is not None:
                    raise self.failure
                assert self.result is not None
                return self.result
            self._changed = anyio.Event()
            await self._changed.wait()

    async def run(self, call: Callable[[], Awaitable[types.Result]]) -> None:
        try:
            self.result = await call()
        except Exception as exc:  # the client hears it on its next round
            self.failure = self.failure or exc
        finally:
            self.finished_at = anyio.current_time()
            self.done.set()
            self._changed.set()


class Rounds:
    """The parked calls of one `serve`."""

    def __init__(self) -> None:
        self._parked: dict[str, Parked] = {}
        self._tasks: anyio.abc.TaskGroup | None = None

    def attach(self, tasks: anyio.abc.TaskGroup) -> None:
        self._tasks = tasks

    def start(self, method: str, answered: dict[str, Any] | None = None) -> Parked:
        now = anyio.current_time()
        for ident, old in list(self._parked.items()):  # results no client came back for
            if old.finished_at is not None and now - old.finished_at > PARK_LIMIT:
                del self._parked[ident]
        if len(self._parked) >= _MAX_PARKED:
            raise MCPError(code=types.INTERNAL_ERROR, message="hermes mcp serve has too many calls waiting for "
                                                              "their client's answers; try again later")
        parked = Parked(secrets.token_urlsafe(16), method, answered)
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
        if run is not None:
            assert self._tasks is not None, "Rounds.attach() before the first call"
            self._tasks.start_soon(parked.run, run)
        try:
            outcome = await parked.next_round()
        except BaseException:
            self._parked.pop(parked.id, None)
            raise
        if not isinstance(outcome, types.InputRequiredResult):
            self._parked.pop(parked.id, None)
        return cast(R, outcome)
