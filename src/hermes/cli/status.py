"""`hermes mcp status` and `hermes mcp reload`: ask live sessions first."""

from __future__ import annotations

from typing import Any

import anyio

from hermes.cli.output import print_json, print_table, say
from hermes.cli.progress import progress
from hermes.control_client import ask, live_sessions
from hermes.home import Home


def _status_rows(servers: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for s in servers:
        why = s.get("unavailable", {}).get("error", "") if s.get("unavailable") else ""
        rows.append([s["name"], s["state"], str(s["tools"]), s["transport"], s["source"], why])
    return rows


def _fresh_status(home: Home) -> list[dict[str, Any]]:
    from hermes.session import Session

    async def run() -> list[dict[str, Any]]:
        async with Session(home) as session:
            return session.status()

    with progress("No session is running; connecting to the configured MCP servers…"):
        return anyio.run(run)


def show_status(home: Home, as_json: bool) -> int:
    sessions = live_sessions(home)
    reports: list[dict[str, Any]] = []
    for live in sessions:
        code, body = ask(live, "GET", "/status")
        if code == 200:
            reports.append({"session_pid": live.endpoint.pid, "servers": body.get("servers", [])})
    if not reports:
        reports.append({"session_pid": None, "servers": _fresh_status(home)})
    if as_json:
        print_json({"sessions": reports})
        return 0
    for report in reports:
        origin = f"running session (pid {report['session_pid']})" if report["session_pid"] else \
            "a fresh connection (no session is running)"
        say(f"Status from {origin}:")
        if not report["servers"]:
            say("  No MCP servers configured.")
            continue
        print_table(["SERVER", "STATE", "TOOLS", "TRANSPORT", "SOURCE", "WHY UNAVAILABLE"],
                    _status_rows(report["servers"]))
    return 0


def reload_sessions(home: Home, as_json: bool) -> int:
    sessions = live_sessions(home)
    results: list[dict[str, Any]] = []
    failed = False
    for live in sessions:
        code, body = ask(live, "POST", "/reload")
        failed = failed or code != 200
        results.append({"session_pid": live.endpoint.pid, "ok": code == 200, **body})
    if as_json:
        print_json({"sessions": results})
        return 1 if failed else 0
    if not results:
        say("No running hermes session; the next session reads the new config when it starts.")
        return 0
    for result in results:
        if not result["ok"]:
            say(f"Session {result['session_pid']}: reload refused: {result.get('error')}", err=True)
            continue
        report = result["report"]
        parts = [f"{label}: {', '.join(report[key]) or '-'}" for key, label in
                 (("added", "Added"), ("removed", "Removed"), ("restarted", "Restarted"),
                  ("unchanged", "Unchanged"), ("revived", "Revived"))]
        say(f"Session {result['session_pid']} reloaded. " + "; ".join(parts))
    return 1 if failed else 0
