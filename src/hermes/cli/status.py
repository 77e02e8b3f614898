"""`hermes mcp status` and `hermes mcp reload`: ask live sessions first."""

from __future__ import annotations

from typing import Any

from hermes import interrupts
from hermes.cli.output import print_json, print_table, say
from hermes.cli.progress import progress
from hermes.home import Home
from hermes.live.control_client import ask, live_sessions
from hermes.session.status import ServerStatus


def _fresh_status(home: Home, wait: float | None) -> list[ServerStatus]:
    from hermes.session.core import Session, SessionSettings

    async def run() -> list[ServerStatus]:
        async with Session(home, SessionSettings(start_wait=wait)) as session:
            return session.status()

    with progress("No session is running; connecting to the configured MCP servers…"):
        return interrupts.run(run)


def show_status(home: Home, as_json: bool, wait: float | None = None) -> int:
    reports: list[tuple[int | None, list[ServerStatus]]] = []
    for live in live_sessions(home):
        code, body = ask(live, "GET", "/status")
        servers = body.get("servers")
        if code == 200 and isinstance(servers, list):
            reports.append((live.endpoint.pid, [ServerStatus.from_json(s) for s in servers if isinstance(s, dict)]))
    if not reports:
        reports.append((None, _fresh_status(home, wait)))
    if as_json:
        print_json({"sessions": [{"session_pid": pid, "servers": [s.to_json() for s in servers]}
                                 for pid, servers in reports]})
        return 0
    for pid, servers in reports:
        origin = f"running session (pid {pid})" if pid else "a fresh connection (no session is running)"
        say(f"Status from {origin}:")
        if not servers:
            say("  No MCP servers configured.")
            continue
        print_table(["SERVER", "STATE", "TOOLS", "TRANSPORT", "SOURCE", "WHY UNAVAILABLE"],
                    [[s.name, s.state, str(s.tools), s.transport, s.source, s.why_unavailable] for s in servers])
    return 0


def _is_report(report: Any) -> bool:
    keys = ("added", "removed", "restarted", "unchanged", "revived")
    return isinstance(report, dict) and all(isinstance(report.get(k), list) and
                                            all(isinstance(n, str) for n in report[k]) for k in keys)


def reload_sessions(home: Home, as_json: bool) -> int:
    sessions = live_sessions(home)
    results: list[dict[str, Any]] = []
    failed = False
    for live in sessions:
        code, body = ask(live, "POST", "/reload")
        failed = failed or code != 200
        results.append({"session_pid": live.endpoint.pid, "ok": code == 200, "status": code, **body})
    if as_json:
        print_json({"sessions": results})
        return 1 if failed else 0
    if not results:
        say("No running hermes session; the next session reads the new config when it starts.")
        return 0
    for result in results:
        report = result.get("report")
        if result["ok"] and not _is_report(report):
            result["ok"], result["error"], failed = False, "its answer is not a reload report", True
        if not result["ok"]:
            what = "refused" if result["status"] == 409 else "failed"
            say(f"Session {result['session_pid']}: reload {what}: {result.get('error')}", err=True)
            continue
        assert isinstance(report, dict)
        parts = [f"{label}: {', '.join(report[key]) or '-'}" for key, label in
                 (("added", "Added"), ("removed", "Removed"), ("restarted", "Restarted"),
                  ("unchanged", "Unchanged"), ("revived", "Revived"))]
        say(f"Session {result['session_pid']} reloaded. " + "; ".join(parts))
    return 1 if failed else 0
