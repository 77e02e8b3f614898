"""The agent's own cost: a chat turn through hermes vs the same request made with the bare `openai` client.

Against one local OpenAI-compatible server (the test suite's scripted model, same reply every
time), with 10 and 200 tools on the surface:
1. per turn: `Agent.turn` (one request, a plain answer) vs `chat.completions.create` with the
   same messages and the same tool list; the difference is hermes's overhead per turn;
2. a tool step: from the model's tool-call reply arriving to the next request leaving (parse,
   approval check, the call through the session, redaction, history), vs the raw SDK
   `Client.call_tool` on the same server.
Each figure is a median over `--turns` repetitions, both sides interleaved.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from ruamel.yaml import YAML

from bench.common import BENCH, PYTHON, REPO, median, report
from hermes.agent.chat import ChatOptions, open_chat
from hermes.agent.provider import ModelReply, Provider
from hermes.cli.chat_ui import OneShotUI
from hermes.home import Home
from tests.support import start_portfile_server

MODEL_SERVER = REPO / "tests" / "servers" / "model_server.py"


def start_model(folder: Path, steps: list[dict[str, Any]]) -> tuple[subprocess.Popen[bytes], str]:
    script, record, portfile = folder / "script.json", folder / "record.jsonl", folder / "port"
    script.write_text(json.dumps(steps))
    process, port = start_portfile_server([PYTHON, str(MODEL_SERVER), str(portfile), str(script), str(record)],
                                          portfile)
    return process, f"http://127.0.0.1:{port}/v1"


def write_home(root: Path, url: str, tools: int) -> Home:
    home = Home(root)
    server = {"command": PYTHON, "args": [str(BENCH / "tiny_server.py"), "--delay", "0", "--tools", str(tools)]}
    with home.config.open("w") as handle:
        YAML().dump({"model": {"base_url": url, "name": "bench"}, "mcp_servers": {"tiny": server}}, handle)
    return home


class Stopwatch(Provider):
    """The provider, noting when each reply arrived and when the next request left."""

    def __init__(self, inner: Provider) -> None:
        super().__init__(inner.settings, inner.redactor)
        self.replied = 0.0
        self.gaps: list[float] = []

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                       **options: Any) -> ModelReply:
        if self.replied:
            self.gaps.append(time.perf_counter() - self.replied)
        reply = await super().complete(messages, tools, **options)
        self.replied = time.perf_counter() if reply.tool_calls else 0.0
        return reply


async def per_turn(home: Home, url: str, turns: int) -> tuple[float, float]:
    import openai

    raw = openai.AsyncOpenAI(api_key="none", base_url=url, max_retries=0)
    hermes_times: list[float] = []
    raw_times: list[float] = []
    async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
        agent = chat.agent
        tools = agent.tool_definitions()
        messages = [agent.system, {"role": "user", "content": "hello"}]
        for _ in range(turns):
            started = time.perf_counter()
            await raw.chat.completions.create(model="bench", messages=messages, tools=tools)  # type: ignore[arg-type]
            raw_times.append(time.perf_counter() - started)
            agent.new_conversation()
            started = time.perf_counter()
            await agent.turn("hello")
            hermes_times.append(time.perf_counter() - started)
    await raw.close()
    return median(hermes_times), median(raw_times)


async def tool_step(home: Home, turns: int) -> tuple[float, float]:
    # The one-shot activity lines are written (their cost counts) but kept off the report.
    with contextlib.redirect_stderr(io.StringIO()):
        gaps = await _hermes_tool_steps(home, turns)
    server = StdioServerParameters(command=PYTHON, args=[str(BENCH / "tiny_server.py"), "--delay", "0"])
    raw: list[float] = []
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        for _ in range(turns):
            started = time.perf_counter()
            await client.call_tool("echo", {"text": "x"})
            raw.append(time.perf_counter() - started)
    return median(gaps), median(raw)


async def _hermes_tool_steps(home: Home, turns: int) -> list[float]:
    async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
        watch = Stopwatch(chat.agent.provider)
        chat.agent.provider = watch
        for _ in range(turns):
            chat.agent.new_conversation()
            await chat.agent.turn("echo something")
        await watch.close()
    return watch.gaps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    turns = parser.parse_args().turns
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="hermes-bench-chat-") as scratch:
        folder = Path(scratch)
        model, url = start_model(folder, [{"content": "ok"}])
        try:
            for tools in (10, 200):
                root = folder / f"home-{tools}"
                root.mkdir()
                ours, raw = anyio.run(per_turn, write_home(root, url, tools), url, turns)
                rows.append((f"turn, {tools} tools", f"hermes {ours * 1e3:6.2f} ms   bare openai {raw * 1e3:6.2f} ms"
                                                     f"   overhead {(ours - raw) * 1e3:5.2f} ms ({ours / raw:4.2f}x)"))
        finally:
            model.kill()
            model.wait()
        (folder / "record.jsonl").unlink(missing_ok=True)
        (folder / "port").unlink()
        model, url = start_model(folder, [{"tool_calls": [{"name": "mcp__tiny__echo", "arguments": {"text": "x"}}]},
                                          {"content": "ok"}] * (turns + 1))
        try:
            root = folder / "home-step"
            root.mkdir()
            step, raw = anyio.run(tool_step, write_home(root, url, 10), turns)
            rows.append(("tool call -> result sent", f"hermes {step * 1e3:6.2f} ms   raw call_tool {raw * 1e3:6.2f} ms"
                                                      f"   ratio {step / raw:4.2f}x"))
        finally:
            model.kill()
            model.wait()
    report(f"hermes chat overhead (median of {turns})", rows)


if __name__ == "__main__":
    main()
