"""`hermes tools …`: the tool surface exactly as a model sees it, and calling one tool."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from hermes import interrupts
from hermes.cli.completion import complete_servers, complete_tools
from hermes.cli.options import json_option, platform_option, wait_option
from hermes.cli.output import print_json, print_table, printable, say
from hermes.cli.progress import progress
from hermes.config.store import ConfigStore
from hermes.errors import HermesError, UsageError
from hermes.home import Home

if TYPE_CHECKING:  # the command modules load on every invocation: types only
    from hermes.tools.permissions import Verdict
    from hermes.tools.surface import SurfaceTool


@click.group("tools")
def tools_group() -> None:
    """The tool surface a model sees."""


@tools_group.command("list")
@platform_option()
@wait_option
@json_option
def list_command(platform: str | None, wait: float, as_json: bool) -> None:
    """Every registered tool, plus skipped tools and unavailable servers with the reason."""
    from hermes.session.core import Session, SessionSettings
    from hermes.session.probe import first_line

    async def run() -> dict[str, Any]:
        async with Session(Home.from_env(), SessionSettings(platform=platform, start_wait=wait)) as session:
            surface = session.surface()
            return {
                "platform": platform,
                # What chat does with each tool (a model chose the call): allow, ask or deny, and why.
                "tools": [t.to_json() | session.tools.verdict(t, cautious=True).to_json()
                          for t in surface.tools.values()],
                "skipped": [s.to_json() for s in surface.skipped],
                "unavailable": [u.payload() for u in session.unavailable()],
                "changed": [c.to_json() for c in session.tools.changed_tools()],
                "warnings": session.warnings,
            }

    with progress("Connecting to the configured MCP servers…"):
        data = interrupts.run(run)
    if as_json:
        print_json(data)
        return
    if data["tools"]:
        print_table(["TOOL", "TOOLSET", "PERMISSION", "DESCRIPTION"],
                    [[t["name"], t["toolset"], t["permission"], first_line(t["description"])[:80]]
                     for t in data["tools"]], shrink=["DESCRIPTION"])
    else:
        say("No tools on the surface.")
    for skipped in data["skipped"]:
        say(f"{'denied' if skipped.get('denied') else 'skipped'}: {skipped['original']} ({skipped['server']}): "
            f"{skipped['why']}")
    for missing in data["unavailable"]:
        say(f"unavailable: {missing['server']}: {missing['error']}")
    for changed in data["changed"]:
        what = "is new" if changed["new"] else "changed its definition"
        say(f"held back: {changed['tool']} ({changed['server']}) {what}; see it and accept it with "
            f"`{changed['approve']}`")
    for warning in data["warnings"]:
        say(f"warning: {warning}", err=True)


def _server_for(name: str, home: Home) -> frozenset[str] | None:
    """Start only the server a registered name belongs to; None (all) when it is not clear."""
    from hermes.session.servers import configured_servers
    from hermes.tools.naming import owners
    from hermes.tools.toolsets import BUILTIN_SERVERS

    found = owners(name, [*configured_servers(home, ConfigStore(home).load()), *BUILTIN_SERVERS])
    return frozenset(found) or None


@tools_group.command("call")
@click.argument("name", shell_complete=complete_tools)
@click.option("--args", "raw_args", default="{}", help="Arguments as a JSON object.")
@click.option("--yes", "-y", is_flag=True, help="Say yes to a tool a rule says asks first, and answer a server's "
                                                "questions with their defaults (no prompts).")
@platform_option()
@json_option
def call_command(name: str, raw_args: str, yes: bool, platform: str | None, as_json: bool) -> None:
    """Call one tool by its registered name; exit 1 if the tool reports an error.

    Progress the server reports is shown on stderr. If the server asks for input (elicitation), a
    terminal gets a form with the defaults filled in; `--yes` accepts the defaults; otherwise hermes
    declines. A tool that a permission rule says asks first asks here too (y/N on a terminal, or
    `--yes`); a denied tool never runs.
    """
    from hermes.cli.interaction import elicitation_handler, progress_reporter
    from hermes.mcp.handlers import ClientHandlers
    from hermes.session.core import Session, SessionSettings
    from hermes.tools.views import view_hint

    try:
        arguments = json.loads(raw_args)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON: {exc.msg} (column {exc.colno}).") from None
    if not isinstance(arguments, dict):
        raise UsageError("--args must be a JSON object, like '{\"text\": \"hi\"}'.")
    home = Home.from_env()

    async def run() -> tuple[Any, tuple[str, ...], str | None]:
        settings = SessionSettings(platform=platform, only=_server_for(name, home))
        handlers = ClientHandlers(elicitation=elicitation_handler(yes=yes))
        async with Session(home, settings, handlers=handlers) as session:
            tool = session.surface().tools.get(name)
            if tool is not None:
                missing_arguments(tool.input_schema, arguments, name)
            said_yes = tool is not None and await _yes_to(tool, session.tools.verdict(tool, cautious=False), yes)

            async def asked(*_: Any) -> str | None:
                return None if said_yes else f"Not run: {name} asks first; say yes on a terminal or run with --yes."

            with progress_reporter(name) as on_progress, interrupts.stops_the_command():
                result = await session.call(name, arguments, on_progress=on_progress, asker=asked)
            snapshot = session.snapshots().get(tool.server) if tool is not None else None
            hint = view_hint(tool.server, tool.definition) if tool is not None and not result.is_error else None
            return result, snapshot.denials if snapshot is not None else (), hint

    from hermes.tools.call_result import NotAvailable

    result, denials, hint = interrupts.run(run)
    for denial in denials:
        say(f"sandbox: {denial}", err=True)
    if as_json:
        print_json(result.to_json() | ({"sandbox_denials": list(denials)} if denials else {}))
    elif isinstance(result, NotAvailable):
        say(result.text, err=True)
        print_json(result.payload())
    else:
        say(result.text, err=result.is_error)
        if result.structured is not None and not result.text:
            print_json(result.structured)
    if hint is not None:
        say(f"note: {hint}", err=True)
    sys.exit(3 if result.no_such_tool else 1 if result.is_error else 0)


async def _yes_to(tool: SurfaceTool, verdict: Verdict, yes: bool) -> bool:
    """A tool a rule says asks first: `--yes`, or the user's y on a terminal."""
    import anyio.to_thread

    from hermes.tools.permissions import Permission

    if verdict.permission is not Permission.ASK or yes:
        return True
    if not sys.stdin.isatty():
        return False
    question = f"{tool.name} asks first ({verdict.because}). Run it?"
    return bool(await anyio.to_thread.run_sync(lambda: click.confirm(question, default=False, err=True)))


def missing_arguments(schema: dict[str, Any], arguments: dict[str, Any], name: str) -> None:
    """Refuse a call that lacks what the tool's schema requires, before anything is sent."""
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    missing = [r for r in required if isinstance(r, str) and r not in arguments]
    if missing:
        raise UsageError(f"Missing required arguments for {name}: {', '.join(missing)} (`hermes tools describe "
                         f"{name}` shows its parameters).")


@tools_group.command("describe")
@click.argument("name", shell_complete=complete_tools)
@platform_option()
@json_option
def describe_command(name: str, platform: str | None, as_json: bool) -> None:
    """One tool: its description and parameters (--json: the whole definition, input schema included)."""
    from hermes.session.core import Session, SessionSettings

    home = Home.from_env()

    async def run() -> tuple[Any, list[str]]:
        async with Session(home, SessionSettings(platform=platform, only=_server_for(name, home))) as session:
            tools = session.surface().tools
            return tools.get(name), list(tools)

    with progress(f"Connecting to the server of {name}…"):
        tool, names = interrupts.run(run)
    if tool is None:
        from hermes.errors import NoSuchTool
        from hermes.validation import suggestion

        raise NoSuchTool(f"No tool named '{name}' on the surface{suggestion(name, names)}; `hermes tools list` "
                         f"shows them (and why some are missing).")
    definition = tool.definition.model_dump(mode="json", by_alias=True, exclude_none=True) if tool.definition \
        else {"name": tool.original, "description": tool.description, "inputSchema": tool.input_schema}
    if as_json:
        print_json({"name": tool.name, "server": tool.server, "original": tool.original, "kind": tool.kind,
                    "definition": definition})
        return
    say(f"{tool.name}  (tool '{printable(tool.original)}' of MCP server '{tool.server}')")
    for line in _facts(definition):
        say(line)
    if tool.description.strip():
        say("")
        say(printable(tool.description.strip()))
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    say("")
    if not properties:
        say("No parameters.")
        return
    rows = []
    for param, spec in properties.items():
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type") or ("enum" if "enum" in spec else "any")
        kind = "|".join(kind) if isinstance(kind, list) else str(kind)
        if "enum" in spec and isinstance(spec["enum"], list):
            kind += " (" + ", ".join(map(str, spec["enum"]))[:60] + ")"
        detail = str(spec.get("description") or "").strip().split("\n")[0]
        if "default" in spec:
            detail = (detail + f" (default {spec['default']!r})").strip()
        rows.append([str(param), kind, "yes" if param in required else "no", detail])
    print_table(["PARAMETER", "TYPE", "REQUIRED", "DESCRIPTION"], rows, shrink=("DESCRIPTION",))


_HINTS = (("readOnlyHint", "read-only"), ("destructiveHint", "destructive"), ("idempotentHint", "idempotent"),
          ("openWorldHint", "open world"))


def _facts(definition: dict[str, Any]) -> list[str]:
    """What a tool's definition says besides its description and parameters, one line each."""
    lines = []
    if isinstance(definition.get("title"), str) and definition["title"].strip():
        lines.append(f"Title: {printable(definition['title'].strip())}")
    annotations = _mapping(definition.get("annotations"))
    said = [f"{label}: {'yes' if annotations[key] else 'no'}" for key, label in _HINTS
            if isinstance(annotations.get(key), bool)]
    if said:
        lines.append("Annotations: " + ", ".join(said))
    output = definition.get("outputSchema") if isinstance(definition.get("outputSchema"), dict) else None
    if output is not None:
        fields = output.get("properties") if isinstance(output.get("properties"), dict) else {}
        lines.append("Output: structured" + (f" ({', '.join(printable(str(f)) for f in fields)})" if fields else ""))
    execution = _mapping(definition.get("execution"))
    if isinstance(execution.get("taskSupport"), str):
        lines.append(f"Task support: {printable(execution['taskSupport'])}")
    tags = _tags(definition.get("_meta"))
    if tags:
        lines.append("Tags: " + ", ".join(printable(t) for t in tags))
    return lines


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tags(meta: Any) -> list[str]:
    """Tags a server put in `_meta` (FastMCP writes them under its own key)."""
    if not isinstance(meta, dict):
        return []
    found = meta.get("tags")
    for value in meta.values():
        if found is None and isinstance(value, dict) and isinstance(value.get("tags"), list):
            found = value["tags"]
    return sorted(str(t) for t in found) if isinstance(found, list) else []


@tools_group.command("catalog")
@platform_option()
@json_option
def catalog_command(platform: str | None, as_json: bool) -> None:
    """The deferred tool catalog text a model would see (byte-stable for the same state)."""
    from hermes.session.core import Session, SessionSettings

    async def run() -> str:
        async with Session(Home.from_env(), SessionSettings(platform=platform)) as session:
            return session.tools.catalog()

    with progress("Connecting to the configured MCP servers…"):
        text = interrupts.run(run)
    if as_json:
        print_json({"catalog": text})
        return
    click.echo(text, nl=False)


@tools_group.command("search")
@click.argument("query")
@platform_option()
@json_option
def search_command(query: str, platform: str | None, as_json: bool) -> None:
    """What `tool_search` answers for QUERY: matching tools, or what exists and why not."""
    from hermes.session.core import Session, SessionSettings

    async def run() -> tuple[list[dict[str, Any]], str]:
        async with Session(Home.from_env(), SessionSettings(platform=platform)) as session:
            tools, text = await session.tools.search(query)
            return [t.to_json() for t in tools], text

    with progress("Connecting to the configured MCP servers…"):
        tools, text = interrupts.run(run)
    if as_json:
        print_json({"query": query, "tools": tools, "text": text})
    elif tools:
        if text:  # weak matches: said before they are shown
            say(text)
        print_table(["TOOL", "DESCRIPTION"], [[t["name"], (t["description"] or "").split("\n")[0][:80]] for t in tools])
    else:
        say(text)


@tools_group.command("approve")
@click.argument("server", shell_complete=complete_servers)
@click.argument("tool", required=False)
@json_option
def approve_command(server: str, tool: str | None, as_json: bool) -> None:
    """Accept the changed definitions of SERVER's tools (or of TOOL only), after showing what changed.

    hermes pins every tool's definition the first time it uses a server; a tool whose definition
    changes later, or that is new, is held back from the model until accepted here.
    """
    from hermes.cli.mcp_config_commands import require_server
    from hermes.session.core import Session, SessionSettings
    from hermes.tools.pins import ChangedTool

    home = Home.from_env()
    require_server(home, server)

    async def run() -> tuple[list[ChangedTool], list[str], str | None]:
        async with Session(home, SessionSettings(only=frozenset({server}))) as session:
            snapshot = session.snapshots().get(server)
            if snapshot is None or not snapshot.connected:
                return [], [], session.why(server).sentence if snapshot else f"'{server}' did not start"
            changed = [c for c in session.tools.changed_tools() if tool is None or c.tool == tool]
            return changed, session.tools.accept(server, [c.tool for c in changed]), None

    with progress(f"Connecting to '{server}'…"):
        changed, accepted, failure = interrupts.run(run)
    if failure is not None:
        raise HermesError(f"Cannot approve: {failure}")
    if as_json:
        print_json({"server": server, "accepted": accepted, "changes": [c.to_json() for c in changed]})
        return
    if not changed:
        say(f"Nothing to approve: every tool of '{server}' matches what was accepted before"
            + (f" (or '{tool}' is not one of its tools)." if tool else "."))
        return
    for item in changed:
        say(f"{'New tool' if item.new else 'Changed'}: {item.tool}")
        say(item.diff() or "(only in ways that do not change its meaning)")
    say(f"Accepted {len(accepted)} tool definition(s) of '{server}': {', '.join(accepted)}. Running sessions use "
        f"them after `hermes mcp reload`.")


def write_permission(home: Home, pattern: str, permission: str) -> tuple[bool, str]:
    """Put PATTERN under `permissions.<permission>` in config.yaml (`default`: under none), as
    `hermes tools permit` and the dashboard do; whether it changed, and the sentence that says so."""
    from hermes.config.edit import set_permission

    if not pattern.strip() or len(pattern) > 200 or any(c in pattern for c in "\n\r\t"):
        raise UsageError("PATTERN must be a tool name, a toolset or a glob on one line (at most 200 characters).")
    with ConfigStore(home).edit() as doc:
        changed = set_permission(doc, pattern, None if permission == "default" else permission)
    where = f"permissions.{permission}" if permission != "default" else "no permission rule"
    return changed, f"{pattern}: {where} in {home.config}." if changed else \
        f"{pattern} already has {where}; nothing changed."


@tools_group.command("permit")
@click.argument("pattern")
@click.argument("permission", type=click.Choice(["allow", "ask", "deny", "default"]))
def permit_command(pattern: str, permission: str) -> None:
    """Set PATTERN's PERMISSION in config.yaml (`permissions:`): allow, ask or deny; default removes it.

    PATTERN is a registered name (mcp__github__delete_repo, file_write), a tool's own name on every
    server (delete_*), or a toolset (terminal, mcp-github); globs allowed. A deny anywhere wins, then
    an ask, then an allow. Running chats and `serve` pick the change up by themselves.
    """
    home = Home.from_env()
    changed, said = write_permission(home, pattern, permission)
    say(said)
    if changed:
        from hermes.cli.mcp_config_commands import reload_running

        reload_running(home)
