"""`hermes model`: finding a model endpoint that works, before the user writes any YAML.

The steps a person would take by hand, each checked: which server (the usual local ones have
known addresses), which models it serves (`GET /v1/models`), and whether the chosen one answers a
request that offers a tool, the way `hermes chat` will ask it.
"""

from __future__ import annotations

from dataclasses import dataclass

from hermes.agent.provider import ModelError, Provider, tool_definition
from hermes.config.model_settings import ModelSettings
from hermes.security.redact import Redactor


@dataclass(frozen=True)
class Endpoint:
    label: str
    base_url: str
    key_variable: str | None = None  # the .env name of the API key a hosted service needs

    @property
    def choice(self) -> str:
        return f"{self.label}  ({self.base_url})"


ENDPOINTS = (
    Endpoint("Ollama", "http://127.0.0.1:11434/v1"),
    Endpoint("llama.cpp server (llama-server --jinja)", "http://127.0.0.1:8080/v1"),
    Endpoint("vLLM", "http://127.0.0.1:8000/v1"),
    Endpoint("LM Studio", "http://127.0.0.1:1234/v1"),
    Endpoint("OpenRouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    Endpoint("OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY"),
)

_PROBE_TOOL = tool_definition("get_time", "The current time.", {"type": "object", "properties": {}})


@dataclass(frozen=True)
class Tried:
    """What one request offering a tool showed."""

    called_tool: bool
    finish_reason: str | None

    def sentence(self, model: str) -> str:
        if self.called_tool:
            return f"{model} answered and called the offered tool: tool calls work."
        return (f"{model} answered, without calling the offered tool. Chat will work; if tools never get called, "
                f"the server may need tool support turned on (llama.cpp: --jinja; vLLM: "
                f"--enable-auto-tool-choice).")


async def served_models(base_url: str, api_key: str | None) -> list[str]:
    provider = Provider(ModelSettings(base_url=base_url, name="-", api_key=api_key, timeout=20.0), _redactor(api_key))
    try:
        return await provider.model_names()
    finally:
        await provider.close()


async def try_model(base_url: str, name: str, api_key: str | None) -> Tried:
    """One small request offering a tool; raises `ModelError` with the endpoint's words when it fails."""
    settings = ModelSettings(base_url=base_url, name=name, api_key=api_key, max_tokens=64, timeout=120.0)
    provider = Provider(settings, _redactor(api_key))
    try:
        reply = await provider.complete([{"role": "user", "content": "What time is it? Use the get_time tool."}],
                                        [_PROBE_TOOL])
    finally:
        await provider.close()
    return Tried(bool(reply.tool_calls), reply.finish_reason)


def _redactor(api_key: str | None) -> Redactor:
    return Redactor([api_key] if api_key else [])


__all__ = ["ENDPOINTS", "Endpoint", "ModelError", "Tried", "served_models", "try_model"]
