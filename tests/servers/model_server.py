"""An OpenAI-compatible Chat Completions server for the tests: scripted replies, every request recorded.

Usage: `serve_in_thread(SCRIPT, RECORD)` in a test's own process (what the suite does: a server of
its own costs a process start and the imports of uvicorn and Starlette, 0.16 s of CPU, and the agent
tests start over a hundred), or `model_server.py PORTFILE SCRIPT RECORD` as a process.
SCRIPT is a JSON list of steps, one per request, in order (the last one repeats), or an object
{"steps": [...], "alternation": true, "cache": true, "models": [...]} ("models": what GET /v1/models lists):
  {"content": "text"}                                  a plain answer
  {"tool_calls": [{"name": N, "arguments": {...} | "raw text", "id": "..."}], "content": "optional"}
  {"answer_from_tool": true, "prefix": "..."}          answer with the last tool result in the request
  {"status": 429, "headers": {...}, "message": "..."}  an error answer (JSON error body)
  {"hang": true}                                       never answer (for timeouts)
  {"usage": {...}}                                     (with any answer) the usage to report
  {"finish_reason": "length"}                          (with any answer) how it ended
  {"raw": "..."}                                       this exact body (hostile or broken answers)
  {"raw_stream": ["data: ...", ...]}                   these exact event-stream lines
  {"endless": true}                                    an answer that never ends (streamed or one body)
RECORD gets one JSON line per request: the request body as received, and its Authorization header.
Streaming (`stream: true`) sends the answer in several chunks, tool calls split across chunks too.

As strict as llama.cpp's server, measured: a request whose history holds tool-call arguments that
are not JSON gets 500 "Failed to parse tool call arguments as JSON"; with "alternation" (Mistral's
template), roles that do not alternate user/assistant, or tool-call ids that are not nine letters
and digits, get 400. With "cache", usage reports the prompt tokens a prefix cache would have kept
(`prompt_tokens_details.cached_tokens`, four characters a token), as providers do.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

_ID = re.compile(r"[A-Za-z0-9]{9}")


def _refusal(body: dict[str, Any], alternation: bool) -> tuple[int, str] | None:
    """What llama.cpp's server (and a strict template) would refuse in this history, if anything."""
    messages = body.get("messages", [])
    for message in messages:
        for call in message.get("tool_calls") or []:
            arguments = call.get("function", {}).get("arguments")
            try:
                json.loads(arguments) if isinstance(arguments, str) and arguments else None
                if not isinstance(arguments, str) or not arguments:
                    raise ValueError("empty")
            except ValueError:
                return 500, "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] " \
                            "parse error: syntax error while parsing object"
    if not alternation:
        return None
    # Mistral-Nemo's template (shipped with llama.cpp): tool results and tool-calling assistant
    # messages aside, the roles alternate, starting with the user; every tool-call id is nine
    # characters.
    counted = [m for m in messages if m.get("role") not in ("system", "tool") and not m.get("tool_calls")]
    for index, message in enumerate(counted):
        if (message.get("role") == "user") != (index % 2 == 0):
            return 400, "After the optional system message, conversation roles must alternate " \
                        "user/assistant/user/assistant/..."
    for message in messages:
        ids = [c.get("id") for c in message.get("tool_calls") or []]
        if message.get("role") == "tool":
            ids.append(message.get("tool_call_id"))
        if any(not _ID.fullmatch(str(i or "")) for i in ids):
            return 400, "Tool call IDs should be alphanumeric strings with length 9!"
    return None


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters two prompts share (a binary search over slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _cached_usage(body: dict[str, Any], usage: dict[str, Any], recent_prompts: dict[str, list[str]]
                  ) -> dict[str, Any]:
    """Usage as a provider with a prefix cache reports it: the longest start of this prompt that one
    of this model's recent prompts shared (tools come first in a rendered prompt, then messages)."""
    prompt = json.dumps(body.get("tools"), sort_keys=True) + \
        "".join(json.dumps(m, sort_keys=True) for m in body.get("messages", []))
    cache = recent_prompts.setdefault(str(body.get("model")), [])
    shared = max((_common_prefix(prompt, old) for old in cache), default=0)
    cache.append(prompt)
    del cache[:-8]
    return {**usage, "prompt_tokens": len(prompt) // 4,
            "prompt_tokens_details": {"cached_tokens": shared // 4}}


def _last_tool_result(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return str(message.get("content"))
    return "(no tool result)"


def _tool_calls(step: dict[str, Any], served: int) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(step.get("tool_calls", [])):
        arguments = call.get("arguments", {})
        calls.append({"id": call.get("id", f"call_{served}_{index}"), "type": "function",
                      "function": {"name": call["name"],
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    return calls


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> str:
    data = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
            "usage": usage}
    return f"data: {json.dumps(data)}\n\n"


class Replies:
    """One scripted model: its steps, how many requests it has answered, what it recorded."""

    def __init__(self, script: Path, record: Path) -> None:
        loaded: Any = json.loads(script.read_text())
        self.options: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
        self.steps: list[dict[str, Any]] = loaded["steps"] if isinstance(loaded, dict) else loaded
        self.record = record
        self.served = 0
        self.recent_prompts: dict[str, list[str]] = {}  # per model, as a provider's prefix cache keeps them

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.completions, methods=["POST"]),
                                 Route("/v1/models", self.models)])

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        with open(self.record, "a") as record:
            record.write(json.dumps({"body": body, "authorization": request.headers.get("authorization")}) + "\n")
        step = self.steps[min(self.served, len(self.steps) - 1)]
        self.served += 1
        refused = _refusal(body, bool(self.options.get("alternation")))
        if refused is not None:
            status, text = refused
            kind = "server_error" if status >= 500 else "invalid_request_error"
            return JSONResponse({"error": {"code": status, "message": text, "type": kind}}, status_code=status)
        if step.get("hang"):
            await asyncio.Event().wait()
        if "raw" in step:
            return Response(step["raw"], media_type="application/json")
        if "raw_stream" in step:
            async def lines() -> Any:
                for line in step["raw_stream"]:
                    yield line + "\n\n"
            return StreamingResponse(lines(), media_type="text/event-stream")
        if step.get("endless"):
            async def forever() -> Any:
                if body.get("stream"):
                    yield _chunk(body.get("model", "m"), {"role": "assistant", "content": ""})
                    while True:
                        yield _chunk(body.get("model", "m"), {"content": "and on " * 2000})
                        await asyncio.sleep(0)  # so the server notices when the client gives up
                yield '{"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "'
                while True:
                    yield "and on " * 100_000
                    await asyncio.sleep(0)
            return StreamingResponse(forever(), media_type="text/event-stream" if body.get("stream")
                                     else "application/json")
        if "status" in step:
            return JSONResponse({"error": {"message": step.get("message", "scripted error"), "type": "test"}},
                                status_code=step["status"], headers=step.get("headers"))
        content = step.get("content")
        if step.get("answer_from_tool"):
            content = step.get("prefix", "") + _last_tool_result(body)
        calls = _tool_calls(step, self.served)
        finish = step.get("finish_reason") or ("tool_calls" if calls else "stop")
        usage = step.get("usage", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
        if self.options.get("cache"):
            usage = _cached_usage(body, usage, self.recent_prompts)
        model = body.get("model", "test-model")
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            return JSONResponse({"id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                                 "model": model, "usage": usage,
                                 "choices": [{"index": 0, "message": message, "finish_reason": finish}]})

        async def stream() -> Any:
            yield _chunk(model, {"role": "assistant", "content": ""})
            text = content or ""
            piece = max(1, -(-len(text) // 3))  # three pieces, the way a model writes
            for start in range(0, len(text), piece):
                yield _chunk(model, {"content": text[start:start + piece]})
            for index, call in enumerate(calls):
                arguments = call["function"]["arguments"]
                half = len(arguments) // 2
                yield _chunk(model, {"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                                     "function": {"name": call["function"]["name"],
                                                                  "arguments": arguments[:half]}}]})
                yield _chunk(model, {"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
            yield _chunk(model, {}, finish)
            if (body.get("stream_options") or {}).get("include_usage"):
                yield _chunk(model, {}, usage=usage)
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")


    async def models(self, request: Request) -> Response:
        """`GET /v1/models`: the script's "models" (default one, "scripted"), as escaped JSON (a hostile
        name such as a lone surrogate goes out as its `\\ud800` escape, as a real server may send it)."""
        names = self.options.get("models", ["scripted"])
        body = {"object": "list",
                "data": [{"id": n, "object": "model", "created": 0, "owned_by": "tests"} for n in names]}
        return Response(json.dumps(body), media_type="application/json")



def _listening_socket() -> socket.socket:
    sock = socket.socket()
    # Answers go out in two writes (head, body): without this, Nagle holds the body back for the
    # client's delayed ACK, and every answer takes 40 ms more than it should.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


def serve_in_thread(script: Path, record: Path) -> tuple[int, Callable[[], None]]:
    """The model on a loopback port, served by a thread of the calling process: (its port, a way to
    stop it). The socket listens before this returns, so a client may connect at once (the kernel
    holds the connection until the server accepts it). Stopping drops whatever a request was still
    doing (a `hang`, an `endless` answer)."""
    sock = _listening_socket()
    # No lifespan task (stopping at once would cancel it, and uvicorn logs that as an error) and no
    # logging set up: uvicorn's own would point the whole test process's handlers at this moment's
    # stderr.
    # A request still in progress at the stop (a `hang`) must not hold it: from Python 3.12.1 the
    # listener's close waits for every connection, unless the graceful shutdown has a bound.
    config = uvicorn.Config(Replies(script, record).app(), lifespan="off", log_config=None, log_level=None,
                            timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=asyncio.run, args=(server.serve([sock]),), name="scripted-model", daemon=True)
    thread.start()

    def stop() -> None:
        server.should_exit = server.force_exit = True
        thread.join(timeout=30)  # a daemon thread: one that never ends cannot keep the test process alive
        sock.close()

    return int(sock.getsockname()[1]), stop


async def main(portfile: str, script: str, record: str) -> None:
    sock = _listening_socket()
    server = uvicorn.Server(uvicorn.Config(Replies(Path(script), Path(record)).app(), log_level="warning"))
    task = asyncio.create_task(server.serve([sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    with open(portfile + ".tmp", "w") as handle:
        handle.write(str(sock.getsockname()[1]))
    os.replace(portfile + ".tmp", portfile)
    await task


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
