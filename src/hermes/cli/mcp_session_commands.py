"""`hermes mcp` commands that reach servers: the catalog, install, test, configure, status, reload,
login, serve. Only the commands that connect import the session (and with it the `mcp` SDK).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes.cli.completion import complete_servers
from hermes.cli.mcp_config_commands import pairs, require_server, scope_option
from hermes.cli.options import json_option, platform_option, wait_option
from hermes.cli.output import print_json, print_table, say
from hermes.cli.progress import progress
from hermes.cli.sandbox_options import sandbox_path_options, sandbox_paths
from hermes.errors import UsageError
from hermes.home import Home

if TYPE_CHECKING:
    from hermes.catalog.manifest import CatalogServer
    from hermes.session.status import ProbeReport


@click.command("catalog")
@json_option
def catalog_command(as_json: bool) -> None:
    """The curated catalog with each entry's state, and your custom servers."""
    from hermes.catalog.install import catalog_states

    rows, custom, warnings = catalog_states(Home.from_env())
    for warning in warnings:
        say(f"warning: {warning}", err=True)
    if as_json:
        print_json({"catalog": [r.to_json() for r in rows], "custom": [c.to_json() for c in custom],
                    "warnings": warnings})
        return
    print_table(["NAME", "STATE", "AUTH", "DESCRIPTION"],
                [[r.entry.name, r.state.value, _auth_label(r.entry), r.entry.description] for r in rows],
                shrink=["DESCRIPTION"])
    if custom:
        say("")
        print_table(["CUSTOM SERVER", "STATE", "TRANSPORT"], [[c.name, c.state.value, c.transport] for c in custom])


@click.command("install")
@click.argument("name")
@click.option("--set", "settings", multiple=True, help="NAME=VALUE for a setting of the entry (repeatable).")
@click.option("--yes", "-y", is_flag=True, help="No questions: defaults, preselected tools, keep a failing server "
                                                 "disabled.")
@click.option("--command", "override_command", help="Launch this command instead of the entry's (local builds).")
@click.option("--args", "override_args", multiple=True, help="One argument for --command (repeat for more).")
@click.option("--url", "override_url", help="Use this URL instead of the entry's.")
def install_command(name: str, settings: tuple[str, ...], yes: bool, override_command: str | None,
                    override_args: tuple[str, ...], override_url: str | None) -> None:
    """Install a server from the curated catalog: settings, probe, tool checklist."""
    from hermes.cli.catalog_flow import run_install

    override = None
    if override_command or override_url:
        from hermes.catalog.install import Override

        override = Override(override_command, list(override_args), override_url)
    sys.exit(run_install(Home.from_env(), name, pairs(settings, "=", "--set"), interactive=not yes,
                         override=override))


def _auth_label(entry: CatalogServer) -> str:
    """What installing asks for: a key (a secret setting), plain settings (a folder), OAuth, or nothing."""
    from hermes.catalog.manifest import CatalogAuth

    if entry.auth is CatalogAuth.API_KEY and not any(setting.secret for setting in entry.settings):
        return "settings"
    return str(entry.auth)


@click.command("test")
@click.argument("name", shell_complete=complete_servers)
@json_option
def test_command(name: str, as_json: bool) -> None:
    """Connect, handshake and list tools, with timings; on failure the exact cause."""
    from hermes.session.probe import probe_server

    home = Home.from_env()
    require_server(home, name)
    with progress(f"Connecting to '{name}' (a cold npx/uvx start can take a minute)…"):
        report = probe_server(home, name)
    if as_json:
        print_json(report.to_json())
    elif report.ok:
        era = f", MCP {report.protocol}" if report.protocol else ""
        say(f"{name}: connected in {report.connect_ms} ms ({report.transport}{era}), "
            f"server {report.server_info or 'unnamed'}", fg="green")
        say(f"{len(report.tools)} tools offered, {report.selected} selected by the config:")
        for tool in report.tools:
            mark = "x" if tool.selected else " "
            say(f"  [{mark}] {tool.name}  {tool.description}".rstrip())
        for warning in report.warnings:
            say(f"warning: {warning}", err=True)
        _sandbox_lines(report)
    else:
        say(f"{name}: {report.state}: {report.reason}", fg="red")
        if report.stderr_tail:
            say("Last lines of the server's stderr:")
            for line in _without_stack_frames(report.stderr_tail.splitlines(), name):
                say(f"  {line}")
            from hermes.tools.unavailable import npx_cache_advice

            advice = npx_cache_advice(report.stderr_tail, name)
            if advice:
                say(advice)
        _sandbox_lines(report)
    sys.exit(0 if report.ok else 1)


# A line of a Node or Python stack trace: what the log keeps, not what a person needs to read here.
_STACK_FRAME = re.compile(r"^\s+at .*(?::\d+:\d+\)?|<anonymous>\)?)\s*\{?$|^\s+File \".*\", line \d+")


# What a program says when a file or a module is not where it looked: in a sandbox, maybe hidden.
_MISSING = re.compile(r"No such file|Cannot find module|Cannot find package|ModuleNotFoundError|No module named|"
                      r"ENOENT|EACCES|Permission denied")


def _without_stack_frames(lines: list[str], name: str) -> list[str]:
    shown: list[str] = []
    frames = 0
    for line in [*lines, ""]:
        if _STACK_FRAME.match(line):
            frames += 1
            continue
        if frames:
            shown.append(f"  … {frames} stack frames (the whole trace is in logs/mcp-{name}.log)")
            frames = 0
        if line:
            shown.append(line)
    return shown


def _sandbox_lines(report: ProbeReport) -> None:
    if report.sandbox:
        say(f"sandbox: {report.sandbox}", fg="yellow" if report.sandbox.startswith("unavailable") else None)
    for denial in report.denials:
        say(f"sandbox denied: {denial}", fg="yellow")
    if not report.ok and report.sandbox.startswith("on") and not report.denials \
            and _MISSING.search(report.stderr_tail or ""):
        # Nothing the server said names a refusal, yet it failed in a sandbox: say where to look.
        say(f"It ran in its sandbox: `hermes mcp get {report.name}` shows what it shares; if it needs a folder "
            f"the sandbox does not share, add it with `hermes mcp configure {report.name} --sandbox-read FOLDER`.")


@click.command("configure")
@click.argument("name", shell_complete=complete_servers)
@sandbox_path_options
@scope_option
def configure_command(name: str, sandbox_read: tuple[str, ...], sandbox_write: tuple[str, ...], scope: str) -> None:
    """Choose a server's tools in a checklist (writes tools.include), or, with --sandbox-read or
    --sandbox-write, let its sandbox share more folders (written to its entry's sandbox.read/write)."""
    home = Home.from_env()
    require_server(home, name)
    if sandbox_read or sandbox_write:
        grant_sandbox_paths(name, scope, sandbox_read, sandbox_write)
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # said before the checklist's imports (the SDK)
        raise UsageError(f"`hermes mcp configure` is an interactive checklist and needs a terminal; in scripts, set "
                         f"tools.include for '{name}' in config.yaml (or use --sandbox-read/--sandbox-write).")
    from hermes.cli.configure import configure_tools

    sys.exit(configure_tools(home, name))


def grant_sandbox_paths(name: str, scope: str, read: tuple[str, ...], write: tuple[str, ...]) -> None:
    """`hermes mcp configure NAME --sandbox-read/--sandbox-write`: add them to the entry in `scope`'s file."""
    from hermes.cli.mcp_config_commands import edited, reload_running
    from hermes.config.edit import add_sandbox_paths

    home = Home.from_env()
    readable, writable = sandbox_paths("--sandbox-read", read), sandbox_paths("--sandbox-write", write)
    store, edit = edited(home, scope)
    if name not in store.load().mcp_servers:
        raise UsageError(f"MCP server '{name}' is not in the {scope} config ({Path(store.path)}); see "
                         f"`hermes mcp list` for its scope and add --scope.")
    with store.edit() as doc:
        add_sandbox_paths(doc, name, readable, writable)
    edit.done()
    granted = [f"read {p}" for p in readable] + [f"write {p}" for p in writable]
    say(f"MCP server '{name}' may now {', '.join(granted)} inside its sandbox ({store.path}).")
    reload_running(home)


@click.command("status")
@wait_option
@json_option
def status_command(wait: float, as_json: bool) -> None:
    """Per server: state, tools, last error, why unavailable (from a running session if there is one)."""
    from hermes.cli.status import show_status

    sys.exit(show_status(Home.from_env(), as_json, wait))


@click.command("reload")
@json_option
def reload_command(as_json: bool) -> None:
    """Ask every running hermes session to re-read config.yaml."""
    from hermes.cli.status import reload_sessions

    sys.exit(reload_sessions(Home.from_env(), as_json))


@click.command("login")
@click.argument("name", shell_complete=complete_servers)
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds to wait for the browser.")
@click.option("--no-browser", is_flag=True, help="Only print the URL; do not try to open a browser.")
def login_command(name: str, timeout: float, no_browser: bool) -> None:
    """Authorize an OAuth server: browser or pasted redirect URL, callback on 127.0.0.1."""
    from hermes import interrupts
    from hermes.mcp.oauth.login import login

    result = interrupts.run(lambda: login(Home.from_env(), name, timeout=timeout, open_browser=not no_browser,
                                          say=say))
    say(f"Authorized '{name}': token stored ({result.tools} tools offered).")


@click.command("serve")
@click.option("--http", "http", is_flag=True, help="Serve Streamable HTTP on loopback instead of stdio.")
@click.option("--port", type=int, default=0, show_default=True, help="Port for --http (0 picks a free one).")
@platform_option(None)
@click.option("--deferred", is_flag=True, help="Offer one tool_search tool with a catalog instead of every schema.")
@click.option("--only", "only", metavar="NAME", shell_complete=complete_servers,
              help="Serve this one configured server only.")
@click.option("--no-prefix", is_flag=True, help="With --only: keep the server's own tool and prompt names.")
@click.option("--no-auth", is_flag=True, help="With --http: no bearer token (loopback only; any local process may "
                                              "call the tools).")
@click.option("--team", is_flag=True, help="With --http: the team gateway; each user signs in and gets their own "
                                           "servers, policy and audit (see `hermes team`).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --team: the address to listen on (0.0.0.0 in a container; TLS stays with the proxy).")
@wait_option
def serve_command(http: bool, port: int, platform: str | None, deferred: bool, only: str | None, no_prefix: bool,
                  no_auth: bool, team: bool, host: str, wait: float) -> None:
    """Run a session and expose its whole tool surface as one MCP server."""
    from hermes.live.serve import ServeOptions, run_serve

    if team:
        if not http or no_auth or only or no_prefix:
            raise UsageError("--team needs --http, and works without --no-auth, --only and --no-prefix "
                             "(every request is a signed-in user's; the policy says which servers).")
        try:
            import prometheus_client  # noqa: F401
        except ImportError:
            raise UsageError("The team gateway needs the team extra: pip install 'hermes-mcp-host[team]'.") from None
        from hermes.team.run import TeamServeOptions, run_team

        sys.exit(run_team(Home.from_env(), TeamServeOptions(host=host, port=port, platform=platform,
                                                            deferred=deferred)))
    if host != "127.0.0.1":
        raise UsageError("--host applies to --team only: without users, hermes serves this machine alone.")
    if no_prefix and not only:
        raise UsageError("--no-prefix needs --only NAME: names of several servers could collide without a prefix.")
    if no_auth and not http:
        raise UsageError("--no-auth applies to --http only.")
    home = Home.from_env()
    if only is not None:
        require_server(home, only)
    sys.exit(run_serve(home, ServeOptions(http=http, port=port, platform=platform, deferred=deferred, only=only,
                                          prefix=not no_prefix, auth=not no_auth, start_wait=wait)))
