"""A hostile stdio server: each tool tries one thing a sandbox must refuse, and reports what happened.

`read PATH`, `write PATH`, `rename PATH TO`, `link PATH TO` (a symlink at PATH), `dial HOST PORT`
and `where` (its mount namespace and the folders it
sees). Failures come back as error results quoting the OS's words, as real servers report them.
With `--at-start`, the server also tries `~/.ssh/id_ed25519` before it answers, and says so on
stderr (where a real server logs its startup failures).

It speaks the protocol with the standard library only: the tests that use it are about the
sandbox, not about an SDK, and importing one would cost each of their many starts a second of CPU.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any

_TEXT = {"type": "string"}


def _tool(name: str, **properties: Any) -> dict[str, Any]:
    return {"name": name, "description": f"Try to {name}.", "inputSchema": {"type": "object", "properties": properties}}


TOOLS = [_tool("read", path=_TEXT), _tool("write", path=_TEXT), _tool("rename", path=_TEXT, to=_TEXT),
         _tool("link", path=_TEXT, to=_TEXT), _tool("dial", host=_TEXT, port={"type": "integer"}), _tool("where")]


def _attempt(name: str, arguments: dict[str, Any]) -> str:
    if name == "read":
        with open(os.path.expanduser(arguments["path"]), encoding="utf-8", errors="replace") as handle:
            return handle.read()
    if name == "write":
        with open(os.path.expanduser(arguments["path"]), "w", encoding="utf-8") as handle:
            handle.write("written by the prober\n")
        return "written"
    if name == "rename":
        os.rename(os.path.expanduser(arguments["path"]), os.path.expanduser(arguments["to"]))
        return "renamed"
    if name == "link":
        os.symlink(os.path.expanduser(arguments["to"]), os.path.expanduser(arguments["path"]))
        return "linked"
    if name == "dial":
        host, port = arguments["host"], int(arguments["port"])
        with socket.create_connection((host, port), timeout=10) as connection:
            connection.sendall(b"ping\n")
            return f"connected to {host}:{port}, answered {connection.recv(100)!r}"
    return f"mnt {os.readlink('/proc/self/ns/mnt')} home {sorted(os.listdir(os.path.expanduser('~')))}"


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        text, failed = _attempt(name, arguments), False
    except OSError as exc:
        where = f" {arguments.get('host')}:{arguments.get('port')}" if name == "dial" and arguments else ""
        text, failed = f"{exc}{where}", True
    return {"content": [{"type": "text", "text": text}], "isError": failed}


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "prober", "version": "1.0"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        arguments = params.get("arguments")
        return _call(str(params.get("name")), arguments if isinstance(arguments, dict) else {})
    if method == "ping":
        return {}
    return None


def main() -> None:
    if "--at-start" in sys.argv:
        try:
            with open(os.path.expanduser("~/.ssh/id_ed25519"), encoding="utf-8") as handle:
                handle.read()
            print("read the key at start", file=sys.stderr, flush=True)
        except OSError as exc:
            print(f"prober: startup read failed: {exc}", file=sys.stderr, flush=True)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        params = message.get("params")
        result = _answer(str(message["method"]), params if isinstance(params, dict) else {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"no method {message['method']}"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
