"""`hermes mcp get NAME`: one server's settings (secrets hidden), where it comes from, and how it runs.

Like the other configuration commands it does not import the `mcp` SDK; the live state comes from a
running session's control channel, if there is one.
"""

from __future__ import annotations

from typing import Any

import click

from hermes.cli.completion import complete_servers
from hermes.cli.mcp_config_commands import list_rows, selection
from hermes.cli.options import json_option
from hermes.cli.output import print_json, say
from hermes.config.agent_settings import ApprovalMode
from hermes.config.model import PinPolicy, ServerConfig
from hermes.config.store import ConfigStore
from hermes.errors import NoSuchServer
from hermes.home import Home
from hermes.security.redact import Redactor, mask_url
from hermes.validation import suggestion


def _settings(entry: ServerConfig) -> dict[str, Any]:
    """The entry as configured, with every env and header value hidden (names only)."""
    data: dict[str, Any] = {"transport": entry.transport_name}
    if entry.command:
        # An argument may be a literal token (`--api-key=sk-…`): hidden by its shape, like in any output.
        redact = Redactor()
        data |= {"command": entry.command, "args": [redact(arg) for arg in entry.args]}
        if entry.cwd:
            data["cwd"] = entry.cwd
        if entry.env:
            data["env"] = {key: "<hidden>" for key in entry.env}
    else:
        data["url"] = mask_url(entry.url or "")
        if entry.headers:
            data["headers"] = {key: "<hidden>" for key in entry.headers}
        if entry.auth:
            data["auth"] = entry.auth
    data |= {"enabled": entry.enabled, "timeout": entry.timeout, "connect_timeout": entry.connect_timeout,
             "tools": selection(entry)}
    if entry.roots is not None:
        data["roots"] = list(entry.roots)
    approval = entry.approval
    if approval.mode is not ApprovalMode.AUTO or approval.ask or approval.allow:
        data["approval"] = {"mode": str(approval.mode), "ask": list(approval.ask), "allow": list(approval.allow)}
    if entry.pin is not PinPolicy.BLOCK:
        data["pin"] = str(entry.pin)
    return data


def _sandbox(home: Home, name: str, entry: ServerConfig) -> dict[str, Any]:
    """How the server's sandbox would be built now (paths from its resolved settings; values never shown)."""
    import os

    from hermes.config.resolve import ResolvedServer, resolve_server
    from hermes.errors import HermesError
    from hermes.mcp.sandbox_support import describe

    store = ConfigStore(home)
    try:
        server = resolve_server(name, entry, store.variables(os.environ))
    except HermesError:
        server = ResolvedServer(name, entry, entry.command, entry.args, dict(entry.env), entry.cwd)
    return describe(server, store.load().mcp.sandbox, os.environ, str(home.root), os.getcwd())


@click.command("get")
@click.argument("name", shell_complete=complete_servers)
@json_option
def get_command(name: str, as_json: bool) -> None:
    """One server: its settings (secrets hidden), where it comes from, and its state and tools if running."""
    from hermes.live.control_client import ask, live_sessions

    home = Home.from_env()
    rows, _, servers = list_rows(home, ConfigStore(home).load())
    row = next((r for r in rows if r["name"] == name and not r["shadowed_by"]), None)
    if row is None:
        raise NoSuchServer(name, suggestion(name, [r["name"] for r in rows]))
    server = servers[name]
    data: dict[str, Any] = {"name": name, "scope": row["scope"], "source": row["source"], "state": row["state"],
                            "settings": _settings(server.config), "why_off": row["why_off"], "live": None}
    if server.config.is_stdio:
        data["sandbox"] = _sandbox(home, name, server.config)
    for live in live_sessions(home):
        code, body = ask(live, "GET", "/status")
        found = [s for s in body.get("servers", []) if isinstance(s, dict) and s.get("name") == name]
        if code == 200 and found:
            data["live"] = {"session_pid": live.endpoint.pid, **found[0]}
            break
    if as_json:
        print_json(data)
        return
    say(f"{name}  ({data['scope']}: {data['source']}; {data['state']})")
    for key, value in data["settings"].items():
        shown = ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else \
            " ".join(value) if isinstance(value, list) else str(value)
        say(f"  {key}: {shown}")
    if data["why_off"]:
        say(f"  off: {data['why_off']}")
    sandbox = data.get("sandbox")
    if sandbox:
        ports = f" (host ports {', '.join(map(str, sandbox['ports']))})" if sandbox.get("ports") else ""
        say(f"  sandbox: {sandbox['state']}" + (f", network {sandbox['network']}{ports}" if "network" in sandbox
                                                  else ""))
        for key, label in (("writes", "writes"), ("reads", "reads (besides the system)"), ("hidden", "hidden")):
            if key in sandbox:
                say(f"    {label}: {', '.join(sandbox[key]) or 'nothing'}")
    live_status = data["live"]
    if live_status:
        era = f", MCP {live_status['protocol']}" if live_status.get("protocol") else ""
        say(f"  running session {live_status['session_pid']}: {live_status.get('state')}, "
            f"{live_status.get('tools')} tools{era}")
    else:
        say(f"  no running session; `hermes mcp test {name}` connects and lists its tools.")
