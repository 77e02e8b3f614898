"""What the dashboard's buttons do: the same config edits as the matching `hermes` commands.

Each action calls the function its CLI command calls (so `config.yaml` changes byte for byte the
same way: comments kept, written atomically under the config lock), off the event loop, and then
has the dashboard's own session and every other running session reload, as the CLI does.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from hermes.cli.configure import write_tool_selection
from hermes.cli.mcp_config_commands import add_entry, entry_data, remove_entry, store_for, write_enabled
from hermes.config.model import SERVER_NAME
from hermes.errors import HermesError, UsageError
from hermes.session.core import Session

PERMISSION_CHOICES = ("allow", "ask", "deny", "default")
MAX_FIELD = 4_000  # one form field: a command line, a URL, a block of env lines


@dataclass(frozen=True)
class NewServer:
    """The add form, as typed: a command line (split like a shell would) or a URL."""

    name: str
    command_line: str = ""
    env: str = ""  # KEY=VALUE, one a line
    url: str = ""
    headers: str = ""  # Key: value, one a line
    scope: str = "user"


class Actions:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.home = session.home

    async def set_enabled(self, name: str, enabled: bool, scope: str) -> str:
        return await self._written(write_enabled, self.home, name, enabled, _scope(scope))

    async def remove(self, name: str, scope: str) -> str:
        return await self._written(remove_entry, self.home, name, _scope(scope))

    async def add(self, form: NewServer) -> str:
        def write() -> str:
            from hermes.config.client_json import translate

            name = form.name.strip()
            if not SERVER_NAME.fullmatch(name):
                raise UsageError(f"'{name}' is not a server name: letters, digits, '-' and '_' only.")
            # The page's own words for what `entry_data` would say in the CLI's (`--url`, `--`).
            if bool(form.command_line.strip()) == bool(form.url.strip()):
                raise UsageError("Fill in either a command line (a stdio server) or a URL (an HTTP server).")
            if name in store_for(self.home, _scope(form.scope)).load().mcp_servers:
                raise UsageError(f"A server named '{name}' is already in the {form.scope} config: remove it "
                                 f"first, or choose another name.")
            try:
                words = tuple(shlex.split(_field("command", form.command_line)))
            except ValueError as exc:
                raise UsageError(f"The command line cannot be read ({exc}).") from None
            data = entry_data(name, words, None, (), _lines("env", form.env), None, form.url.strip() or None,
                              _lines("headers", form.headers), None, None, False)
            translated = translate(name, data)
            store, secrets_note = add_entry(self.home, _scope(form.scope), name, translated.entry,
                                            translated.secrets, replace=False)
            return " ".join([f"Added MCP server '{name}' to {store.path}.", *translated.notes,
                             *([secrets_note] if secrets_note else [])])

        return await self._written(write)

    async def select_tools(self, name: str, scope: str, picked: list[str]) -> str:
        """The tool checklist: every offered tool picked removes the filter, as `hermes mcp configure`."""
        from hermes.dashboard.view import utility_kinds

        snapshot = self.session.snapshots().get(name)
        config = self.session.server_config(name)
        offered = [tool.name for tool in snapshot.tools] if snapshot else []
        if snapshot is not None and config is not None:
            offered += utility_kinds(snapshot, config)  # the checklist shows them: kept only if checked
        if not offered:
            raise UsageError(f"'{name}' has listed no tools yet; test it first.")
        unknown = sorted(set(picked) - set(offered))
        if unknown:
            raise UsageError(f"'{name}' offers no tool named {', '.join(unknown)}.")
        return await self._written(write_tool_selection, store_for(self.home, _scope(scope)), name, offered, picked)

    async def permit(self, pattern: str, permission: str) -> str:
        """`hermes tools permit PATTERN allow|ask|deny|default`."""
        from hermes.cli.tools_commands import write_permission

        if permission not in PERMISSION_CHOICES:
            raise UsageError(f"A permission is one of {', '.join(PERMISSION_CHOICES)}.")
        changed, said = await anyio.to_thread.run_sync(write_permission, self.home, pattern, permission)
        if changed:
            await self.reload()
        return said

    async def _written(self, write: Callable[..., str], *args: Any) -> str:
        """Run a config edit off the event loop, then reload; the sentence it returned."""
        said = await anyio.to_thread.run_sync(write, *args)
        await self.reload()
        return said

    async def reload(self) -> None:
        """This session first (the page shows it), then every other running session, as the CLI does."""
        from hermes.live.control_client import ask_async, live_sessions

        await self.session.reload()
        for live in await anyio.to_thread.run_sync(live_sessions, self.home):
            if live.endpoint.pid != os.getpid():
                await ask_async(live, "POST", "/reload")


def _scope(scope: str) -> str:
    if scope not in ("user", "project"):
        raise UsageError("The scope is user or project; a plugin's server goes with its plugin.")
    return scope


def _field(what: str, text: str) -> str:
    if len(text) > MAX_FIELD:
        raise UsageError(f"The {what} field is longer than {MAX_FIELD} characters.")
    return text


def _lines(what: str, text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in _field(what, text).splitlines() if line.strip())


__all__ = ["PERMISSION_CHOICES", "Actions", "HermesError", "NewServer"]
