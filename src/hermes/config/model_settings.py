"""The agent's model in config.yaml (`model:`), read only where the file has one.

```yaml
model:
  base_url: http://127.0.0.1:11434/v1    # required: any OpenAI-compatible Chat Completions endpoint
  name: hermes-4-70b                     # required
  api_key: ${OPENROUTER_API_KEY}         # optional; ${VAR} from the environment or .env
  max_tokens: 4096                       # optional
  max_tool_rounds: 30                    # optional: a turn stops with a clear message past it
  context_window: 128000                 # optional: past it, the oldest tool results are shortened
  timeout: 600                           # optional: seconds one model request may take
  deferred_tools: false                  # optional: a catalog plus tool_search instead of every schema
```
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.config.interpolate import interpolate, referenced_variables
from hermes.errors import ConfigError, InterpolationError
from hermes.validation import Loc, flag, http_url, integer, mapping, optional, required, seconds, text

MODEL_BLOCK = """model:
  base_url: http://127.0.0.1:11434/v1   # any OpenAI-compatible endpoint; this is Ollama's
  name: qwen2.5:7b                      # a model that endpoint serves (`ollama pull qwen2.5:7b`)
  # api_key: ${OPENROUTER_API_KEY}      # for a hosted service; keep the key in HERMES_HOME/.env

or let `hermes model` find the endpoint, list its models and check one."""


@dataclass(frozen=True, repr=False)
class ModelSettings:
    """`model:`: the OpenAI-compatible endpoint and model the agent talks to, and its limits."""

    base_url: str
    name: str
    api_key: str | None = None
    max_tokens: int | None = None
    max_tool_rounds: int = 30
    context_window: int | None = None
    timeout: float = 600.0
    deferred_tools: bool = False

    @classmethod
    def read(cls, value: Any, loc: Loc) -> ModelSettings:
        data = mapping(value, loc, {"base_url", "name", "api_key", "max_tokens", "max_tool_rounds",
                                    "context_window", "timeout", "deferred_tools"})
        return cls(
            base_url=required(data, "base_url", loc, lambda v, at: http_url(v, at, nonempty=True)),
            name=required(data, "name", loc, lambda v, at: text(v, at, nonempty=True)),
            api_key=optional(data, "api_key", loc, text, None) or None,
            max_tokens=optional(data, "max_tokens", loc, lambda v, at: integer(v, at, 1, 10_000_000), None),
            max_tool_rounds=optional(data, "max_tool_rounds", loc, lambda v, at: integer(v, at, 1, 1000), 30),
            context_window=optional(data, "context_window", loc, lambda v, at: integer(v, at, 256, 100_000_000),
                                    None),
            timeout=optional(data, "timeout", loc, seconds, 600.0),
            deferred_tools=optional(data, "deferred_tools", loc, flag, False),
        )

    def resolved(self, variables: Mapping[str, str], path: Path | str) -> tuple[ModelSettings, list[str]]:
        """These settings with `${VAR}` filled in, and the values that came in (secrets to hide)."""
        used: list[str] = []

        def fill(key: str, value: str | None) -> str | None:
            if value is None:
                return None
            for name in referenced_variables(value):
                if name in variables:
                    used.append(variables[name])
            try:
                return interpolate(value, variables, server="model")
            except InterpolationError as exc:
                raise ConfigError(f"uses ${{{exc.variable}}}, but {exc.variable} is not set (set it in the environment "
                                  f"or in the .env file of HERMES_HOME)", path=path, key=f"model.{key}") from None

        filled = dataclasses.replace(self, base_url=fill("base_url", self.base_url) or "",
                                     name=fill("name", self.name) or "", api_key=fill("api_key", self.api_key))
        return filled, used

    def __repr__(self) -> str:
        return f"ModelSettings({self.name!r} at {self.base_url!r}, api_key=<hidden>)"
