"""A scripted OpenAI-compatible model on loopback for the agent tests (`servers/model_server.py`, served
by a thread of the test's own process: real HTTP, no process start)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.servers.model_server import serve_in_thread


@dataclass
class ScriptedModel:
    url: str  # the base URL, ending in /v1
    record: Path

    def requests(self) -> list[dict[str, Any]]:
        """Every request the model received, in order (body and Authorization header)."""
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests()]


@pytest.fixture
def scripted_model(tmp_path: Path) -> Iterator[Any]:
    """`scripted_model(steps)` starts a model that answers with `steps` in order; returns a `ScriptedModel`."""
    stops: list[Callable[[], None]] = []

    def start(steps: list[dict[str, Any]]) -> ScriptedModel:
        index = len(stops)
        script, record = tmp_path / f"model-{index}.json", tmp_path / f"model-{index}.jsonl"
        script.write_text(json.dumps(steps))
        port, stop = serve_in_thread(script, record)
        stops.append(stop)
        return ScriptedModel(f"http://127.0.0.1:{port}/v1", record)

    yield start
    for stop in stops:
        stop()


def model_config(model: ScriptedModel, **extra: Any) -> dict[str, Any]:
    return {"base_url": model.url, "name": "test-model", **extra}
