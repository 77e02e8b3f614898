"""A minimal stdio MCP server for benchmarks: it sleeps `--delay` seconds, then answers.

Deliberately free of the SDK so that twenty of them start on two cores without the import cost of
twenty SDKs drowning what the benchmark measures: how hermes overlaps their start-up.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--delay", type=float, default=0.5)
parser.add_argument("--tools", type=int, default=1, help="how many echo tools to offer (echo, echo_1, ...)")
options = parser.parse_args()
time.sleep(options.delay)

TOOLS = [{"name": "echo" if index == 0 else f"echo_{index}", "description": f"Echo the text back (copy {index}).",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "what to echo"}}}}
         for index in range(options.tools)]


def answer(request: dict[str, object]) -> dict[str, object] | None:
    method = request.get("method")
    if "id" not in request:
        return None
    if method == "initialize":
        params = request.get("params") or {}
        version = params.get("protocolVersion", "2025-06-18") if isinstance(params, dict) else "2025-06-18"
        result: object = {"protocolVersion": version, "capabilities": {"tools": {}},
                          "serverInfo": {"name": "tiny", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        params = request.get("params") or {}
        text = params.get("arguments", {}).get("text", "") if isinstance(params, dict) else ""
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


for line in sys.stdin:
    if not line.strip():
        continue
    reply = answer(json.loads(line))
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
