"""`hermes mcp …`: configure servers, inspect them, reload running sessions, serve the surface.

Only commands that connect import the session (and with it the `mcp` SDK); `--help`, `list`,
`add` and `remove` stay fast.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from hermes.cli.options import json_option, platform_option
from hermes.cli.output import print_json, print_table, say
from hermes.cli.progress import progress
from hermes.config.edit import add_server, remove_server
from hermes.config.model import HermesConfig, ServerConfig
from hermes.config.store import ConfigStore
from hermes.errors import NoSuchServer, UsageError
from hermes.home import Home
from hermes.security.redact import mask_url


def _split_list(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in value.split(",") if part != ""]


def _pairs(values: tuple[str, ...], separator: str, what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition(separator)
        if not sep or not key.strip():
            raise UsageError(f"{what} '{value}' must look like KEY{separator}VALUE.")
        pairs[key.strip()] = rest.strip() if separator == ":" else rest
    return pairs


@click.group("mcp", invoke_without_command=True)
@click.pass_context
def mcp_group(ctx: click.Context) -> None:
    """Configure, inspect and serve MCP servers (without a command: the interactive catalog picker)."""
    if ctx.invoked_subcommand is None:
        from hermes.cli.picker import run_picker

        sys.exit(run_picker(Home.from_env()))


@mcp_group.command("catalog")
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
                [[r.entry.name, r.state.value, r.entry.auth, r.entry.description] for r in rows])
    if custom:
        say("")
        print_table(["CUSTOM SERVER", "STATE", "TRANSPORT"], [[c.name, c.state.value, c.transport] for c in custom])


@mcp_group.command("install")
@click.argument("name")
@click.option("--set", "settings", multiple=True, help="NAME=VALUE for a setting of the entry (repeatable).")
@click.option("--yes", "-y", is_flag=True, help="No questions: defaults, preselected tools, keep a failing server "
                                                 "disabled.")
@click.option("--command", "override_command", help="Launch this command instead of the entry's (local builds).")
@click.option("--args", "override_args", multiple=True, help="Arguments for --command, comma-separated.")
@click.option("--url", "override_url", help="Use this URL instead of the entry's.")
def install_command(name: str, settings: tuple[str, ...], yes: bool, override_command: str | None,
                    override_args: tuple[str, ...], override_url: str | None) -> None:
    """Install a server from the curated catalog: settings, probe, tool checklist."""
    from hermes.cli.catalog_flow import run_install

    override = None
    if override_command or override_url:
        from hermes.catalog.install import Override

        override = Override(override_command, _split_list(override_args), override_url)
    sys.exit(run_install(Home.from_env(), name, _pairs(settings, "=", "--set"), interactive=not yes,
                         override=override))


@mcp_group.command("add")
@click.argument("name")
@click.option("--command", "command", help="Program that starts a stdio server.")
@click.option("--args", "args", multiple=True, help="Arguments, comma-separated (repeatable).")
@click.option("--env", "env", multiple=True, help="K=V for the server's environment (repeatable).")
@click.option("--cwd", help="Working folder of a stdio server.")
@click.option("--url", help="URL of a Streamable HTTP (or --transport sse) server.")
@click.option("--header", "headers", multiple=True, help='"K: V" header for an HTTP server (repeatable).')
@click.option("--transport", type=click.Choice(["streamable-http", "sse"]), help="HTTP transport.")
@click.option("--auth", type=click.Choice(["oauth"]), help="Authorize with OAuth 2.1.")
@click.option("--timeout", type=float, help="Seconds a tool call may take (default 300).")
@click.option("--connect-timeout", type=float, help="Seconds to start and handshake (default 60).")
@click.option("--disabled", is_flag=True, help="Add the server switched off.")
@click.option("--replace", is_flag=True, help="Overwrite an existing server of that name.")
def add_command(name: str, command: str | None, args: tuple[str, ...], env: tuple[str, ...], cwd: str | None,
                url: str | None, headers: tuple[str, ...], transport: str | None, auth: str | None,
                timeout: float | None, connect_timeout: float | None, disabled: bool, replace: bool) -> None:
    """Add a stdio (--command) or HTTP (--url) server to config.yaml."""
    if bool(command) == bool(url):
        raise UsageError("Give exactly one of --command (stdio server) or --url (HTTP server).")
    entry: dict[str, Any] = {}
    if command:
        if headers or transport or auth:
            raise UsageError("--header, --transport and --auth are for HTTP servers (--url).")
        entry["command"] = command
        if args:
            entry["args"] = _split_list(args)
        if env:
            entry["env"] = _pairs(env, "=", "--env")
        if cwd:
            entry["cwd"] = cwd
    else:
        if args or env or cwd:
            raise UsageError("--args, --env and --cwd are for stdio servers (--command).")
        entry["url"] = url
        if headers:
            entry["headers"] = _pairs(headers, ":", "--header")
        if transport:
            entry["transport"] = transport
        if auth:
            entry["auth"] = auth
    if timeout is not None:
        entry["timeout"] = timeout
    if connect_timeout is not None:
        entry["connect_timeout"] = connect_timeout
    if disabled:
        entry["enabled"] = False
    store = ConfigStore(Home.from_env())
    with store.edit() as doc:
        add_server(doc, name, entry, replace=replace)
    say(f"Added MCP server '{name}' to {store.home.config}.")


@mcp_group.command("remove")
@click.argument("name")
def remove_command(name: str) -> None:
    """Remove a server from config.yaml."""
    store = ConfigStore(Home.from_env())
    config = store.load()
    if name not in config.mcp_servers:
        from hermes.session.servers import configured_servers

        server = configured_servers(store.home, config).get(name)
        if server is not None:
            raise UsageError(f"MCP server '{name}' comes from {server.source}; disable that plugin instead "
                             f"(hermes plugins disable {server.source.removeprefix('plugin:')}).")
    with store.edit() as doc:
        remove_server(doc, name)
    from hermes.mcp.oauth.storage import delete_tokens

    removed = delete_tokens(store.home, name)
    say(f"Removed MCP server '{name}'" + (" and its OAuth tokens." if removed else "."))


def _selection(entry: ServerConfig) -> str:
    rule = entry.tools
    if rule.include is not None:
        return f"include {', '.join(rule.include)}" if rule.include else "none"
    if rule.exclude is not None:
        return f"all except {', '.join(rule.exclude)}"
    return "all"


def _target(entry: ServerConfig) -> str:
    """What the server runs or where it lives, as configured (`${VAR}` unresolved, URL secrets masked)."""
    if entry.command:
        return " ".join([entry.command, *entry.args])
    return mask_url(entry.url or "")


def list_rows(home: Home, config: HermesConfig) -> tuple[list[dict[str, Any]], list[str]]:
    """Every server: config.yaml's and enabled plugins' (a shadowed plugin server shown as such).

    Values shown are the configured text (with `${VAR}` unresolved), so secrets kept in .env or
    the environment never reach this output; env and header values are not shown at all.
    """
    from hermes.plugins.registry import load_enabled
    from hermes.session.servers import DesiredServer, desired_servers

    plugins = load_enabled(home, config)
    server_set = desired_servers(config, plugins)

    def row(server: DesiredServer, shadowed: bool) -> dict[str, Any]:
        entry = server.config
        return {
            "name": server.name,
            "transport": entry.transport_name,
            "target": _target(entry),
            "tools": _selection(entry),
            "enabled": entry.enabled,
            "source": server.source,
            "auth": entry.auth or "none",
            "app_bound": server.declaration is not None,
            "shadowed_by": "config.yaml" if shadowed else None,
        }

    rows = [row(s, False) for s in server_set.servers.values()] + [row(s, True) for s in server_set.shadowed]
    return rows, plugins.errors


@mcp_group.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """Configured servers: transport, tools selected, enabled, source."""
    home = Home.from_env()
    rows, errors = list_rows(home, ConfigStore(home).load())
    if as_json:
        print_json({"servers": rows, "plugin_errors": errors})
        return
    for error in errors:
        say(f"warning: {error}", err=True)
    if not rows:
        say("No MCP servers configured. Add one with `hermes mcp add NAME --command … | --url …`.")
        return
    print_table(["NAME", "TRANSPORT", "ENABLED", "TOOLS", "SOURCE", "TARGET"],
                [[r["name"], r["transport"], "yes" if r["enabled"] else "no", r["tools"],
                  r["source"] + (" (overridden by config.yaml)" if r["shadowed_by"] else ""), r["target"]]
                 for r in rows])


def _require_server(home: Home, name: str) -> None:
    from hermes.session.servers import configured_servers

    if name not in configured_servers(home, ConfigStore(home).load()):
        raise NoSuchServer(name)


@mcp_group.command("test")
@click.argument("name")
@json_option
def test_command(name: str, as_json: bool) -> None:
    """Connect, handshake and list tools, with timings; on failure the exact cause."""
    from hermes.session.probe import probe_server

    home = Home.from_env()
    _require_server(home, name)
    with progress(f"Connecting to '{name}' (a cold npx/uvx start can take a minute)…"):
        report = probe_server(home, name)
    if as_json:
        print_json(report.to_json())
    elif report.ok:
        say(f"{name}: connected in {report.connect_ms} ms ({report.transport}), "
            f"server {report.server_info or 'unnamed'}", fg="green")
        say(f"{len(report.tools)} tools offered, {report.selected} selected by the config:")
        for tool in report.tools:
            mark = "x" if tool.selected else " "
            say(f"  [{mark}] {tool.name}  {tool.description}".rstrip())
    else:
        say(f"{name}: {report.state}: {report.reason}", fg="red")
        if report.stderr_tail:
            say("Last lines of the server's stderr:")
            for line in report.stderr_tail.splitlines():
                say(f"  {line}")
    sys.exit(0 if report.ok else 1)


@mcp_group.command("configure")
@click.argument("name")
def configure_command(name: str) -> None:
    """Choose a server's tools in a checklist (writes tools.include)."""
    from hermes.cli.configure import configure_tools

    home = Home.from_env()
    _require_server(home, name)
    sys.exit(configure_tools(home, name))


@mcp_group.command("status")
@json_option
def status_command(as_json: bool) -> None:
    """Per server: state, tools, last error, why unavailable (from a running session if there is one)."""
    from hermes.cli.status import show_status

    sys.exit(show_status(Home.from_env(), as_json))


@mcp_group.command("reload")
@json_option
def reload_command(as_json: bool) -> None:
    """Ask every running hermes session to re-read config.yaml."""
    from hermes.cli.status import reload_sessions

    sys.exit(reload_sessions(Home.from_env(), as_json))


@mcp_group.command("login")
@click.argument("name")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds to wait for the browser.")
@click.option("--no-browser", is_flag=True, help="Only print the URL; do not try to open a browser.")
def login_command(name: str, timeout: float, no_browser: bool) -> None:
    """Authorize an OAuth server: browser or pasted redirect URL, callback on 127.0.0.1."""
    import anyio

    from hermes.mcp.oauth.login import login

    result = anyio.run(lambda: login(Home.from_env(), name, timeout=timeout, open_browser=not no_browser, say=say))
    say(f"Authorized '{name}': token stored ({result.tools} tools offered).")


@mcp_group.command("serve")
@click.option("--http", "http", is_flag=True, help="Serve Streamable HTTP on loopback instead of stdio.")
@click.option("--port", type=int, default=0, show_default=True, help="Port for --http (0 picks a free one).")
@platform_option
@click.option("--deferred", is_flag=True, help="Offer one tool_search tool with a catalog instead of every schema.")
@click.option("--only", "only", metavar="NAME", help="Serve this one configured server only.")
@click.option("--no-prefix", is_flag=True, help="With --only: keep the server's own tool and prompt names.")
@click.option("--no-auth", is_flag=True, help="With --http: no bearer token (loopback only; any local process may "
                                              "call the tools).")
def serve_command(http: bool, port: int, platform: str | None, deferred: bool, only: str | None, no_prefix: bool,
                  no_auth: bool) -> None:
    """Run a session and expose its whole tool surface as one MCP server."""
    from hermes.live.serve import ServeOptions, run_serve

    if no_prefix and not only:
        raise UsageError("--no-prefix needs --only NAME: names of several servers could collide without a prefix.")
    if no_auth and not http:
        raise UsageError("--no-auth applies to --http only.")
    home = Home.from_env()
    if only is not None:
        _require_server(home, only)
    sys.exit(run_serve(home, ServeOptions(http=http, port=port, platform=platform, deferred=deferred, only=only,
                                          prefix=not no_prefix, auth=not no_auth)))
