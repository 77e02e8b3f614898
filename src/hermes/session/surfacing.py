"""The session's tool surface as a model sees it, kept current: built from the connected servers'
snapshots after every change, with what is held back (changed tool definitions), the deferred
catalog and `tool_search`, and the listeners that hear when anything a model sees has changed.

Rebuilt lazily (linear in the number of tools). A server's changed tools are looked up once per
change of that server (`tools.pins`), never per request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from hermes.background import Job, run_inline
from hermes.config.agent_settings import Approval, Permissions
from hermes.config.model import ServerConfig
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.session.known_tools import KnownToolCounts
from hermes.session.roster import Roster
from hermes.tools import meaning_model
from hermes.tools.deferred import HiddenServer, SearchIndex, catalog_text
from hermes.tools.filters import unmatched_filter_entries
from hermes.tools.permissions import Permission, Verdict, unmatched_rules, verdict
from hermes.tools.pins import ChangedTool, PinPolicy, PinRecords, PinStore
from hermes.tools.surface import ServerTools, Surface, SurfaceTool, build_surface, server_entries
from hermes.tools.vectors import Recent, VectorFile

_NO_APPROVAL = Approval()


def server_tools(snapshot: ConnectionSnapshot, config: ServerConfig, held: Iterable[str] = ()) -> ServerTools:
    caps = snapshot.capabilities
    return ServerTools(snapshot.name, config.tools, [t for t in snapshot.tools if t.name not in set(held)],
                       bool(caps and caps.resources), bool(caps and caps.prompts))


class ToolSurface:
    def __init__(self, roster: Roster, *, known_tools: Path, tool_pins: Path | PinRecords, tool_vectors: Path,
                 start: Callable[[Job], None] = run_inline) -> None:
        """The three files it keeps: tool counts per server, pinned definitions, tools' meaning
        vectors; `start` runs the encoding of those vectors (the session's `Background`)."""
        self._roster = roster
        self._vectors = tool_vectors
        self._start = start
        self._recent = Recent()
        self._known = KnownToolCounts(known_tools)
        self._pins = PinStore(tool_pins)
        self._changed_tools: dict[str, list[ChangedTool]] = {}
        self._include_warnings: dict[str, list[str]] = {}
        self._surface: Surface | None = None
        self._search: SearchIndex | None = None
        self._listeners: list[Callable[[], None]] = []
        # Every call asks for a verdict; it changes only with the tool, its server's approval or the
        # permissions (all immutable, replaced on a reload), so the last one is kept per name and kind.
        self._verdicts: dict[tuple[str, bool], tuple[SurfaceTool, Approval, Permissions, Verdict]] = {}

    def listen(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def changed(self, server: str | None) -> None:
        """A connection changed state or tools: rebuild the surface; tell listeners if it differs."""
        before = self._surface
        self._surface = None
        self._search = None
        self._verdicts.clear()
        # One server changed, or (None) the set did (a start, a reload): look again at what changed
        # since, pins accepted in another process included.
        for name in [server] if server is not None else list(self._roster.snapshots()):
            self._look_at(name)
        if before is not None and self._listeners and before.same_as(self.current()):
            return  # a server started connecting, say: nothing a model sees has changed
        for listener in self._listeners:
            listener()

    def _look_at(self, server: str) -> None:
        connection = self._roster.supervisor(server)
        config = self._roster.server_config(server)
        if connection is None or config is None or not connection.snapshot.offers_tools:
            return
        snapshot = connection.snapshot
        self._changed_tools[server] = [] if config.pin is PinPolicy.OFF else self._pins.check(server, snapshot.tools)
        offered = [t.name for t in snapshot.tools]
        self._include_warnings[server] = unmatched_filter_entries(server, config.tools, offered)
        entries = server_entries(server_tools(snapshot, config))
        self._known.remember(server, [t.name for t in entries])

    def _held(self, server: str, config: ServerConfig) -> set[str]:
        if config.pin is not PinPolicy.BLOCK:
            return set()
        return {changed.tool for changed in self._changed_tools.get(server, ())}

    def current(self) -> Surface:
        if self._surface is None:
            allowed = self._roster.platform_servers()
            servers = []
            for name, snapshot in self._roster.snapshots().items():
                config = self._roster.server_config(name)
                if name in allowed and snapshot.offers_tools and config is not None:
                    servers.append(server_tools(snapshot, config, self._held(name, config)))
            self._surface = build_surface(servers, self._denied)
        return self._surface

    def verdict(self, tool: SurfaceTool, *, cautious: bool) -> Verdict:
        """Whether `tool` runs, asks or is denied (`hermes.tools.permissions`); `cautious`: a model chose it."""
        config = self._roster.server_config(tool.server)
        approval = config.approval if config is not None else _NO_APPROVAL
        rules = self._roster.permissions()
        kept = self._verdicts.get((tool.name, cautious))
        if kept is not None and kept[0] is tool and kept[1] is approval and kept[2] is rules:
            return kept[3]
        found = verdict(tool, approval, rules, cautious=cautious)
        self._verdicts[(tool.name, cautious)] = (tool, approval, rules, found)
        return found

    def _denied(self, tool: SurfaceTool) -> str | None:
        found = self.verdict(tool, cautious=False)
        return f"denied by {found.because}" if found.permission is Permission.DENY else None

    def changed_tools(self) -> list[ChangedTool]:
        """Tools of connected servers on this platform whose definitions differ from their pins."""
        allowed = self._roster.platform_servers()
        snapshots = self._roster.snapshots()
        return [changed for server, found in sorted(self._changed_tools.items())
                if server in allowed and server in snapshots and snapshots[server].offers_tools for changed in found]

    def accept(self, server: str, names: Iterable[str] | None = None) -> list[str]:
        """Accept the current definitions of these tools of `server` (all changed ones when None)."""
        snapshot = self._roster.snapshots().get(server)
        if snapshot is None or not snapshot.offers_tools:
            return []
        accepted = self._pins.approve(server, snapshot.tools, names)
        self.changed(server)
        return accepted

    def warnings(self) -> list[str]:
        """What the connected servers' own tool lists say about the configuration (an include entry,
        or a permission rule, that matches nothing)."""
        found = [w for _, found in sorted(self._include_warnings.items()) for w in found]
        roster = self._roster
        offered: dict[str, list[SurfaceTool]] = {}
        approvals: dict[str, Approval] = {}
        for name, snapshot in roster.snapshots().items():
            config = roster.server_config(name)
            if snapshot.offers_tools and config is not None:
                offered[name] = list(server_entries(server_tools(snapshot, config)))
                approvals[name] = config.approval
        return found + unmatched_rules(roster.permissions(), approvals, offered)

    def known_counts(self) -> dict[str, int]:
        """How many tools each server offered when it was last connected (in this or an earlier session)."""
        return dict(self._known.counts)

    def hidden_servers(self) -> list[HiddenServer]:
        """Declared servers on this platform whose tools are all hidden, with the reason."""
        roster = self._roster
        allowed = roster.platform_servers()
        hidden = []
        for name, snapshot in roster.snapshots().items():
            if name in allowed and not snapshot.offers_tools and roster.app_bound(name):
                hidden.append(HiddenServer(name, self._known.counts.get(name), roster.why(name).sentence))
        return hidden

    def catalog(self) -> str:
        """The deferred-tool catalog text (byte-stable for the same state). A model that reads it
        will search next, so the tools' meaning starts encoding now, not at its first search."""
        self.search_index()
        return catalog_text(self.current(), self.hidden_servers())

    def search_index(self) -> SearchIndex:
        """The current surface's index; creating it starts encoding its tools' meaning (a background job)."""
        surface = self.current()
        if self._search is None or self._search.surface is not surface:
            cache = VectorFile(self._vectors)
            self._search = SearchIndex(surface, meaning_model.load if meaning_model.available() else None, cache,
                                       start=self._start, recent=self._recent)
        return self._search

    async def search(self, query: str) -> tuple[list[SurfaceTool], str]:
        return await self.search_index().search(self.hidden_servers(), query)
