#!/usr/bin/env python3
"""A stand-in for Blender with its MCP add-on: what the real `blender-mcp` bridge talks to.

It listens on a loopback port it picks at each start, answers the add-on's commands (raw JSON
objects on a TCP connection, one reply per command), and publishes its endpoint the way an app that
adopted hermes's contract does: a runtime file with its pid, URL and a fresh token, removed when it
stops. `--runtime-file PATH` says where.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import sys
import threading
from typing import Any

parser = argparse.ArgumentParser()
parser.add_argument("--runtime-file", required=True)
options = parser.parse_args()

SCENE = {"name": "Scene", "object_count": 3,
         "objects": [{"name": "Camera", "type": "CAMERA"}, {"name": "Cube", "type": "MESH"},
                     {"name": "Light", "type": "LIGHT"}]}


def answer(command: dict[str, Any]) -> dict[str, Any]:
    kind = command.get("type")
    if kind == "get_scene_info":
        return {"status": "success", "result": {**SCENE, "app_pid": os.getpid()}}
    if kind == "get_addon_info":
        return {"status": "success", "result": {"protocol_version": 15, "version": "stand-in"}}
    if kind == "get_telemetry_consent":
        return {"status": "success", "result": {"consent": False}}
    if isinstance(kind, str) and kind.startswith("get_") and kind.endswith("_status"):
        return {"status": "success", "result": {"enabled": False}}
    # execute_code included: the bridge then falls back to plain commands.
    return {"status": "error", "message": f"Unknown command type: {kind}"}


def serve(connection: socket.socket) -> None:
    buffer = b""
    with connection:
        while chunk := connection.recv(65536):
            buffer += chunk
            try:
                command = json.loads(buffer)
            except ValueError:
                continue  # a command may arrive in several pieces
            buffer = b""
            reply = answer(command if isinstance(command, dict) else {})
            connection.sendall(json.dumps(reply).encode())
            if reply["status"] == "error":
                return  # the bridge drops its connection after an error; so does the add-on


def publish(port: int) -> None:
    path = options.runtime_file
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = {"pid": os.getpid(), "http": f"http://127.0.0.1:{port}", "token": secrets.token_urlsafe(24)}
    with open(path + ".tmp", "w") as handle:
        json.dump(data, handle)
    os.chmod(path + ".tmp", 0o600)
    os.replace(path + ".tmp", path)


def unpublish(*_: object) -> None:
    try:
        with open(options.runtime_file) as handle:
            if json.load(handle).get("pid") == os.getpid():
                os.unlink(options.runtime_file)
    except (OSError, ValueError):
        pass
    sys.exit(0)


def main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    signal.signal(signal.SIGTERM, unpublish)
    publish(listener.getsockname()[1])
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


if __name__ == "__main__":
    main()
