"""Tool-definition pinning: a server cannot change what a tool says it does behind the user's back.

The first time hermes uses a server's tools, it records each tool's canonical definition (name,
description, input schema, annotations) and its hash, in `HERMES_HOME/tool-pins.json`. Later, a
tool whose definition differs from its pin, or a new tool while a pinned one is gone (a rename
is a removal and an addition), is a *changed* tool: with the server's `pin: block` (the default) it is held back
from the model until the user accepts it (`hermes tools approve SERVER [TOOL]`, or the question in
interactive chat); with `pin: warn` it stays, with a warning; `pin: off` records nothing. A tool
that is only added (every pinned tool still there) is pinned at first sight: servers add tools as
they go, and offer more to a client with more capabilities.

Canonical means what does not change meaning does not count: key order anywhere, the order of the
`required` list, whitespace in the description. A tool that disappears is no risk and needs no
approval; its pin stays, so it cannot come back changed unnoticed.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import mcp_types as types

from hermes.config.model import PinPolicy
from hermes.files import atomic_write, file_lock, read_json_object

__all__ = ["ChangedTool", "PinFile", "PinPolicy", "PinRecords", "PinStore", "Pinned", "canonical", "digest",
           "pinned_servers"]

_LIMIT = 16 * 1024 * 1024


def _normalized(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _normalized(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        items = [_normalized(v) for v in value]
        if key == "required" and all(isinstance(v, str) for v in items):
            return sorted(items)
        return items
    return value


def canonical(tool: types.Tool) -> dict[str, Any]:
    """What a pin holds of a definition: the parts that say what the tool does, in one spelling."""
    annotations = tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True) \
        if tool.annotations is not None else {}
    description = " ".join((tool.description or "").split())
    normalized: dict[str, Any] = _normalized({"name": tool.name, "description": description,
                                              "inputSchema": tool.input_schema or {}, "annotations": annotations})
    return normalized


def digest(definition: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(definition, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _pretty(definition: dict[str, Any] | None) -> list[str]:
    return json.dumps(definition, indent=2, sort_keys=True, ensure_ascii=False).splitlines() if definition else []


@dataclass(frozen=True)
class ChangedTool:
    server: str
    tool: str
    before: dict[str, Any] | None  # None: a tool that was not there when the server was pinned
    after: dict[str, Any]

    @property
    def new(self) -> bool:
        return self.before is None

    def diff(self) -> str:
        """A unified diff of the canonical definitions, as the user reads it."""
        lines = difflib.unified_diff(_pretty(self.before), _pretty(self.after), "pinned", "now", lineterm="")
        return "\n".join(lines)

    def sentence(self) -> str:
        what = "is new since the server was first used" if self.new else "changed its definition since it was pinned"
        return (f"Tool '{self.tool}' of MCP server '{self.server}' {what}; hermes holds it back until you accept it: "
                f"run `hermes tools approve {self.server} {self.tool}` (or answer the question in `hermes chat`).")

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "tool": self.tool, "new": self.new, "diff": self.diff(),
                "approve": f"hermes tools approve {self.server} {self.tool}"}


Pinned = dict[str, dict[str, dict[str, Any]]]  # server -> tool -> canonical definition


class PinRecords(Protocol):
    """Where the pins live: HERMES_HOME's file (`PinFile`), or a team user's record in the team's
    database. Reads answer at once; `locked()` keeps two writers from losing each other's pins."""

    def load(self) -> Pinned: ...

    def save(self, servers: Pinned) -> None: ...

    def locked(self) -> contextlib.AbstractContextManager[object]: ...


class PinFile:
    """The pins of one HERMES_HOME. Reads are cached by the file's modification; writes are locked."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: tuple[float, Pinned] | None = None

    def load(self) -> Pinned:
        try:
            stamp = self.path.stat().st_mtime
        except OSError:
            return {}
        if self._cache is not None and self._cache[0] == stamp:
            return self._cache[1]
        data = read_json_object(self.path, _LIMIT, follow_symlinks=False) or {}
        servers = pinned_servers(data)
        self._cache = (stamp, servers)
        return servers

    def save(self, servers: Pinned) -> None:
        with contextlib.suppress(OSError):  # pins that cannot be saved are asked for again next time
            atomic_write(self.path, json.dumps({"schema": 1, "servers": servers}, sort_keys=True,
                                               ensure_ascii=False) + "\n")
        self._cache = None

    def locked(self) -> contextlib.AbstractContextManager[object]:
        return file_lock(self.path)


def pinned_servers(data: Any) -> Pinned:
    """The pins in a pins document (`{"schema": 1, "servers": …}`), whatever else it holds."""
    servers = data.get("servers") if isinstance(data, dict) else None
    return {server: {name: d for name, d in tools.items() if isinstance(d, dict)}
            for server, tools in servers.items() if isinstance(tools, dict)} if isinstance(servers, dict) else {}


class PinStore:
    """Checks and accepts tools against their pins, wherever the pins live."""

    def __init__(self, records: PinRecords | Path) -> None:
        self._records = PinFile(records) if isinstance(records, Path) else records

    def _load(self) -> Pinned:
        return self._records.load()

    def _save(self, servers: Pinned) -> None:
        self._records.save(servers)

    def check(self, server: str, tools: Iterable[types.Tool]) -> list[ChangedTool]:
        """The tools of `server` that differ from their pins.

        A server seen for the first time is pinned now, whole. A tool added later while every
        pinned tool is still there is an addition (servers add tools as they go, or for a client
        with more capabilities): it is pinned at first sight. A new tool while a pinned one is
        gone may be that one renamed, and counts as changed.
        """
        current = {tool.name: canonical(tool) for tool in tools}
        pinned = self._load().get(server)
        added = set(current) - set(pinned or {})
        if pinned is None or (added and set(pinned) <= set(current)):
            with self._records.locked():
                servers = dict(self._load())
                known = dict(servers.get(server, {}))
                if server not in servers or set(known) <= set(current):
                    known.update({name: current[name] for name in set(current) - set(known)})
                    servers[server] = known
                    self._save(servers)
                pinned = known
        return [ChangedTool(server, name, pinned.get(name), definition) for name, definition in sorted(current.items())
                if pinned.get(name) is None or digest(pinned[name]) != digest(definition)]

    def approve(self, server: str, tools: Iterable[types.Tool], names: Iterable[str] | None = None) -> list[str]:
        """Accept the current definitions of these tools of `server` (all when `names` is None);
        returns the names that were changed and are now pinned anew."""
        current = {tool.name: canonical(tool) for tool in tools}
        wanted = set(current) if names is None else set(names)
        with self._records.locked():
            servers = dict(self._load())
            pinned = dict(servers.get(server, {}))
            accepted = sorted(name for name in wanted & set(current)
                              if pinned.get(name) is None or digest(pinned[name]) != digest(current[name]))
            for name in accepted:
                pinned[name] = current[name]
            servers[server] = pinned
            self._save(servers)
        return accepted
