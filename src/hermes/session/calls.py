"""A call of the surface, from its registered name to one `CallResult`.

This is the one boundary a result crosses on its way to anyone: the server's answer is redacted
and stripped of hidden characters here (`clean_result`) and rendered once; failure sentences (which
may quote a server's error message) are cleaned the same way here too.
What comes back is read the same way by chat, `hermes tools call` and `serve` (see
`hermes.tools.call_result`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from hermes.errors import HermesError
from hermes.mcp.describe import describe_failure, one_line
from hermes.mcp.requests import GetPrompt, ListPrompts, ListResources, ReadResource
from hermes.mcp.sdk import connection_closed, no_back_channel, timed_out
from hermes.mcp.snapshot import ServerNotConnected
from hermes.mcp.supervisor import Supervisor
from hermes.mcp.tasks import Progress
from hermes.security.clean import clean_text, clean_value
from hermes.security.redact import Redactor
from hermes.session.roster import Roster
from hermes.tools import utilities
from hermes.tools.call_result import CallResult, Declined, NotAvailable, Ok, Shown, ToolError
from hermes.tools.filters import tool_allowed
from hermes.tools.naming import owners, registered_name
from hermes.tools.permissions import Asker, Permission, Verdict
from hermes.tools.pins import ChangedTool
from hermes.tools.results import RenderedResult, ResultFiles, budget_of, clean_result, render_result
from hermes.tools.surface import Surface, SurfaceTool
from hermes.tools.toolsets import BUILTIN_SERVERS, is_builtin, shown_server
from hermes.validation import suggestion


class Calls:
    def __init__(self, roster: Roster, redactor: Redactor, files: ResultFiles, *, surface: Callable[[], Surface],
                 held_back: Callable[[], list[ChangedTool]], verdict: Callable[[SurfaceTool, bool], Verdict]) -> None:
        """`files`: where long results are kept (computed once: building paths shows in per-call
        cost); `surface`: what a model sees now; `held_back`: tools whose definitions changed."""
        self._roster = roster
        self._redactor = redactor
        self._files = files
        self._surface = surface
        self._held_back = held_back
        self._verdict = verdict

    def _failed(self, text: str, **extra: Any) -> ToolError:
        return ToolError(Shown(clean_text(text, self._redactor)), **extra)

    async def call(self, name: str, arguments: dict[str, Any], *, on_progress: Progress | None = None,
                   asker: Asker | None = None, cautious: bool = False) -> CallResult:
        """`asker` answers for a tool that asks (None: nobody can, so it does not run); `cautious`: a
        model chose the call, so a tool that may change things asks (`hermes.tools.permissions`)."""
        roster = self._roster
        tool = self._surface().tools.get(name)
        if tool is None:
            return await self._not_on_surface(name)
        connection = roster.supervisor(tool.server)
        config = roster.server_config(tool.server)
        if connection is None or config is None:
            return self._failed(f"MCP server '{tool.server}' was removed; run `hermes tools list`.")
        if not connection.snapshot.offers_tools:
            return await self._unavailable(connection)
        if tool.kind == "tool" and not tool_allowed(tool.original, config.tools):
            return self._failed(_filtered(tool.original, tool.server))
        found = self._verdict(tool, cautious)
        if found.permission is Permission.DENY:
            return Declined(Shown(f"Not run: {name} is denied by {found.because}."))
        if found.permission is Permission.ASK:
            refusal = f"Not run: {name} needs a yes ({found.because}) and nobody can be asked here." \
                if asker is None else await asker(tool, arguments, found)
            if refusal is not None:
                return Declined(Shown(clean_text(refusal, self._redactor)))
        try:
            if tool.kind == "tool":
                return self._tool_result(await connection.call(tool.original, arguments, on_progress=on_progress),
                                         tool)
            rendered = await self._utility(connection, tool, arguments)
            return Ok(Shown(rendered.text, rendered.structured))
        except ServerNotConnected:
            return await self._unavailable(connection)
        except MCPError as exc:
            if connection_closed(exc):
                return self._failed(f"The connection to MCP server '{tool.server}' closed during the call; "
                                    f"hermes reconnects by itself, so try again shortly.")
            if timed_out(exc):
                return self._failed(f"Tool '{tool.original}' of MCP server '{tool.server}' timed out after "
                                    f"{config.timeout:g} s; the call was cancelled on the server.")
            said = f"MCP server '{tool.server}' answered with an error: {one_line(exc.error.message)}"
            if no_back_channel(exc):
                # An SDK server that asks its client the handshake-era way, on the session: a
                # 2026-07-28 connection has no session to ask on. The handshake era does.
                said += (f" The server asks its client questions the 2025-11-25 way, which a 2026-07-28 "
                         f"connection cannot carry: set `protocol: legacy` for '{tool.server}' in config.yaml, "
                         f"then run `hermes mcp reload`.")
            return self._failed(said)
        except HermesError as exc:  # already in the user's terms, e.g. a sign-in for more scope
            return self._failed(str(exc))
        except Exception as exc:
            if not connection.snapshot.connected:
                return await self._unavailable(connection)
            return self._failed(f"Calling '{tool.original}' on MCP server '{tool.server}' failed: "
                                f"{describe_failure(exc)}")

    async def _unavailable(self, connection: Supervisor) -> NotAvailable:
        """Why the server's tools are missing, from a look at its app taken now (not at the last round)."""
        await connection.look_at_app()
        return NotAvailable(self._roster.why(connection.name))

    def _tool_result(self, result: types.CallToolResult, tool: SurfaceTool) -> CallResult:
        raw = clean_result(result, self._redactor)  # redacted now: the one boundary, whoever reads it
        files, server, budget = self._files, tool.server, budget_of(tool.definition)

        def render() -> tuple[str, dict[str, Any] | None]:
            rendered = render_result(raw, files=files, server=server, budget=budget)
            return rendered.text, rendered.structured

        shown = Shown(render=render)  # rendered for a reader that reads it (serve hands on `raw`)
        return ToolError(shown, raw) if raw.is_error else Ok(shown, raw)

    async def _utility(self, connection: Supervisor, tool: SurfaceTool, arguments: dict[str, Any]
                       ) -> RenderedResult:
        if tool.kind == "list_resources":
            rendered = utilities.resource_listing(await connection.request(ListResources()))
        elif tool.kind == "read_resource":
            uri = str(arguments.get("uri", ""))
            rendered = utilities.resource_contents(await connection.request(ReadResource(uri)))
        elif tool.kind == "list_prompts":
            rendered = utilities.prompt_listing(await connection.request(ListPrompts()))
        else:
            prompt = await connection.request(GetPrompt(str(arguments.get("name", "")),
                                                        utilities.prompt_arguments(arguments)))
            rendered = utilities.prompt_messages(prompt)
        redact = self._redactor
        structured = clean_value(rendered.structured, redact) if rendered.structured is not None else None
        return RenderedResult(clean_text(rendered.text, redact), structured, rendered.is_error)

    async def _not_on_surface(self, name: str) -> CallResult:
        """Why `name` is not a tool on the surface, as precisely as can be told."""
        roster = self._roster
        snapshots = roster.snapshots()
        surface = self._surface()
        for server in owners(name, BUILTIN_SERVERS):
            if server not in snapshots:
                where = f"platform '{roster.platform}' (add it under platform_toolsets.{roster.platform} in " \
                        f"config.yaml)" if roster.platform else "a session without a platform (`hermes mcp serve`)"
                return self._failed(f"The agent's own toolset '{shown_server(server)}' is not enabled for {where}.")
        for server in owners(name, snapshots):
            snapshot = snapshots[server]
            if server not in roster.platform_servers():
                return self._failed(f"MCP server '{server}' is not enabled for platform '{roster.platform}'.")
            connection = roster.supervisor(server)
            if not snapshot.offers_tools and connection is not None:
                return await self._unavailable(connection)
            for skipped in surface.skipped:
                if skipped.name == name and skipped.denied:
                    return Declined(Shown(f"Not run: {name} is {skipped.why}."))
                if skipped.name == name:
                    return self._failed(f"Tool '{name}' was skipped: {skipped.why}.")
            for changed in self._held_back():
                if changed.server == server and registered_name(server, changed.tool) == name:
                    return self._failed(changed.sentence())
            for offered in snapshot.tools:
                if registered_name(server, offered.name) == name:
                    return self._failed(_filtered(offered.name, server))
            hint = suggestion(name, list(surface.tools))
            owner = f"The agent's own toolset '{shown_server(server)}'" if is_builtin(server) \
                else f"MCP server '{server}'"
            return self._failed(f"{owner} has no tool named '{name}'{hint}.", no_such_tool=True)
        hint = suggestion(name, list(surface.tools))
        return self._failed(f"No tool named '{name}'{hint}. Run `hermes tools list` to see the tool surface.",
                            no_such_tool=True)


def _filtered(tool: str, server: str) -> str:
    return f"Tool '{tool}' of MCP server '{server}' is filtered out by tools.include/exclude in config.yaml."
