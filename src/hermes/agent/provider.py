"""The model: any OpenAI-compatible Chat Completions endpoint, through the official `openai` SDK.

One protocol reaches hosted providers (OpenRouter, Nous Portal, OpenAI) and local servers
(llama.cpp server, vLLM, Ollama, LM Studio). 429 and 5xx answers and dropped connections are
retried by the SDK with backoff (bounded: `RETRIES`); every other failure becomes one redacted
sentence naming the endpoint and what to check, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes.config.agent_settings import ModelSettings
from hermes.errors import HermesError
from hermes.security.redact import Redactor, mask_url

if TYPE_CHECKING:
    import openai

RETRIES = 3
# A local server needs no key, but the SDK must be given one, or it reads OPENAI_API_KEY from the
# environment and sends the user's OpenAI key to whatever endpoint is configured.
NO_KEY = "no-key-configured"

TextSink = Callable[[str], Awaitable[None]]


class ModelError(HermesError):
    """The model endpoint failed; the message is one sentence for the user (already redacted)."""


@dataclass(frozen=True)
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # as the model wrote it; parsed (and refused when it is not JSON) by the tool loop


@dataclass(frozen=True)
class ModelReply:
    content: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    model: str = ""

    def message(self) -> dict[str, Any]:
        """The reply as the assistant message of the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}}
                                     for c in self.tool_calls]
        return message


class Provider:
    def __init__(self, settings: ModelSettings, redactor: Redactor, *, retries: int = RETRIES) -> None:
        self.settings = settings
        self.redactor = redactor
        self._retries = retries
        self._client: openai.AsyncOpenAI | None = None
        if settings.api_key:
            redactor.register(settings.api_key)

    @property
    def where(self) -> str:
        return mask_url(self.settings.base_url)

    def _openai(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai  # about a second to import: only when a model is actually asked

            client = openai.AsyncOpenAI(api_key=self.settings.api_key or NO_KEY, base_url=self.settings.base_url,
                                        timeout=self.settings.timeout, max_retries=self._retries)
            # The SDK fills these from OPENAI_ORG_ID / OPENAI_PROJECT_ID and sends them as headers;
            # they belong to the user's OpenAI account, not to whatever endpoint this is.
            client.organization = None
            client.project = None
            self._client = client
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, *,
                       on_text: TextSink | None = None, max_tokens: int | None = None,
                       timeout: float | None = None) -> ModelReply:
        """One Chat Completions request; with `on_text`, streamed (text arrives as it is written)."""
        import openai

        request: dict[str, Any] = {"model": self.settings.name, "messages": messages}
        if tools:
            request["tools"] = tools
        limit = max_tokens or self.settings.max_tokens
        if limit:
            request["max_tokens"] = limit
        if timeout is not None:
            request["timeout"] = timeout
        try:
            if on_text is None:
                completion = await self._openai().chat.completions.create(**request)
                return _reply(completion)
            stream = await self._openai().chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True})
            return await _collect(stream, on_text)
        except openai.OpenAIError as exc:
            raise ModelError(self.redactor(self._sentence(exc))) from None

    def _sentence(self, exc: Exception) -> str:
        import openai

        where, name = self.where, self.settings.name
        if isinstance(exc, openai.APITimeoutError):
            return f"The model endpoint {where} did not answer within {self.settings.timeout:g} s (model.timeout)."
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return f"Cannot reach the model endpoint {where}: {cause}. Is the server running, and is " \
                   f"model.base_url right?"
        if isinstance(exc, openai.AuthenticationError):
            return f"The model endpoint {where} refused the API key (401): check model.api_key."
        if isinstance(exc, openai.PermissionDeniedError):
            return f"The model endpoint {where} denied access to model '{name}' (403)."
        if isinstance(exc, openai.NotFoundError):
            return f"The model endpoint {where} has no model '{name}' (404): check model.name (and that " \
                   f"model.base_url ends where the API starts, such as /v1)."
        if isinstance(exc, openai.RateLimitError):
            return f"The model endpoint {where} kept answering 429 (rate limited) after {self._retries} retries."
        if isinstance(exc, openai.APIStatusError):
            detail = _error_detail(exc)
            if exc.status_code >= 500:
                return f"The model endpoint {where} failed ({exc.status_code}) after {self._retries} retries" \
                       f"{': ' + detail if detail else ''}."
            return f"The model endpoint {where} refused the request ({exc.status_code})" \
                   f"{': ' + detail if detail else ''}."
        return f"The model endpoint {where} answered something hermes could not use: {type(exc).__name__}: {exc}"


def _error_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:300]
    return ""


def _usage(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    found = {key: getattr(usage, key, None) for key in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return {key: value for key, value in found.items() if isinstance(value, int)}


def _reply(completion: Any) -> ModelReply:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise ModelError("The model endpoint answered without any choice.")
    message = choices[0].message
    calls = tuple(ToolCallRequest(call.id or f"call_{index}", call.function.name or "",
                                  call.function.arguments or "")
                  for index, call in enumerate(message.tool_calls or []) if getattr(call, "function", None))
    return ModelReply(message.content or "", calls, choices[0].finish_reason, _usage(completion.usage),
                      completion.model or "")


async def _collect(stream: Any, on_text: TextSink) -> ModelReply:
    """A streamed reply put together: text as it comes, tool calls assembled from their pieces."""
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish: str | None = None
    usage: dict[str, int] = {}
    model = ""
    async for chunk in stream:
        model = chunk.model or model
        if chunk.usage is not None:
            usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
                await on_text(delta.content)
            for piece in delta.tool_calls or []:
                call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    call["name"] += piece.function.name or ""
                    call["arguments"] += piece.function.arguments or ""
            finish = choice.finish_reason or finish
    tool_calls = tuple(ToolCallRequest(c["id"] or f"call_{i}", c["name"], c["arguments"])
                       for i, c in sorted(calls.items()))
    return ModelReply("".join(text), tool_calls, finish, usage, model)


def tool_definition(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool as a Chat Completions function tool."""
    parameters = schema if isinstance(schema, dict) and schema.get("type") == "object" else \
        {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def arguments_of(call: ToolCallRequest) -> tuple[dict[str, Any] | None, str | None]:
    """The call's arguments as an object, or why they are not usable (said back to the model)."""
    raw = call.arguments.strip() or "{}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"The arguments of {call.name} are not valid JSON ({exc}); send a JSON object."
    if not isinstance(value, dict):
        return None, f"The arguments of {call.name} must be a JSON object, not {type(value).__name__}."
    return value, None
