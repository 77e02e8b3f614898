"""MCP sampling: a server asks the chat's model for a completion, within that server's `sampling:` bounds.

Every request gets a protocol-correct answer, never a hang: refused with the reason (sampling off
for the server, over its rate, a model it does not allow, too many tool rounds, the user said no,
no one to ask), or the model's reply within `sampling.timeout`. What the server sends is the
server's prompt; the reply goes back to that server only.

Tool rounds (the server offers the model its own tools, and runs the one the model picks) follow
the same permissions as every other path: a denied tool is not offered, and a pick of a tool that
asks goes back to the server only after the user's yes (never in a one-shot run).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types

from hermes.agent.approval import Decision
from hermes.agent.provider import ModelError, Provider, tool_definition
from hermes.config.agent_settings import SamplingSettings
from hermes.mcp.sampling_limits import SamplingLimits, blocks, refusal
from hermes.tools.permissions import Permission, Verdict
from hermes.tools.surface import SurfaceTool

# JSON-RPC error code MCP suggests for "the user rejected the sampling request".
USER_REJECTED = -1
SamplingApproval = Callable[[str, types.CreateMessageRequestParams], Awaitable[Decision]]
# A server's own tool as the permission rules see it (registered under that server's name).
ToolJudge = Callable[[str, types.Tool], tuple[SurfaceTool, Verdict]]
ToolApproval = Callable[[SurfaceTool, dict[str, Any], Verdict], Awaitable[Decision]]


_refusal = refusal


def openai_messages(params: types.CreateMessageRequestParams) -> list[dict[str, Any]]:
    """The server's conversation as Chat Completions messages (images and audio described, not sent)."""
    messages: list[dict[str, Any]] = []
    if params.system_prompt:
        messages.append({"role": "system", "content": params.system_prompt})
    for message in params.messages:
        text: list[str] = []
        tool_calls: list[dict[str, Any]] = []
        for block in blocks(message.content):
            if isinstance(block, types.TextContent):
                text.append(block.text)
            elif isinstance(block, types.ToolUseContent):
                tool_calls.append({"id": block.id, "type": "function",
                                   "function": {"name": block.name, "arguments": json.dumps(block.input)}})
            elif isinstance(block, types.ToolResultContent):
                result = "\n".join(b.text for b in block.content if isinstance(b, types.TextContent))
                if block.structured_content is not None and not result:
                    result = json.dumps(block.structured_content)
                messages.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": result})
            else:
                text.append(f"[{block.type} content from the server, not shown to this model]")
        if message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": "\n".join(text) or None}
            if tool_calls:
                entry["tool_calls"] = tool_calls
            messages.append(entry)
        elif text:
            messages.append({"role": "user", "content": "\n".join(text)})
    return messages


class SamplingBroker:
    """Answers every server's sampling requests with the chat's model."""

    def __init__(self, provider: Provider, approve: SamplingApproval | None, *, judge: ToolJudge | None = None,
                 approve_tool: ToolApproval | None = None) -> None:
        """`approve` asks the user (interactive chat); None means no one can be asked (one-shot).
        `judge` gives a tool round's tools their permission; `approve_tool` asks for one that asks."""
        self.provider = provider
        self.approve = approve
        self.judge = judge
        self.approve_tool = approve_tool if approve is not None else None
        self._limits = SamplingLimits()
        self._always: set[str] = set()

    async def _allowed(self, server: str, params: types.CreateMessageRequestParams,
                       settings: SamplingSettings) -> bool:
        if server in self._always:
            return True
        if self.approve is None:
            return settings.auto_approve
        decision = await self.approve(server, params)
        if decision is Decision.ALWAYS:
            self._always.add(server)
        return decision is not Decision.DENY

    async def __call__(self, server: str, settings: SamplingSettings, params: types.CreateMessageRequestParams
                       ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        model = self.provider.settings.name
        if settings.allowed_models and model not in settings.allowed_models:
            return _refusal(f"MCP server '{server}' may sample only with {', '.join(settings.allowed_models)}; "
                            f"the configured model is '{model}'.")
        refused = self._limits.refused(server, params, settings)
        if refused is not None:
            return refused
        if not await self._allowed(server, params, settings):
            why = "the user declined it" if self.approve is not None else \
                "no one can approve it in a one-shot run (set sampling.auto_approve: true for this server)"
            return _refusal(f"Sampling request of MCP server '{server}' refused: {why}.", USER_REJECTED)
        judged = {t.name: self.judge(server, t) for t in params.tools or []} if self.judge else {}
        offered = [t for t in params.tools or []
                   if t.name not in judged or judged[t.name][1].permission is not Permission.DENY]
        tools = [tool_definition(t.name, t.description or "", t.input_schema) for t in offered]
        try:
            with anyio.fail_after(settings.timeout):
                reply = await self.provider.complete(openai_messages(params), tools or None,
                                                     max_tokens=min(params.max_tokens, settings.max_tokens_cap),
                                                     timeout=settings.timeout)
        except TimeoutError:
            return _refusal(f"The model did not answer MCP server '{server}' within {settings.timeout:g} s "
                            f"(sampling.timeout).", types.INTERNAL_ERROR)
        except ModelError as exc:
            return _refusal(str(exc), types.INTERNAL_ERROR)
        if reply.tool_calls and tools:
            uses: list[types.SamplingMessageContentBlock] = [
                types.ToolUseContent(type="tool_use", id=call.id, name=call.name, input=_object(call.arguments))
                for call in reply.tool_calls]
            for use in uses:
                assert isinstance(use, types.ToolUseContent)
                refusal_text = await self._tool_refused(server, use, judged, {t.name for t in offered})
                if refusal_text is not None:
                    return _refusal(refusal_text, USER_REJECTED)
            return types.CreateMessageResultWithTools(role="assistant", content=uses, model=reply.model or model,
                                                      stop_reason="toolUse")
        stop = "maxTokens" if reply.finish_reason == "length" else "endTurn"
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=reply.content),
                                         model=reply.model or model, stop_reason=stop)


    async def _tool_refused(self, server: str, use: types.ToolUseContent,
                            judged: dict[str, tuple[SurfaceTool, Verdict]], offered: set[str]) -> str | None:
        """Why the model's pick of a server tool may not go back to the server (None: it may)."""
        if use.name not in offered:
            return f"The model picked '{use.name}', which MCP server '{server}' did not offer it (or a rule denies)."
        if use.name not in judged:
            return None
        tool, found = judged[use.name]
        if found.permission is not Permission.ASK:
            return None
        if self.approve_tool is None:
            return f"The model picked {tool.name}, which asks first ({found.because}); no one can be asked here."
        if await self.approve_tool(tool, use.input, found) is Decision.DENY:
            return f"The model picked {tool.name}, and the user declined it."
        return None


def _object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {"_unparsed": arguments}
    return value if isinstance(value, dict) else {"value": value}


