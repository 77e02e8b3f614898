"""The model: any OpenAI-compatible Chat Completions endpoint, through the official `openai` SDK.

One protocol reaches hosted providers (OpenRouter, Nous Portal, OpenAI) and local servers
(llama.cpp server, vLLM, Ollama, LM Studio). What the model sends back is input like any other,
and may be hostile or broken:

- Only what can succeed on a second try is retried (`RETRIES` times, with backoff and the server's
  `Retry-After`): 429, 502, 503, 504 and a dropped connection. A 500 that a template error or a
  broken history causes would only repeat, so it is reported at once, in the server's own words.
- Answers are bounded: a body stops at `MAX_BODY_BYTES`; a streamed answer stops at
  `MAX_ANSWER_CHARS` of text, `MAX_TOOL_CALLS` calls and `MAX_ARGUMENT_CHARS` of arguments each.
- Every malformed shape (no choices, a message that is not one, a chunk that is not JSON) becomes
  one sentence naming the endpoint, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from hermes.config.model_settings import ModelSettings
from hermes.errors import HermesError
from hermes.security.invisible import visible
from hermes.security.redact import Redactor, mask_url
from hermes.validation import invalid_text_at

if TYPE_CHECKING:
    import openai

RETRIES = 3
RETRIABLE_STATUS = frozenset({429, 502, 503, 504})
MAX_BACKOFF = 20.0  # seconds; a longer Retry-After is not waited for
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_ANSWER_CHARS = 2_000_000
MAX_TOOL_CALLS = 128
MAX_ARGUMENT_CHARS = 1_000_001  # one more than the loop accepts, so it can say the arguments were too long
MAX_NAME_CHARS = 256
# A local server needs no key, but the SDK must be given one, or it reads OPENAI_API_KEY from the
# environment and sends the user's OpenAI key to whatever endpoint is configured.
NO_KEY = "no-key-configured"

TextSink = Callable[[str], Awaitable[None]]


class ModelError(HermesError):
    """The model endpoint failed; the message is one sentence for the user (already redacted)."""

    # False when the turn's message was left out of the conversation (the model never saw it).
    message_kept = True


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

            from hermes.mcp.sdk import BoundedTransport

            # Retries are hermes's own (see `_retriable`); the body of an answer is bounded.
            http = openai.DefaultAsyncHttpxClient(transport=BoundedTransport(MAX_BODY_BYTES))
            client = openai.AsyncOpenAI(api_key=self.settings.api_key or NO_KEY, base_url=self.settings.base_url,
                                        timeout=self.settings.timeout, max_retries=0, http_client=http)
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
        for attempt in range(self._retries + 1):
            try:
                if on_text is None:
                    completion = await self._openai().chat.completions.create(**request)
                    return _reply(completion)
                stream = await self._openai().chat.completions.create(
                    **request, stream=True, stream_options={"include_usage": True})
                return await _collect(stream, on_text)
            except ModelError as exc:
                raise ModelError(self.redactor(f"The model endpoint {self.where} answered something hermes cannot "
                                               f"use: {exc}")) from None
            except openai.OpenAIError as exc:
                wait = _retriable(exc, attempt)
                if wait is None or attempt == self._retries:
                    raise ModelError(self.redactor(self._sentence(exc, attempt))) from None
                await anyio.sleep(wait)
            except (ValueError, TypeError, KeyError, AttributeError, UnicodeError, RecursionError) as exc:
                raise ModelError(self.redactor(f"The model endpoint {self.where} answered something hermes cannot "
                                               f"read ({type(exc).__name__}: {str(exc)[:200]}).")) from None
        raise AssertionError("unreachable")

    async def model_names(self) -> list[str]:
        """The models the endpoint serves (`GET /models`), sorted; raises `ModelError` with why not."""
        import openai

        try:
            page = await self._openai().models.list(timeout=min(self.settings.timeout, 20.0))
            # A name that is not valid text (a lone surrogate) can be neither shown nor saved: a
            # server's list is hostile input like any other.
            names = {str(m.id) for m in page.data if getattr(m, "id", None)}
            return sorted(n for n in names if invalid_text_at(n) is None and n.isprintable())[:1000]
        except openai.NotFoundError:
            raise ModelError(f"The endpoint {self.where} does not list its models (404 for /models): is this "
                             f"an OpenAI-compatible base URL ending in /v1?") from None
        except openai.OpenAIError as exc:
            raise ModelError(self.redactor(self._sentence(exc))) from None
        except (ValueError, TypeError, KeyError, AttributeError, UnicodeError, RecursionError) as exc:
            raise ModelError(f"The endpoint {self.where} listed its models in a shape hermes cannot read "
                             f"({type(exc).__name__}).") from None

    def _sentence(self, exc: Exception, attempts: int = 0) -> str:
        import openai

        where, name = self.where, self.settings.name
        if isinstance(exc, openai.APITimeoutError):
            return f"The model endpoint {where} did not answer within {self.settings.timeout:g} s (model.timeout)."
        if isinstance(exc, openai.APIConnectionError) and _too_large(exc):
            return f"The model endpoint {where} sent an answer larger than {MAX_BODY_BYTES} bytes; hermes stopped " \
                   f"reading it."
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
        retried = f" after {attempts} retries" if attempts else ""
        if isinstance(exc, openai.RateLimitError):
            detail = _error_detail(exc)
            return f"The model endpoint {where} kept answering 429 (rate limited){retried}" \
                   f"{': ' + detail if detail else '.'}"
        if isinstance(exc, openai.APIStatusError):
            detail = _error_detail(exc)
            if exc.status_code >= 500:
                return f"The model endpoint {where} failed ({exc.status_code}){retried}" \
                       f"{': ' + detail if detail else ''}"
            return f"The model endpoint {where} refused the request ({exc.status_code})" \
                   f"{': ' + detail if detail else ''}"
        return f"The model endpoint {where} answered something hermes could not use: {type(exc).__name__}: {exc}"


def _retriable(exc: Exception, attempt: int) -> float | None:
    """Seconds to wait before trying again, or None when a second try cannot help."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return None  # the whole timeout again would double the wait for the same answer
    if isinstance(exc, openai.APIConnectionError):
        if _too_large(exc):
            return None  # the same answer would be as large again
        return float(min(MAX_BACKOFF, 0.5 * 2 ** attempt))
    if isinstance(exc, openai.APIStatusError) and exc.status_code in RETRIABLE_STATUS:
        after = exc.response.headers.get("retry-after", "") if exc.response is not None else ""
        try:
            asked = float(after)
        except ValueError:
            asked = 0.5 * 2 ** attempt
        return None if asked > MAX_BACKOFF else max(0.0, asked)
    return None


def _too_large(exc: BaseException) -> bool:
    """Whether the connection was given up because the answer passed `MAX_BODY_BYTES`."""
    cause = exc.__cause__ or exc.__context__
    return cause is not None and "answer is larger than" in str(cause)


def _error_detail(exc: Any) -> str:
    """What the server said, whole up to a bound: the useful part of a template error is at its end."""
    body = getattr(exc, "body", None)
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
    elif isinstance(body, str):
        message = body
    if not message:
        return ""
    text = " ".join(visible(str(message)).split())
    return text if len(text) <= 1200 else text[:800] + " … " + text[-300:]


def _usage(usage: Any) -> dict[str, int]:
    """Token counts as the provider reports them, with the prompt tokens its cache served
    (`prompt_tokens_details.cached_tokens`, OpenAI's field, which llama.cpp and vLLM fill too)."""
    if usage is None:
        return {}
    found = {key: getattr(usage, key, None) for key in ("prompt_tokens", "completion_tokens", "total_tokens")}
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None and isinstance(details, dict):
        cached = details.get("cached_tokens")
    found["cached_prompt_tokens"] = cached
    return {key: value for key, value in found.items() if type(value) is int and value >= 0}


def _text(value: Any, limit: int) -> str:
    """A field the model sent that should be text: text within `limit`, or a refusal."""
    if value is None:
        return ""
    if isinstance(value, str):
        if len(value) > limit:
            raise ModelError(f"a field of {len(value)} characters, more than hermes reads ({limit})")
        return value
    if isinstance(value, (dict, list)):  # arguments sent as an object instead of a JSON string
        return _text(json.dumps(value), limit)
    raise ModelError(f"a {type(value).__name__} where text belongs")


def _reply(completion: Any) -> ModelReply:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        raise ModelError("an answer without any choice")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise ModelError("a choice without a message")
    raw_calls = getattr(message, "tool_calls", None) or []
    if len(raw_calls) > MAX_TOOL_CALLS:
        raise ModelError(f"{len(raw_calls)} tool calls in one reply, more than hermes runs ({MAX_TOOL_CALLS})")
    calls = []
    for index, call in enumerate(raw_calls):
        function = getattr(call, "function", None)
        if function is None:
            continue
        calls.append(ToolCallRequest(_text(getattr(call, "id", None), MAX_NAME_CHARS) or f"call_{index}",
                                     _text(getattr(function, "name", None), MAX_NAME_CHARS),
                                     _text(getattr(function, "arguments", None), MAX_ARGUMENT_CHARS)))
    finish = getattr(choices[0], "finish_reason", None)
    return ModelReply(_text(getattr(message, "content", None), MAX_ANSWER_CHARS), tuple(calls),
                      finish if isinstance(finish, str) else None, _usage(getattr(completion, "usage", None)),
                      _text(getattr(completion, "model", None), MAX_NAME_CHARS))


class _Assembly:
    """A streamed reply being put together, within bounds."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.size = 0
        self.calls: dict[int, dict[str, str]] = {}

    def add_text(self, delta: Any) -> str:
        piece = _text(delta, MAX_ANSWER_CHARS)
        self.size += len(piece)
        if self.size > MAX_ANSWER_CHARS:
            raise ModelError(f"an answer longer than {MAX_ANSWER_CHARS} characters; hermes stopped reading it")
        self.text.append(piece)
        return piece

    def add_call(self, piece: Any) -> None:
        index = getattr(piece, "index", None)
        if type(index) is not int:
            index = len(self.calls)
        if index not in self.calls and len(self.calls) >= MAX_TOOL_CALLS:
            raise ModelError(f"more than {MAX_TOOL_CALLS} tool calls in one reply")
        call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        call["id"] = _text(getattr(piece, "id", None), MAX_NAME_CHARS) or call["id"]
        function = getattr(piece, "function", None)
        if function is not None:
            call["name"] = (call["name"] + _text(getattr(function, "name", None), MAX_NAME_CHARS))[:MAX_NAME_CHARS]
            call["arguments"] += _text(getattr(function, "arguments", None), MAX_ARGUMENT_CHARS)
            if len(call["arguments"]) > MAX_ARGUMENT_CHARS:
                call["arguments"] = call["arguments"][:MAX_ARGUMENT_CHARS]  # the loop says they are too long


async def _collect(stream: Any, on_text: TextSink) -> ModelReply:
    """A streamed reply put together: text as it comes, tool calls assembled from their pieces."""
    assembly = _Assembly()
    calls = assembly.calls
    finish: str | None = None
    usage: dict[str, int] = {}
    model = ""
    async for chunk in stream:
        model = _text(getattr(chunk, "model", None), MAX_NAME_CHARS) or model
        if getattr(chunk, "usage", None) is not None:
            usage = _usage(chunk.usage)
        for choice in getattr(chunk, "choices", None) or []:
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            content = getattr(delta, "content", None)
            if content:
                await on_text(assembly.add_text(content))
            for piece in getattr(delta, "tool_calls", None) or []:
                assembly.add_call(piece)
            reason = getattr(choice, "finish_reason", None)
            finish = reason if isinstance(reason, str) else finish
    text = assembly.text
    tool_calls = tuple(ToolCallRequest(c["id"] or f"call_{i}", c["name"], c["arguments"])
                       for i, c in sorted(calls.items()))
    return ModelReply("".join(text), tool_calls, finish, usage, model)


def tool_definition(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool as a Chat Completions function tool."""
    parameters = schema if isinstance(schema, dict) and schema.get("type") == "object" else \
        {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


