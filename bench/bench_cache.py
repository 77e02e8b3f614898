"""How much of every prompt a provider's prefix cache can serve across a long chat session.

A 20-turn session with deferred tools (tool_search + call_tool) over eight servers, tool calls on
some turns, two
`/reload-mcp` (a server added, then removed) and a switch to another model half-way, against the
suite's scripted model in its cache mode: it reports, per request, the prompt tokens a prefix
cache keeping each model's recent prompts would have served (`prompt_tokens_details.cached_tokens`,
the field OpenAI, vLLM and llama.cpp fill). The baseline in the same run is the best a prefix
cache can do for the same conversation: everything but the new messages, and nothing on the first
request of each model. Goal: at least 95 % of prompt tokens served, and hermes at the best (a
ratio of 1.000: nothing it sends ever changes what was sent before).

    python -m bench.bench_cache [--turns 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
from ruamel.yaml import YAML

from bench.common import PYTHON, REPO, report
from hermes.agent.chat import ChatOptions, open_chat
from hermes.cli.chat_ui import OneShotUI
from hermes.home import Home
from tests.support import start_portfile_server

MODEL_SERVER = REPO / "tests" / "servers" / "model_server.py"
FAST = REPO / "tests" / "servers" / "fast.py"


def _steps(turns: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for turn in range(turns):
        if turn % 3 == 1:  # find a tool, run it, answer with what it said
            steps += [{"tool_calls": [{"name": "tool_search", "arguments": {"query": "weather"}}]},
                      {"tool_calls": [{"name": "call_tool", "arguments": {"name": "mcp__box__get_weather",
                                                                         "arguments": {"city": f"city {turn}"}}}]},
                      {"answer_from_tool": True}]
        else:
            steps.append({"content": f"answer {turn}: " + "words " * 40})
    return steps


def _config(home: Home, url: str, *, more: bool, servers_count: int = 8) -> None:
    # Eight servers of thirteen tools each: a deferred catalog of a realistic size in the prompt.
    servers: dict[str, Any] = {"box": {"command": PYTHON, "args": [str(FAST)]}}
    servers |= {f"service-{index}": {"command": PYTHON, "args": [str(FAST)]} for index in range(1, servers_count)}
    if more:
        servers["more"] = {"command": PYTHON, "args": [str(FAST), "--lean"]}
    with home.config.open("w") as handle:
        YAML().dump({"model": {"base_url": url, "name": "model-a", "deferred_tools": True},
                     "mcp_servers": servers}, handle)


async def _session(home: Home, url: str, turns: int) -> None:
    async with open_chat(home, ChatOptions(), OneShotUI()) as chat:
        for turn in range(turns):
            if turn in (turns // 3, 2 * turns // 3):
                _config(home, url, more=turn == turns // 3)
                await chat.reload()
            if turn == turns // 2:
                chat.agent.provider.settings = replace(chat.agent.provider.settings, name="model-b")
            await chat.agent.turn(f"question {turn}: what is the weather like in the city of turn {turn}?")


def _best(bodies: list[dict[str, Any]]) -> list[int]:
    """Per request, the most a prefix cache could serve: the previous request of the same model, whole."""
    best, last = [], {}
    for body in bodies:
        prompt = json.dumps(body.get("tools"), sort_keys=True) + \
            "".join(json.dumps(m, sort_keys=True) for m in body["messages"])
        before = last.get(body["model"], "")
        shared = len(before) if prompt.startswith(before) else 0
        best.append(shared // 4)
        last[body["model"]] = prompt
    return best


def main(turns: int) -> None:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-cache-") as scratch:
        folder = Path(scratch)
        script, record, portfile = folder / "script.json", folder / "record.jsonl", folder / "port"
        script.write_text(json.dumps({"steps": _steps(turns), "cache": True, "alternation": True}))
        process, port = start_portfile_server([PYTHON, str(MODEL_SERVER), str(portfile), str(script), str(record)],
                                              portfile)
        try:
            home = Home(folder / "home")
            home.ensure()
            url = f"http://127.0.0.1:{port}/v1"
            _config(home, url, more=False)
            with contextlib.redirect_stderr(io.StringIO()):  # the one-shot activity lines
                anyio.run(_session, home, url, turns)
        finally:
            process.kill()
            process.wait()
        bodies = [json.loads(line)["body"] for line in record.read_text().splitlines()]
    # The scripted model's own figures are what it sent back; recompute them the same way here.
    prompts, cached = [], []
    seen: dict[str, list[str]] = {}
    for body in bodies:
        prompt = json.dumps(body.get("tools"), sort_keys=True) + \
            "".join(json.dumps(m, sort_keys=True) for m in body["messages"])
        olds = seen.setdefault(body["model"], [])
        shared = max((len(_prefix(prompt, old)) for old in olds), default=0)
        olds.append(prompt)
        prompts.append(len(prompt) // 4)
        cached.append(shared // 4)
    best = _best(bodies)
    total, served, possible = sum(prompts), sum(cached), sum(best)
    rows = [("requests (20 turns, 2 reloads, 1 model switch)", str(len(bodies))),
            ("prompt tokens, all requests", str(total)),
            ("served from the prefix cache", f"{served} ({served / total:.1%}; goal >= 95 %)"),
            ("the most a prefix cache can serve (baseline)", f"{possible} ({possible / total:.1%})"),
            ("ratio to the baseline", f"{served / possible:.3f}")]
    misses = [f"{i}:{c}/{p}" for i, (c, p, b) in enumerate(zip(cached, prompts, best, strict=True)) if c < b]
    rows.append(("requests below the baseline", ", ".join(misses) or "none"))
    per_request = " ".join(f"{c}/{p}" for c, p in zip(cached, prompts, strict=True))
    rows.append(("per request, cached/prompt tokens", per_request))
    report("prompt cache across a session", rows)


def _prefix(a: str, b: str) -> str:
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return a[:low]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20)
    main(parser.parse_args().turns)
