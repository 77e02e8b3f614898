"""`hermes mcp install <name>`: settings, probe, tool checklist — in one command.

(1) Settings come from flags, then from what is already configured, then from a prompt, then from
the manifest's default. Secrets go to `.env` (0600) and `config.yaml` refers to them as `${NAME}`;
they are never written into `config.yaml`. (2) The server is probed for its tools. (3) A checklist
picks the tools: a previous selection wins, then the manifest's `default_enabled`, else all start
checked, with the tools the manifest advises against marked (`--yes` leaves those out); everything
checked writes no filter. A failed probe offers to keep the server, disabled, and says why it failed;
declining restores config.yaml and .env as they were, and so does an interruption at any step.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes.catalog.manifest import CatalogAuth, CatalogServer, HttpEndpoint, Setting, StdioLaunch, load_entries
from hermes.catalog.states import CatalogState
from hermes.config.dotenv import read_dotenv, set_dotenv
from hermes.config.edit import add_server, set_server_enabled, set_tool_include
from hermes.config.launchers import Warmed, run_warm, warm_command
from hermes.config.model import ServerConfig
from hermes.config.store import ConfigStore
from hermes.config.transaction import Transaction, edit_transaction
from hermes.errors import HermesError, UsageError
from hermes.home import Home
from hermes.interrupts import Interrupted

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

class ToolInfo(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...


class ProbeResult(Protocol):
    """What installing needs to know of a probe (the session's `ProbeReport` is one)."""

    @property
    def ok(self) -> bool: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def tools(self) -> Sequence[ToolInfo]: ...


Probe = Callable[[Home, str], ProbeResult]
Ask = Callable[[Setting], str | None]
# (tools with their descriptions, what starts checked, what the entry advises against) -> the choice
ChooseTools = Callable[[list[tuple[str, str]], set[str], set[str]], list[str] | None]
Confirm = Callable[[str], bool]


class NoSuchEntry(HermesError):
    exit_code = 3

    def __init__(self, name: str) -> None:
        super().__init__(f"The MCP catalog has no entry '{name}' (see `hermes mcp catalog`).")


@dataclass
class Override:
    """Tests (and people with a local build) can point an entry at another launch command or URL."""

    command: str | None = None
    args: list[str] | None = None
    url: str | None = None


@dataclass
class InstallOutcome:
    name: str
    saved: bool
    enabled: bool
    tools: list[str] = field(default_factory=list)
    selected: list[str] | None = None  # None: every tool (no filter written)
    failure: str | None = None
    post_install: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def selection(self) -> str:
        """What was selected, in words: "all tools", or "3 of 10 tools"."""
        return "all tools" if self.selected is None else f"{len(self.selected)} of {len(self.tools)} tools"


def _substitute(value: Any, literal: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _REFERENCE.sub(lambda m: literal.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [_substitute(v, literal) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, literal) for k, v in value.items()}
    return value


def server_entry(entry: CatalogServer, values: dict[str, str], override: Override | None = None) -> dict[str, Any]:
    """The config.yaml entry: non-secret settings written in, secrets left as `${NAME}`."""
    literal = _literal(entry, values)
    transport = entry.transport
    result: dict[str, Any] = {}
    if isinstance(transport, StdioLaunch):
        result["command"] = _substitute(transport.command, literal)
        if transport.args:
            result["args"] = _substitute(list(transport.args), literal)
        if transport.env:
            result["env"] = _substitute(dict(transport.env), literal)
    else:
        assert isinstance(transport, HttpEndpoint)
        result["url"] = _substitute(transport.url, literal)
        if transport.headers:
            result["headers"] = _substitute(dict(transport.headers), literal)
        if entry.auth is CatalogAuth.OAUTH:
            result["auth"] = "oauth"
            if entry.scope:
                result["oauth"] = {"scope": entry.scope}
    if entry.roots is not None:
        # The server is told exactly these folders as its roots (and no roots otherwise).
        result["roots"] = _substitute(list(entry.roots), literal)
    if entry.asks_approval:
        result["approval"] = {"ask": list(entry.asks_approval)}
    if entry.sandbox is not None and isinstance(transport, StdioLaunch):
        result["sandbox"] = entry.sandbox.to_data()
    if override is not None:
        if override.command:
            result = {k: v for k, v in result.items() if k not in ("url", "headers", "auth", "oauth")}
            result["command"] = override.command
            result["args"] = list(override.args or [])
        elif override.url:
            result = {k: v for k, v in result.items() if k not in ("command", "args", "cwd", "sandbox")}
            result["url"] = override.url
    return result


def _resolve_settings(entry: CatalogServer, given: dict[str, str], known: dict[str, str], ask: Ask | None
                      ) -> dict[str, str]:
    unknown = sorted(set(given) - {s.name for s in entry.settings})
    if unknown:
        raise UsageError(f"'{entry.name}' has no setting {unknown[0]} (its settings: "
                         f"{', '.join(s.name for s in entry.settings) or 'none'}).")
    values: dict[str, str] = {}
    for setting in entry.settings:
        value = given.get(setting.name) or known.get(setting.name)
        if value is None and ask is not None:
            value = ask(setting)
        if value is None:
            value = setting.default
        if not value and setting.required:
            raise UsageError(f"'{entry.name}' needs {setting.name} ({setting.prompt}); pass --set "
                             f"{setting.name}=... or run interactively.")
        if value:
            values[setting.name] = os.path.expanduser(value) if not setting.secret and value.startswith("~") \
                else value
    return values


def install_step(entry: CatalogServer) -> list[str] | None:
    """What fills the package cache before the first start: the entry's own step, or the launcher's."""
    if entry.install:
        return list(entry.install)
    if isinstance(entry.transport, StdioLaunch):
        return warm_command(entry.transport.command, entry.transport.args)
    return None


def after_install(entry: CatalogServer, values: dict[str, str]) -> str:
    """The entry's closing words, with its settings' values in (so "exposes ${ROOT}" names the folder)."""
    return str(_substitute(entry.post_install, _literal(entry, values)))


def _literal(entry: CatalogServer, values: dict[str, str]) -> dict[str, str]:
    """The settings written into the config as they are (secrets stay `${NAME}`)."""
    return {s.name: values[s.name] for s in entry.settings if not s.secret and s.name in values}


def _keep_disabled_or_undo(store: ConfigStore, entry: CatalogServer, reason: str, transaction: Transaction,
                           confirm: Confirm, values: dict[str, str]) -> InstallOutcome:
    """The server could not be reached: keep it disabled (if the user agrees) or undo everything."""
    if confirm(reason):
        with store.edit() as doc:
            set_server_enabled(doc, entry.name, False)
        return InstallOutcome(entry.name, True, False, failure=reason, post_install=after_install(entry, values))
    transaction.rollback()  # config.yaml and .env, byte for byte as before the install began
    return InstallOutcome(entry.name, False, False, failure=reason)


def preselection(entry: CatalogServer, tools: list[str], previous: tuple[str, ...] | None) -> set[str]:
    if previous is not None:
        return {t for t in tools if t in previous}
    if entry.default_enabled is not None:
        return {t for t in tools if t in entry.default_enabled}
    return {t for t in tools if t not in entry.default_excluded}


def install_entry(home: Home, name: str, *, given: dict[str, str], ask: Ask | None, choose: ChooseTools | None,
                  confirm_save_disabled: Confirm, probe: Probe, override: Override | None = None,
                  login: Callable[[Home, str], None] | None = None,
                  prepare: Callable[[list[str]], Warmed] | None = None) -> InstallOutcome:
    """The whole install as one transaction: an interruption at any step (a prompt, the package
    download, the probe, the login, the checklist) leaves config.yaml and .env as they were."""
    entries, _ = load_entries(home.mcp_catalog)
    entry = entries.get(name)
    if entry is None:
        raise NoSuchEntry(name)
    store = ConfigStore(home)
    config = store.load()
    with edit_transaction(home) as transaction:
        return _install(home, entry, store, config.mcp_servers.get(name), transaction, given=given, ask=ask,
                        choose=choose, confirm=confirm_save_disabled, probe=probe, override=override, login=login,
                        prepare=prepare)


def _install(home: Home, entry: CatalogServer, store: ConfigStore, previous: ServerConfig | None,
             transaction: Transaction, *, given: dict[str, str], ask: Ask | None, choose: ChooseTools | None,
             confirm: Confirm, probe: Probe, override: Override | None,
             login: Callable[[Home, str], None] | None, prepare: Callable[[list[str]], Warmed] | None
             ) -> InstallOutcome:
    name = entry.name
    values = _resolve_settings(entry, given, read_dotenv(home.dotenv), ask)
    warnings: list[str] = []
    secrets = {s.name: values[s.name] for s in entry.settings if s.secret and s.name in values}
    if secrets:
        set_dotenv(home.dotenv, secrets)
    with store.edit() as doc:
        add_server(doc, name, server_entry(entry, values, override), replace=True)
        if previous is not None and previous.tools.include is not None:
            set_tool_include(doc, name, list(previous.tools.include))
    step = install_step(entry) if override is None else None
    step_failed: Warmed | None = None
    if step:
        # The pinned package is fetched first, so the probe is not a cold start that outlasts its timeout.
        warmed = (prepare or run_warm)(step)
        if not warmed.ok:
            step_failed = warmed
            warnings.append(f"The install step `{' '.join(step)}` failed ({warmed.detail}); trying the server "
                            f"anyway.")
    if entry.auth is CatalogAuth.OAUTH and login is not None and not home.has_tokens(name):
        try:
            login(home, name)
        except Interrupted:
            raise
        except HermesError as exc:
            return _keep_disabled_or_undo(store, entry, str(exc), transaction, confirm, values)
    report = probe(home, name)
    if not report.ok:
        reason = report.reason or "unknown reason"
        if step and step_failed is not None:
            # The failed download is usually the cause; its own words say more than the probe's.
            output = "".join(f"\n    {line}" for line in step_failed.output)
            reason += f"; before that, the install step `{' '.join(step)}` failed ({step_failed.detail}){output}"
        return _keep_disabled_or_undo(store, entry, reason, transaction, confirm, values)
    tools = [(t.name, t.description) for t in report.tools]
    names = [t for t, _ in tools]
    earlier = previous.tools.include if previous else None
    preselected = preselection(entry, names, earlier)
    # The checklist starts with every tool checked (what the entry advises against is marked, to
    # uncheck); `--yes`, with no checklist, takes the entry's own safe selection.
    checked = preselected if earlier is not None or entry.default_enabled is not None else set(names)
    cautions = {t for t in names if t in entry.default_excluded}
    picked = choose(tools, checked, cautions) if choose is not None else sorted(preselected)
    if picked is None:
        picked = sorted(preselected)
    include = None if set(picked) >= set(names) else [t for t in names if t in picked]
    with store.edit() as doc:
        set_tool_include(doc, name, include)
    return InstallOutcome(name, True, True, names, include, post_install=after_install(entry, values),
                          warnings=warnings)


@dataclass(frozen=True)
class CatalogRow:
    entry: CatalogServer
    state: CatalogState

    def to_json(self) -> dict[str, Any]:
        return {**self.entry.to_json(), "state": self.state.value}


@dataclass(frozen=True)
class CustomRow:
    """A configured server that did not come from the catalog."""

    name: str
    transport: str
    state: CatalogState

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "transport": self.transport, "state": self.state.value}


def catalog_states(home: Home) -> tuple[list[CatalogRow], list[CustomRow], list[str]]:
    """Rows for every entry with its state, rows for configured servers that are not from the catalog."""
    entries, warnings = load_entries(home.mcp_catalog)
    config = ConfigStore(home).load()
    rows = []
    for name, entry in sorted(entries.items()):
        configured = config.mcp_servers.get(name)
        if configured is None:
            state = CatalogState.AVAILABLE
        elif entry.auth is CatalogAuth.OAUTH and configured.enabled and home.has_tokens(name):
            state = CatalogState.ENABLED
        else:
            state = CatalogState.INSTALLED_ENABLED if configured.enabled else CatalogState.INSTALLED_DISABLED
        rows.append(CatalogRow(entry, state))
    custom = [CustomRow(n, c.transport_name, CatalogState.CUSTOM_ENABLED if c.enabled else CatalogState.CUSTOM_DISABLED)
              for n, c in config.mcp_servers.items() if n not in entries]
    return rows, custom, warnings
