"""One type for the answer to a call of the surface: it worked, the tool failed, or it is unavailable.

A `CallResult` is built once, by the session, from what the server answered (already redacted
there: the one boundary every result crosses), and read the same way by everyone downstream:

- a model (chat) reads `for_model()`: the rendered text, or the structured reason as JSON;
- `hermes tools call` prints `text` (and `to_json()` with `--json`);
- `hermes mcp serve` answers its client with `to_mcp()`: the server's own result when there is one
  (structured content and media intact), else an error result carrying the same JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import mcp_types as types

from hermes.apps.status import AppStatus
from hermes.tools.unavailable import Unavailable


class Outcome(StrEnum):
    OK = "ok"
    ERROR = "error"  # the tool reported an error, or the call could not be made
    UNAVAILABLE = "unavailable"  # its server or app is not there
    DECLINED = "declined"  # a `deny` rule, or an `ask` without a yes: the tool did not run


@dataclass(frozen=True)
class Ok:
    text: str
    structured: dict[str, Any] | None = None
    raw: types.CallToolResult | None = None  # the server's own answer; None for hermes's utility tools

    outcome = Outcome.OK
    is_error = False
    no_such_tool = False

    def for_model(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "is_error": False}
        if self.structured is not None:
            data["structured"] = self.structured
        return data

    def to_mcp(self) -> types.CallToolResult:
        if self.raw is not None:
            return self.raw
        return types.CallToolResult(content=[types.TextContent(type="text", text=self.text)],
                                    structured_content=self.structured)


@dataclass(frozen=True)
class ToolError:
    """The tool answered with an error (`raw` is its answer), or hermes could not make the call."""

    text: str
    structured: dict[str, Any] | None = None
    raw: types.CallToolResult | None = None
    no_such_tool: bool = False  # the name is no tool of any configured server (the CLI exits 3)

    outcome = Outcome.ERROR
    is_error = True

    def for_model(self) -> str:
        return self.text if self.raw is not None else json.dumps({"error": self.text}, ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        if self.raw is None:
            return {"is_error": True, "error": self.text}
        data: dict[str, Any] = {"text": self.text, "is_error": True}
        if self.structured is not None:
            data["structured"] = self.structured
        return data

    def to_mcp(self) -> types.CallToolResult:
        if self.raw is not None:
            return self.raw
        payload = {"error": self.text}
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                    structured_content=payload, is_error=True)


@dataclass(frozen=True)
class Declined(ToolError):
    """The tool did not run: a permission rule denies it, or it asks and got no yes (`text` says which)."""

    outcome = Outcome.DECLINED


@dataclass(frozen=True)
class NotAvailable:
    """The tool's server (or the app behind it) is not there; `why` says what is wrong and what to do."""

    why: Unavailable | AppStatus

    outcome = Outcome.UNAVAILABLE
    is_error = True
    no_such_tool = False
    structured = None

    @property
    def text(self) -> str:
        return self.why.sentence

    def payload(self) -> dict[str, Any]:
        return self.why.payload()

    def for_model(self) -> str:
        return json.dumps(self.payload(), ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        return {"is_error": True, **self.payload()}

    def to_mcp(self) -> types.CallToolResult:
        payload = self.payload()
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                    structured_content=payload, is_error=True)


CallResult = Ok | ToolError | NotAvailable
