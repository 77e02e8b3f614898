"""An OpenAI-compatible Chat Completions server for the tests: scripted replies, every request recorded.

Usage: model_server.py PORTFILE SCRIPT RECORD
SCRIPT is a JSON list of steps, one per request, in order (the last one repeats):
  {"content": "text"}                                  a plain answer
  {"tool_calls": [{"name": N, "arguments": {...} | "raw text", "id": "..."}], "content": "optional"}
  {"answer_from_tool": true, "prefix": "..."}          answer with the last tool result in the request
  {"status": 429, "headers": {...}, "message": "..."}  an error answer (JSON error body)
  {"hang": true}                                       never answer (for timeouts)
  {"usage": {...}}                                     (with any answer) the usage to report
RECORD gets one JSON line per request: the request body as received, and its Authorization header.
Streaming (`stream: true`) sends the answer in several chunks, tool calls split across chunks too.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

portfile, script_path, record_path = sys.argv[1:4]
with open(script_path) as handle:
    SCRIPT: list[dict[str, Any]] = json.load(handle)
served = 0


def _last_tool_result(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return str(message.get("content"))
    return "(no tool result)"


def _tool_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
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


async def completions(request: Request) -> Response:
    global served
    body = await request.json()
    with open(record_path, "a") as record:
        record.write(json.dumps({"body": body, "authorization": request.headers.get("authorization")}) + "\n")
    step = SCRIPT[min(served, len(SCRIPT) - 1)]
    served += 1
    if step.get("hang"):
        await asyncio.Event().wait()
    if "status" in step:
        return JSONResponse({"error": {"message": step.get("message", "scripted error"), "type": "test"}},
                            status_code=step["status"], headers=step.get("headers"))
    content = step.get("content")
    if step.get("answer_from_tool"):
        content = step.get("prefix", "") + _last_tool_result(body)
    calls = _tool_calls(step)
    finish = "tool_calls" if calls else "stop"
    usage = step.get("usage", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    model = body.get("model", "test-model")
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return JSONResponse({"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})

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


async def main() -> None:
    sock = socket.socket()
    # Answers go out in two writes (head, body): without this, Nagle holds the body back for the
    # client's delayed ACK, and every answer takes 40 ms more than it should.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    task = asyncio.create_task(server.serve([sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    with open(portfile + ".tmp", "w") as handle:
        handle.write(str(sock.getsockname()[1]))
    os.replace(portfile + ".tmp", portfile)
    await task


if __name__ == "__main__":
    asyncio.run(main())
