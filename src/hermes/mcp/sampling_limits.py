"""A server's `sampling:` bounds, checked wherever its request is answered: by the chat's model, or
by the client connected to `hermes mcp serve`.

Off for the server, too many tool rounds in one sampling conversation, over its rate: refused with
the setting that says so. The token cap and the timeout are applied by whoever answers.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import mcp_types as types

from hermes.config.agent_settings import SamplingSettings


def refusal(message: str, code: int = types.INVALID_REQUEST) -> types.ErrorData:
    return types.ErrorData(code=code, message=message)


def blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def tool_rounds(params: types.CreateMessageRequestParams) -> int:
    """How many times the model has already asked for the server's tools in this conversation."""
    return sum(1 for m in params.messages if m.role == "assistant"
               and any(isinstance(b, types.ToolUseContent) for b in blocks(m.content)))


class SamplingLimits:
    """The rate of each server's sampling requests, and the checks every request passes first."""

    def __init__(self) -> None:
        self._recent: dict[str, deque[float]] = {}

    def _over_rate(self, server: str, settings: SamplingSettings) -> bool:
        now = time.monotonic()
        recent = self._recent.setdefault(server, deque())
        while recent and now - recent[0] > 60:
            recent.popleft()
        if len(recent) >= settings.max_rpm:
            return True
        recent.append(now)
        return False

    def refused(self, server: str, params: types.CreateMessageRequestParams,
                settings: SamplingSettings) -> types.ErrorData | None:
        """Why this request may not be answered at all; None when it may."""
        if not settings.enabled:
            return refusal(f"Sampling is off for MCP server '{server}' (sampling.enabled: false).")
        if tool_rounds(params) >= settings.max_tool_rounds and params.tools:
            return refusal(f"MCP server '{server}' reached its {settings.max_tool_rounds} tool rounds for one "
                           f"sampling conversation (sampling.max_tool_rounds).")
        if self._over_rate(server, settings):
            return refusal(f"MCP server '{server}' asked for more than {settings.max_rpm} samplings in a minute "
                           f"(sampling.max_rpm).")
        return None


def capped(params: types.CreateMessageRequestParams, settings: SamplingSettings) -> types.CreateMessageRequestParams:
    """The request with at most `sampling.max_tokens_cap` tokens asked for."""
    if params.max_tokens <= settings.max_tokens_cap:
        return params
    return params.model_copy(update={"max_tokens": settings.max_tokens_cap})
