"""`hermes mcp add / add-json / import / remove / list / get / enable / disable / logout / trust`.

The commands that change or show what is configured. None of them connects to a server, so none
imports the `mcp` SDK (`get` asks a running session for the state, if there is one). `--scope
project` edits the project's `.hermes/config.yaml` instead of the user's config.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes.cli.completion import complete_servers
from hermes.cli.options import json_option
from hermes.cli.output import print_json, print_table, say
from hermes.cli.sandbox_options import sandbox_path_options, sandbox_paths
from hermes.config.model import HermesConfig, ServerConfig
from hermes.config.store import ConfigStore
from hermes.errors import NoSuchServer, UsageError
from hermes.home import Home
from hermes.security.redact import mask_url, shown_command
from hermes.validation import http_url_problem, suggestion

if TYPE_CHECKING:
    from hermes.session.servers import DesiredServer

# (Project scope, trust and the other clients' formats are imported where used: `hermes mcp list`
# and the root `--help` must stay fast.)

scope_option = click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
                            help="user: HERMES_HOME/config.yaml; project: ./.hermes/config.yaml of this project.")


def pairs(values: tuple[str, ...], separator: str, what: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition(separator)
        if not sep or not key.strip():
            raise UsageError(f"{what} '{value}' must look like KEY{separator}VALUE.")
        found[key.strip()] = rest.strip() if separator == ":" else rest
    return found


def store_for(home: Home, scope: str) -> ConfigStore:
    from hermes.config.project import PROJECT_CONFIG, project_root_for_edit

    if scope == "project":
        return ConfigStore(home, project_root_for_edit(Path.cwd(), home) / PROJECT_CONFIG)
    return ConfigStore(home)


class ProjectEdit:
    """Editing a project's config keeps the folder trusted if it was (the user made this change)."""

    def __init__(self, home: Home, store: ConfigStore) -> None:
        from hermes.config.trust import TrustKind, TrustStore

        self.trust = TrustStore(home, TrustKind.SERVERS)
        self.folder = store.path.parent.parent
        self.project = store.path != home.config
        self.was_trusted = self.project and (not store.path.exists() or self.trust.state(self.folder).trusted)

    def done(self) -> None:
        if self.project and self.was_trusted:
            self.trust.trust(self.folder)
        elif self.project:
            say(f"The project config is not trusted; run `hermes mcp trust {self.folder}` to use its servers.")


def edited(home: Home, scope: str) -> tuple[ConfigStore, ProjectEdit]:
    store = store_for(home, scope)
    return store, ProjectEdit(home, store)


def add_entry(home: Home, scope: str, name: str, entry: dict[str, Any], secrets: dict[str, str], *,
              replace: bool) -> tuple[ConfigStore, str | None]:
    """Write a new server to `scope`'s config, its literal secrets to .env (both or neither); the
    store written and, when secrets moved, the sentence that says where."""
    from hermes.config.client_json import apply_renames
    from hermes.config.dotenv import secrets_to_dotenv
    from hermes.config.edit import add_server
    from hermes.config.transaction import edit_transaction

    store, edit = edited(home, scope)
    if secrets:
        home.ensure()
    with edit_transaction(home, store.path):  # nothing half-done: .env goes back to what it was
        renames = secrets_to_dotenv(home.dotenv, secrets)
        apply_renames(entry, renames)
        with store.edit() as doc:
            add_server(doc, name, entry, replace=replace)
    edit.done()
    if not secrets:
        return store, None
    return store, (f"Secrets went to {home.dotenv} (0600): {', '.join(sorted(renames.get(k, k) for k in secrets))}; "
                   f"the config refers to them as ${{VAR}}.")


def _looks_like_a_command_line(command: str) -> bool:
    import shutil  # with its archive modules, a cost every `hermes mcp` command would pay for `add`

    return any(c.isspace() for c in command) and not Path(command).exists() and shutil.which(command) is None


def entry_data(name: str, command_line: tuple[str, ...], command: str | None, args: tuple[str, ...],
               env: tuple[str, ...], cwd: str | None, url: str | None, headers: tuple[str, ...],
               transport: str | None, auth: str | None, sandboxed_paths: bool) -> dict[str, Any]:
    """The entry `hermes mcp add` (and the dashboard's add form) writes, before secrets go to .env:
    a command line (after --, or --command/--args) or a URL, checked the same way for both."""
    if len(command_line) == 1 and command_line[0].startswith(("http://", "https://")) and not url:
        url, command_line = command_line[0], ()  # Claude Code's `add NAME URL`
    if command_line:
        if command or args:
            raise UsageError("Give the command either after -- or with --command/--args, not both.")
        command, args = command_line[0], command_line[1:]
    elif len(args) == 1 and "," in args[0] and not any(c.isspace() for c in args[0]):
        # The documented `--args "a,b,c"`: three arguments. One argument holding a comma is given
        # after -- instead, where nothing is ever split.
        args = tuple(args[0].split(","))
        say(f"note: --args was split at its commas into {len(args)} arguments; to pass one argument with a "
            f"comma, give the command after --: `hermes mcp add {name} -- {command or 'COMMAND'} ARG`.", err=True)
    if transport == "stdio":
        if url:
            raise UsageError("--transport stdio is for a command after --, not --url.")
        transport = None
    if bool(command) == bool(url):
        raise UsageError("Give a command after -- (stdio server) or --url (HTTP server), e.g. "
                         f"`hermes mcp add {name} -- npx -y @modelcontextprotocol/server-everything`.")
    data: dict[str, Any] = {}
    if command:
        if headers or transport or auth:
            raise UsageError("--header, --transport and --auth are for HTTP servers (--url).")
        if not command_line and _looks_like_a_command_line(command):
            program, *rest = command.split()
            raise UsageError(f"--command '{command}' looks like a whole command line; give it after --: "
                             f"`hermes mcp add {name} -- {program} {' '.join(rest)}`.")
        data |= {"command": command, "args": list(args)} if args else {"command": command}
        if env:
            data["env"] = pairs(env, "=", "--env")
        if cwd:
            data["cwd"] = cwd
    else:
        assert url is not None
        if args or env or cwd or sandboxed_paths:
            raise UsageError("--args, --env, --cwd and --sandbox-read/--sandbox-write are for stdio servers "
                             "(a command after --).")
        problem = None if "${" in url else http_url_problem(url)
        if problem:
            raise UsageError(f"--url {problem} (got '{mask_url(url)}').")
        data["url"] = url
        if headers:
            data["headers"] = pairs(headers, ":", "--header")
        if transport == "sse":
            data["type"] = "sse"
    return data


@click.command("add")
@click.argument("name")
@click.argument("command_line", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND [ARGS]...]")
@click.option("--command", "command", help="Program that starts a stdio server (or give it after --).")
@click.option("--args", "args", multiple=True,
              help="One argument for --command (repeat for more); a single --args \"a,b,c\" is three.")
@click.option("--env", "-e", "env", multiple=True, help="K=V for a stdio server's environment (repeatable).")
@click.option("--cwd", help="Working folder of a stdio server.")
@click.option("--url", help="URL of a Streamable HTTP (or --transport sse) server.")
@click.option("--header", "-H", "headers", multiple=True, help='"K: V" header for an HTTP server (repeatable).')
@click.option("--transport", type=click.Choice(["streamable-http", "http", "sse", "stdio"]),
              help="HTTP transport (http = streamable-http; stdio is the default for a command).")
@click.option("--auth", type=click.Choice(["oauth"]), help="Authorize with OAuth 2.1.")
@click.option("--timeout", type=float, help="Seconds a tool call may take (default 300).")
@click.option("--connect-timeout", type=float, help="Seconds to start and handshake (default 60).")
@click.option("--disabled", is_flag=True, help="Add the server switched off.")
@click.option("--replace", is_flag=True, help="Overwrite an existing server of that name.")
@sandbox_path_options
@scope_option
def add_command(name: str, command_line: tuple[str, ...], command: str | None, args: tuple[str, ...],
                env: tuple[str, ...], cwd: str | None, url: str | None, headers: tuple[str, ...],
                transport: str | None, auth: str | None, timeout: float | None, connect_timeout: float | None,
                disabled: bool, replace: bool, sandbox_read: tuple[str, ...], sandbox_write: tuple[str, ...],
                scope: str) -> None:
    """Add a server: `hermes mcp add NAME -- COMMAND [ARGS]...` (stdio) or `hermes mcp add NAME --url URL`.

    Everything after `--` is the command and its arguments, exactly as typed.
    """
    from hermes.config.client_json import translate

    data = entry_data(name, command_line, command, args, env, cwd, url, headers, transport, auth,
                      bool(sandbox_read or sandbox_write))
    # The same rules as add-json and import: a literal secret in -e/-H goes to .env, the entry refers to it.
    translated = translate(name, data)
    entry = translated.entry
    for note in translated.notes:
        say(f"note: {note}", err=True)
    if auth:
        entry["auth"] = auth
    if timeout is not None:
        entry["timeout"] = timeout
    if connect_timeout is not None:
        entry["connect_timeout"] = connect_timeout
    if disabled:
        entry["enabled"] = False
    if sandbox_read or sandbox_write:
        entry["sandbox"] = {key: paths for key, paths in (("read", sandbox_paths("--sandbox-read", sandbox_read)),
                                                          ("write", sandbox_paths("--sandbox-write", sandbox_write)))
                            if paths}
    store, secrets_note = add_entry(Home.from_env(), scope, name, entry, translated.secrets, replace=replace)
    if secrets_note:
        say(secrets_note)
    say(f"Added MCP server '{name}' to {store.path}.")


@click.command("add-json")
@click.argument("name")
@click.argument("json_text", metavar="JSON")
@click.option("--replace", is_flag=True, help="Overwrite an existing server of that name.")
@scope_option
def add_json_command(name: str, json_text: str, replace: bool, scope: str) -> None:
    """Add a server from the JSON other clients use: {"command", "args", "env"} or {"url", "headers", "type"},
    or the whole {"mcpServers": {...}} block a server's README shows (its one server, or the one named NAME)."""
    from hermes.config.client_json import one_server, translate

    try:
        data = json.loads(json_text)
    except ValueError as exc:
        raise UsageError(f"The JSON for '{name}' is not valid JSON ({exc}).") from None
    data, renamed = one_server(name, data)
    translated = translate(name, data)
    store, secrets_note = add_entry(Home.from_env(), scope, name, translated.entry, translated.secrets,
                                    replace=replace)
    if secrets_note:
        say(secrets_note)
    for note in [*([renamed] if renamed else []), *translated.notes]:
        say(f"note: {note}", err=True)
    say(f"Added MCP server '{name}' to {store.path}.")


@click.command("remove")
@click.argument("name", shell_complete=complete_servers)
@scope_option
def remove_command(name: str, scope: str) -> None:
    """Remove a server (and its OAuth tokens)."""
    say(remove_entry(Home.from_env(), name, scope))


def remove_entry(home: Home, name: str, scope: str) -> str:
    """Remove `name` from `scope`'s config, and its OAuth tokens unless another scope's server of that
    name still uses them; the sentence that says what went."""
    store, edit = edited(home, scope)
    config = store.load()
    if name not in config.mcp_servers:
        from hermes.config.project import load_project
        from hermes.session.servers import configured_servers

        server = configured_servers(home, ConfigStore(home).load(), load_project(home, Path.cwd())).get(name)
        if server is not None and server.source.startswith("plugin:"):
            raise UsageError(f"MCP server '{name}' comes from {server.source}; disable that plugin instead "
                             f"(hermes plugins disable {server.source.removeprefix('plugin:')}).")
        if server is not None:
            other = "project" if scope == "user" else "user"
            raise UsageError(f"MCP server '{name}' is in the {other} config; add --scope {other}.")
        raise NoSuchServer(name, suggestion(name, known_names(home)))
    from hermes.config.edit import remove_server  # the round-trip parser: only for commands that write
    with store.edit() as doc:
        remove_server(doc, name)
    edit.done()
    from hermes.config.project import load_project
    from hermes.mcp.oauth.storage import delete_tokens
    from hermes.session.servers import configured_servers

    # Tokens are kept by server name: while another scope still has a server of that name, they are its.
    still = configured_servers(home, ConfigStore(home).load(), load_project(home, Path.cwd())).get(name)
    if still is not None and home.has_tokens(name):
        return (f"Removed MCP server '{name}'; its OAuth tokens are kept: the {still.source} server '{name}' "
                f"still uses them.")
    removed = delete_tokens(home, name)
    return f"Removed MCP server '{name}'" + (" and its OAuth tokens." if removed else ".")


def require_server(home: Home, name: str) -> None:
    """A configured server's name, or exit 3 with the closest name."""
    from hermes.config.project import load_project
    from hermes.validation import suggestion

    # A broken file says what is wrong in it (file, line, rule), never "no such server".
    ConfigStore(home).load()
    load_project(home, Path.cwd())
    names = known_names(home)
    if name not in names:
        raise NoSuchServer(name, suggestion(name, names))


def known_names(home: Home) -> list[str]:
    from hermes.session.servers import known_server_names

    return known_server_names(home, Path.cwd())


def selection(entry: ServerConfig) -> str:
    include, exclude = entry.tools.include, entry.tools.exclude
    if include is not None:
        return f"include {', '.join(include)}" if include else "none"
    return f"all except {', '.join(exclude)}" if exclude is not None else "all"


def _target(entry: ServerConfig) -> str:
    """What the server runs or where it lives, as configured (`${VAR}` unresolved, URL secrets masked)."""
    return shown_command(entry.command, entry.args) if entry.command else mask_url(entry.url or "")


def list_rows(home: Home, config: HermesConfig) -> tuple[list[dict[str, Any]], list[str], dict[str, DesiredServer]]:
    """Every server: the project's, config.yaml's and enabled plugins' (shadowed ones shown as such);
    then the plugins' errors, and the servers a session would run, by name.

    Values shown are the configured text (with `${VAR}` unresolved), so secrets kept in .env or
    the environment never reach this output; env and header values are not shown at all.
    """
    from hermes.config.project import load_project
    from hermes.plugins.registry import load_enabled
    from hermes.session.servers import ConfiguredState, desired_servers

    plugins = load_enabled(home, config)
    project = load_project(home, Path.cwd())
    server_set = desired_servers(config, plugins, project=project)

    def row(server: DesiredServer, shadowed_by: str | None) -> dict[str, Any]:
        entry = server.config
        scope = "project" if server.source == "project" else "user" if server.source == "config.yaml" \
            else server.source
        return {
            "name": server.name,
            "transport": entry.transport_name,
            "target": _target(entry),
            "tools": selection(entry),
            "enabled": entry.enabled and not server.untrusted,
            "state": (ConfiguredState.UNTRUSTED if server.untrusted else ConfiguredState.ENABLED if entry.enabled
                      else ConfiguredState.DISABLED).value,
            "scope": scope,
            "source": str(project.path) if server.source == "project" and project else server.source,
            "auth": entry.auth or "none",
            "app_bound": server.declaration is not None,
            "shadowed_by": shadowed_by,
            "why_off": server.disabled_reason,
        }

    winners = server_set.servers
    rows = [row(s, None) for s in winners.values()]
    rows += [row(s, winners[s.name].source if s.name in winners else None) for s in server_set.shadowed]
    return rows, plugins.errors, winners


@click.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """Configured servers: scope, state, transport, tools selected, target."""
    from hermes.session.servers import ConfiguredState

    home = Home.from_env()
    rows, errors, _ = list_rows(home, ConfigStore(home).load())
    if as_json:
        print_json({"servers": rows, "plugin_errors": errors})
        return
    for error in errors:
        say(f"warning: {error}", err=True)
    if not rows:
        say("No MCP servers configured. Add one with `hermes mcp add NAME -- COMMAND [ARGS]…` or "
            "`hermes mcp add NAME --url URL`.")
        return
    print_table(["NAME", "SCOPE", "STATE", "TRANSPORT", "TOOLS", "TARGET"],
                [[r["name"], r["scope"] + (f" (overridden by {r['shadowed_by']})" if r["shadowed_by"] else ""),
                  r["state"], r["transport"], r["tools"], r["target"]] for r in rows], shrink=("TARGET", "TOOLS"))
    for row in rows:
        if row["state"] == ConfiguredState.UNTRUSTED:
            # An untrusted entry never displaces the user's own server of that name: say which runs.
            until = f" (until then, the {row['shadowed_by']} '{row['name']}' runs)" if row["shadowed_by"] else ""
            say(f"{row['name']}: {row['why_off']}{until}")
            break


def _set_enabled(name: str, enabled: bool, scope: str) -> None:
    home = Home.from_env()
    say(write_enabled(home, name, enabled, scope))
    reload_running(home)


def write_enabled(home: Home, name: str, enabled: bool, scope: str = "user") -> str:
    """Switch a server on or off in `scope`'s config (the one edit `hermes mcp enable/disable`, chat's
    `/mcp` and the dashboard make); the sentence that says where. Running sessions are not told here."""
    store, edit = edited(home, scope)
    if name not in store.load().mcp_servers:
        names = list(store.load().mcp_servers)
        if name in known_names(home):
            raise UsageError(f"MCP server '{name}' is not in the {scope} config (see `hermes mcp list` for its "
                             f"scope; a plugin's server goes with `hermes plugins enable/disable`).")
        raise NoSuchServer(name, suggestion(name, names))
    from hermes.config.edit import set_server_enabled
    with store.edit() as doc:
        set_server_enabled(doc, name, enabled)
    edit.done()
    return f"{'Enabled' if enabled else 'Disabled'} MCP server '{name}' in {store.path}."


def reload_running(home: Home) -> None:
    from hermes.live.control_client import live_sessions

    if live_sessions(home):
        from hermes.cli.status import reload_sessions

        reload_sessions(home, as_json=False)


@click.command("enable")
@click.argument("name", shell_complete=complete_servers)
@scope_option
def enable_command(name: str, scope: str) -> None:
    """Switch a server on (running sessions reload)."""
    _set_enabled(name, True, scope)


@click.command("disable")
@click.argument("name", shell_complete=complete_servers)
@scope_option
def disable_command(name: str, scope: str) -> None:
    """Switch a server off, keeping its settings (running sessions reload)."""
    _set_enabled(name, False, scope)


@click.command("logout")
@click.argument("name", shell_complete=complete_servers)
def logout_command(name: str) -> None:
    """Forget a server's OAuth tokens (and its dynamic client registration)."""
    from hermes.mcp.oauth.storage import delete_tokens

    home = Home.from_env()
    if name not in known_names(home):
        raise NoSuchServer(name, suggestion(name, known_names(home)))
    removed = delete_tokens(home, name)
    say(f"Logged out of '{name}': its OAuth tokens are deleted." if removed else
        f"'{name}' has no stored OAuth tokens; nothing to delete.")


__all__ = ["list_rows", "selection", "store_for"]
