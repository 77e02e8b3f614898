"""One type for the answer to a call of the surface: it worked, the tool failed, or it is unavailable.

A `CallResult` is built once, by the session, from what the server answered (already redacted
there: the one boundary every result crosses), and read the same way by everyone downstream:

- a model (chat) reads `for_model()`: the rendered text, or the structured reason as JSON;
- `hermes tools call` prints `text` (and `to_json()` with `--json`);
- `hermes mcp serve` answers its client with `to_mcp()`: the server's own result when there is one
  (structured content and media intact), else an error result carrying the same JSON.

What a reader sees of a server's answer (`Shown`) is rendered when first read, not when the answer
arrives: rendering saves media to files and keeps a long text on disk, and `serve`, which hands its
client the server's own answer, reads neither.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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


class Shown:
    """An answer's text and structured content, as a reader gets them: given, or rendered from the
    server's answer at the first read (`render`, run once)."""

    __slots__ = ("_render", "_seen")

    def __init__(self, text: str = "", structured: dict[str, Any] | None = None, *,
                 render: Callable[[], tuple[str, dict[str, Any] | None]] | None = None) -> None:
        self._render = render
        self._seen = (text, structured) if render is None else None

    def _read(self) -> tuple[str, dict[str, Any] | None]:
        if self._seen is None:
            assert self._render is not None
            self._seen = self._render()
            self._render = None  # what it held (the answer, the files) is not kept twice
        return self._seen

    @property
    def text(self) -> str:
        return self._read()[0]

    @property
    def structured(self) -> dict[str, Any] | None:
        return self._read()[1]

    def __repr__(self) -> str:
        return "Shown(not rendered yet)" if self._seen is None else f"Shown({self._seen[0]!r})"


@dataclass(frozen=True)
class _Answer:
    shown: Shown
    raw: types.CallToolResult | None = None  # the server's own answer; None for hermes's utility tools

    @property
    def text(self) -> str:
        return self.shown.text

    @property
    def structured(self) -> dict[str, Any] | None:
        return self.shown.structured


@dataclass(frozen=True)
class Ok(_Answer):
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
class ToolError(_Answer):
    """The tool answered with an error (`raw` is its answer), or hermes could not make the call."""

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
