"""What the dashboard's MCP menu shows, read from the running session and the config files.

Every configured server is a row (disabled, untrusted and shadowed ones too, as `hermes mcp list`
shows them); a server the session runs adds its live state, tool counts, sandbox and, when its
tools are not there, the exact sentence and user action a model would get. Values are the
configured text (`${VAR}` unresolved, URL secrets masked) passed through the session's redactor:
a page never shows what a log or a listing may not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes.config.model import ServerConfig
from hermes.config.store import ConfigStore
from hermes.files import read_tail
from hermes.mcp.snapshot import ConnectionSnapshot
from hermes.session.core import Session
from hermes.tools.filters import tool_allowed
from hermes.tools.naming import registered_name
from hermes.tools.permissions import Permission
from hermes.tools.utilities import PROMPT_UTILITIES, RESOURCE_UTILITIES, UTILITIES, UtilityKind
from hermes.tools.views import ui_resource

LOG_TAIL_BYTES = 16_000  # the end of a server's log the page shows; logs may be large


@dataclass(frozen=True)
class ServerRow:
    name: str
    scope: str
    source: str
    transport: str
    target: str
    enabled: bool
    configured: str  # enabled / disabled / untrusted
    state: str  # the live state, or the configured one when the session does not run it
    tools: int = 0  # of the server's own tools, how many the model gets
    tools_offered: int = 0
    added: int = 0  # the tools hermes adds for its resources and prompts, on the surface
    selection: str = "all"
    sandbox: str = ""
    why: str = ""
    user_action: str = ""
    app: str = ""
    restarts: int = 0
    connect_ms: float | None = None
    shadowed_by: str | None = None
    why_off: str | None = None
    editable: bool = True  # a plugin's server is switched with its plugin


@dataclass(frozen=True)
class ToolRow:
    original: str
    registered: str
    description: str
    selected: bool
    effective: str  # allow / ask / deny: what a model's call meets
    rule: str  # the permission written for this registered name, or "default"
    because: str = ""
    view: str | None = None  # the `ui://` view it declares (MCP Apps)
    added: bool = False  # one of the tools hermes adds for the server's resources and prompts


@dataclass
class Menu:
    servers: list[ServerRow] = field(default_factory=list)
    plugins: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def menu(session: Session, *, with_plugins: bool = True) -> Menu:
    """The MCP menu; reads files, so call it off the event loop. A server's own page leaves out
    the plugins (`with_plugins=False`): it refreshes on every change and shows none of them."""
    from hermes.cli.mcp_config_commands import list_rows
    from hermes.plugins.lifecycle import list_plugins

    clean = session.redactor
    rows, plugin_errors, _ = list_rows(session.home, ConfigStore(session.home).load())
    live = {status.name: status for status in session.status()}
    surface = session.surface()
    found = Menu(errors=[clean(e) for e in plugin_errors], warnings=[clean(w) for w in session.warnings])
    for row in rows:
        status = live.get(row["name"]) if row["shadowed_by"] is None else None
        unavailable = status.unavailable if status and status.unavailable else {}
        app = status.app if status and status.app else {}
        found.servers.append(ServerRow(
            name=row["name"], scope=row["scope"], source=clean(str(row["source"])), transport=row["transport"],
            target=clean(row["target"]), enabled=row["enabled"], configured=row["state"],
            state=status.state.value if status else row["state"],
            tools=sum(t.kind == "tool" for t in surface.for_server(row["name"])) if status else 0,
            added=sum(t.kind != "tool" for t in surface.for_server(row["name"])) if status else 0,
            tools_offered=status.tools_offered if status else 0,
            selection=clean(row["tools"]), sandbox=clean(status.sandbox) if status else "",
            why=clean(str(unavailable.get("error", ""))), user_action=clean(str(unavailable.get("user_action", ""))),
            app=str(app.get("name", "")), restarts=status.restarts if status else 0,
            connect_ms=status.connect_ms if status else None, shadowed_by=row["shadowed_by"],
            why_off=clean(row["why_off"]) if row["why_off"] else None,
            editable=row["scope"] in ("user", "project")))
    found.plugins = [plugin.to_json() for plugin in list_plugins(session.home, session.host)] if with_plugins else []
    for plugin in found.plugins:  # the app's state as this session sees it (running or not), not only installed
        for server in plugin.get("servers", []):
            status = live.get(server["name"])
            server["state"] = status.state.value if status is not None else server["availability"]
    return found


def tool_rows(session: Session, name: str) -> list[ToolRow]:
    """The tools `name` offers, whether the config selects each, and its permission."""
    snapshot = session.snapshots().get(name)
    config = session.server_config(name)
    if snapshot is None or config is None:
        return []
    surface = session.surface()
    denied = {skipped.name: skipped.why for skipped in surface.skipped if skipped.denied}
    written = _written_rules(session)
    rows: list[ToolRow] = []
    entries = [(tool.name, tool.description or "", ui_resource(tool), False) for tool in snapshot.tools]
    # The tools hermes adds for the server's resources and prompts are offered like its own: an
    # include list keeps only what it names, so the checklist must show them to keep them.
    entries += [(kind, UTILITIES[kind][0].format(server=name), None, True) for kind in utility_kinds(snapshot, config)]
    for original, description, view, added in entries:
        registered = registered_name(name, original)
        on_surface = surface.tools.get(registered)
        if registered in denied:
            effective, because = Permission.DENY.value, denied[registered]
        elif on_surface is not None:
            verdict = session.tools.verdict(on_surface, cautious=True)
            effective, because = verdict.permission.value, verdict.because
        else:
            effective, because = "", "not selected"
        rows.append(ToolRow(original, registered, session.redactor(description), tool_allowed(original, config.tools),
                            effective, written.get(registered, "default"), because, view, added))
    return rows


def utility_kinds(snapshot: ConnectionSnapshot, config: ServerConfig) -> list[UtilityKind]:
    """The tools hermes adds for this server: its resources' and its prompts' (when it has them and
    its entry does not turn them off)."""
    caps = snapshot.capabilities
    return [*(RESOURCE_UTILITIES if caps and caps.resources and config.tools.resources else ()),
            *(PROMPT_UTILITIES if caps and caps.prompts and config.tools.prompts else ())]


def _written_rules(session: Session) -> dict[str, str]:
    permissions = ConfigStore(session.home).load().permissions
    written: dict[str, str] = {}
    for permission in ("deny", "ask", "allow"):  # the strongest rule written for a name is the one it has
        for pattern in getattr(permissions, permission):
            written.setdefault(pattern, permission)
    return written


def log_tail(session: Session, name: str) -> str:
    """The end of the server's stderr log, redacted; empty when it has none, or when what is there
    is not a regular file (a FIFO put in its place would block a plain open)."""
    try:
        raw = read_tail(session.home.server_log(name), LOG_TAIL_BYTES + 1)  # one more byte: was it cut?
    except OSError:
        return ""
    text = raw[-LOG_TAIL_BYTES:].decode("utf-8", "replace")
    if len(raw) > LOG_TAIL_BYTES:
        text = text.partition("\n")[2]  # from the first whole line
    return session.redactor(text)
