"""The demo's stand-in for a model: an OpenAI-compatible endpoint on loopback that follows a script.

It is not a language model and the demo says so. Asked anything, it calls the one tool it was
told about; given that tool's result, it answers with it. That is enough to run the real agent
loop end to end (the `openai` client, the tool loop, the MCP call to the app) without a network,
an account, or a model download.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

LABEL = "scripted stand-in model (not a language model: it calls {tool} and repeats what the tool says)"


def stand_in_model(tool: str) -> Starlette:
    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "tool":
            message: dict[str, Any] = {"role": "assistant",
                                       "content": f"According to the app, your scene has {last.get('content')}."}
            finish = "stop"
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_scene", "type": "function", "function": {"name": tool, "arguments": json.dumps({})}}]}
            finish = "tool_calls"
        return JSONResponse({"id": "chatcmpl-demo", "object": "chat.completion", "created": 0,
                             "model": "demo-stand-in", "choices": [{"index": 0, "message": message,
                                                                    "finish_reason": finish}]})

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
