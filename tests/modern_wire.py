"""A 2026-07-28 client written on the wire, for what the SDK's client does not speak: the Tasks
extension's methods (`tasks/get`, `tasks/update`, `tasks/cancel`) and the tool calls that answer
with a task. Every request carries its envelope (`_meta`: protocol version, client info and
capabilities) and the routing headers (`Mcp-Method`, `Mcp-Name`), as the revision asks."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2

from tests.support import PATIENCE

TASKS = "io.modelcontextprotocol/tasks"
VERSION = "2026-07-28"


class WireError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.data = error.get("data")


class ModernClient:
    def __init__(self, url: str, http: httpx2.AsyncClient, *, tasks: bool = True, elicitation: bool = True) -> None:
        self.url = url
        self.http = http
        capabilities: dict[str, Any] = {"extensions": {TASKS: {}}} if tasks else {}
        if elicitation:
            capabilities["elicitation"] = {"form": {}}
        self.capabilities = capabilities
        self._ids = 0

    async def request(self, method: str, params: dict[str, Any], *, name: str | None = None) -> dict[str, Any]:
        """The request's result; a JSON-RPC error raises `WireError`."""
        self._ids += 1
        meta = {"io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": self.capabilities}
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": {**params, "_meta": meta}}
        headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": method,
                   "Accept": "application/json, text/event-stream"}
        routed = name if name is not None else params.get("name", params.get("taskId"))
        if isinstance(routed, str) and routed:  # `name=""`: the header left out
            headers["Mcp-Name"] = routed
        response = await self.http.post(self.url, json=body, headers=headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            # The answer is the stream's last message (notifications may come before it).
            text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()][-1]
        answer = json.loads(text)
        if "error" in answer:
            raise WireError(answer["error"])
        result: dict[str, Any] = answer["result"]
        return result

    async def task(self, task_id: str) -> dict[str, Any]:
        return await self.request("tasks/get", {"taskId": task_id})

    async def until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        """Poll the task (as a client does, at a short interval) until it has one of `statuses`."""
        with anyio.fail_after(PATIENCE):
            while True:
                found = await self.task(task_id)
                if found["status"] in statuses:
                    return found
                await anyio.sleep(0.05)
