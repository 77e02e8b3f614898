"""What the tool loop needs from whoever runs it: a terminal with a person, or a one-shot run.

The agent never prints or asks anything itself; the CLI implements this for an interactive chat
(prompts, a status line, streamed text) and for `hermes chat -q` (activity lines on stderr, no
questions: the answers are the one-shot rules).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol

import mcp_types as types

from hermes.agent.approval import Decision
from hermes.mcp.tasks import Progress
from hermes.tools.permissions import Verdict
from hermes.tools.surface import SurfaceTool


class RunStatus(StrEnum):
    """How one tool call of the model ended (what `--json` and the activity lines say)."""

    OK = "ok"
    ERROR = "error"  # the tool ran and reported an error
    UNAVAILABLE = "unavailable"  # its server or app is not there; the model got the structured reason
    DENIED = "denied"  # it needed approval and did not get it
    INVALID = "invalid"  # the model's arguments were not a JSON object
    CANCELLED = "cancelled"  # the user interrupted the turn


class ChatUI(Protocol):
    @property
    def interactive(self) -> bool:
        """A person is there to be asked (approvals, sampling, elicitation forms)."""

    async def text(self, delta: str) -> None:
        """A piece of the model's answer, as it is written (interactive chat streams it)."""

    def waiting(self, model: str | None) -> None:
        """A request to `model` is in flight and nothing of its answer has come yet (None: it came,
        or the request ended). A local model can take seconds to read a long prompt."""

    async def tool_started(self, call_id: str, name: str, arguments: dict[str, Any] | None) -> None: ...

    async def tool_finished(self, call_id: str, name: str, status: RunStatus, seconds: float, summary: str) -> None:
        """`summary`: one line of what the model got, or, for a tool whose server or app is missing, its
        sentence and what to do."""

    def progress(self, call_id: str, name: str) -> Progress | None:
        """Where a running tool's progress goes, if anywhere."""

    async def approve_tool(self, tool: SurfaceTool, arguments: dict[str, Any], verdict: Verdict) -> Decision:
        """Once, always or deny; `verdict` says why it asks (a rule, or what the tool does not say)."""

    async def notice(self, text: str) -> None:
        """A line for the user from hermes itself (not the model), e.g. where "always" was kept."""

    async def approve_sampling(self, server: str, params: types.CreateMessageRequestParams) -> Decision: ...

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult: ...
