"""Catalog manifests: one JSON file per entry under `entries/`, with a versioned schema.

A manifest with a schema version this hermes does not know is skipped with a warning (a newer
hermes may have written it); one that is malformed is skipped with the file and the rule it
broke. Read with the validation kit, like every other file hermes reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from hermes.config.sandbox import SandboxSettings
from hermes.errors import InvalidFile
from hermes.files import UnreadableFile, read_text_bounded
from hermes.validation import (
    Invalid,
    Loc,
    enum_choice,
    flag,
    items,
    mapping,
    nonempty_text,
    optional,
    required,
    text,
    text_map,
    texts,
)

ENTRIES = Path(__file__).with_name("entries")
SCHEMA = 1
MAX_MANIFEST_BYTES = 256 * 1024
_ENTRY_KEYS = ("schema", "name", "title", "description", "transport", "auth", "tools", "install", "post_install",
               "roots", "approval", "sandbox")


class CatalogEntryError(InvalidFile):
    """A catalog manifest broke a rule."""


class CatalogAuth(StrEnum):
    """How a catalog server's user proves who they are."""

    NONE = "none"
    API_KEY = "api_key"  # a key the user pastes, kept in .env
    OAUTH = "oauth"  # a sign-in in the browser


@dataclass(frozen=True)
class StdioLaunch:
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HttpEndpoint:
    url: str
    headers: dict[str, str] = field(default_factory=dict)


CatalogTransport = StdioLaunch | HttpEndpoint


@dataclass(frozen=True)
class Setting:
    name: str
    prompt: str
    secret: bool
    default: str | None = None
    required: bool = True

    @classmethod
    def read(cls, value: Any, loc: Loc) -> Setting:
        data = mapping(value, loc, ("name", "prompt", "secret", "default", "required"))
        return cls(required(data, "name", loc, nonempty_text), required(data, "prompt", loc, nonempty_text),
                   optional(data, "secret", loc, flag, False), optional(data, "default", loc, text, None),
                   optional(data, "required", loc, flag, True))


@dataclass(frozen=True)
class CatalogServer:
    name: str
    title: str
    description: str
    transport: CatalogTransport
    auth: CatalogAuth
    settings: tuple[Setting, ...]
    default_enabled: tuple[str, ...] | None
    default_excluded: tuple[str, ...]
    install: tuple[str, ...] | None
    post_install: str
    scope: str | None = None
    file: str = ""
    roots: tuple[str, ...] | None = None  # the folders the server may work in (settings may fill them)
    asks_approval: tuple[str, ...] = ()  # tools that always ask before they run (`approval: {ask: [...]}`)
    sandbox: SandboxSettings | None = None  # what a stdio server needs from its sandbox (network, paths)

    @property
    def is_remote(self) -> bool:
        return isinstance(self.transport, HttpEndpoint)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description, "auth": self.auth,
                "transport": "http" if self.is_remote else "stdio",
                "settings": [{"name": s.name, "prompt": s.prompt, "secret": s.secret, "default": s.default}
                             for s in self.settings]}


def _transport(value: Any, loc: Loc) -> CatalogTransport:
    kind = mapping(value, loc).get("type")
    if kind == "stdio":
        data = mapping(value, loc, ("type", "command", "args", "env"))
        return StdioLaunch(required(data, "command", loc, nonempty_text, why="is required for a stdio transport"),
                           optional(data, "args", loc, texts, ()), optional(data, "env", loc, text_map, {}))
    if kind == "http":
        data = mapping(value, loc, ("type", "url", "headers"))
        return HttpEndpoint(required(data, "url", loc, nonempty_text, why="is required for an http transport"),
                            optional(data, "headers", loc, text_map, {}))
    raise Invalid((*loc, "type"), f"must be 'stdio' or 'http' (got {kind!r})")


def parse_manifest(data: Any, file: str) -> CatalogServer:
    """One manifest; `CatalogEntryError` names the file, the key and the rule."""
    try:
        return _manifest(data, file)
    except Invalid as exc:
        raise CatalogEntryError.from_invalid(exc, file) from None


def _manifest(value: Any, file: str) -> CatalogServer:
    data = mapping(value, (), _ENTRY_KEYS, what="a JSON object")
    nothing: dict[str, Any] = {}
    no_settings: tuple[Setting, ...] = ()
    auth = optional(data, "auth", (), lambda v, loc: mapping(v, loc, ("type", "settings", "scope")), nothing)
    kind = optional(auth, "type", ("auth",), enum_choice(CatalogAuth), CatalogAuth.NONE)
    settings = optional(auth, "settings", ("auth",), lambda v, loc: items(v, loc, Setting.read), no_settings)
    tools = optional(data, "tools", (), lambda v, loc: mapping(v, loc, ("default_enabled", "default_excluded")),
                     nothing)
    install = optional(data, "install", (), lambda v, loc: mapping(v, loc, ("command",)), None)
    return CatalogServer(
        name=required(data, "name", (), nonempty_text),
        title=required(data, "title", (), nonempty_text),
        description=required(data, "description", (), nonempty_text),
        transport=required(data, "transport", (), _transport),
        auth=kind,
        settings=settings if kind is CatalogAuth.API_KEY else (),
        default_enabled=optional(tools, "default_enabled", ("tools",), texts, None),
        default_excluded=optional(tools, "default_excluded", ("tools",), texts, ()),
        install=required(install, "command", ("install",), texts) if install is not None else None,
        post_install=optional(data, "post_install", (), text, ""),
        scope=optional(auth, "scope", ("auth",), text, None),
        file=file,
        roots=optional(data, "roots", (), texts, None),
        asks_approval=optional(optional(data, "approval", (), lambda v, loc: mapping(v, loc, ("ask",)), nothing),
                               "ask", ("approval",), texts, ()),
        sandbox=optional(data, "sandbox", (), SandboxSettings.read_setting, None),
    )


def load_entries(user_folder: Path | None = None) -> tuple[dict[str, CatalogServer], list[str]]:
    """The shipped entries, then the user's own (`HERMES_HOME/mcp-catalog/*.json`) adding or overriding."""
    entries: dict[str, CatalogServer] = {}
    warnings: list[str] = []
    files = sorted(ENTRIES.glob("*.json")) + (sorted(user_folder.glob("*.json")) if user_folder else [])
    for path in files:
        try:
            data = json.loads(read_text_bounded(path, MAX_MANIFEST_BYTES))
        except (OSError, ValueError, RecursionError) as exc:
            reason = exc.reason if isinstance(exc, UnreadableFile) else f"not readable JSON ({exc})"
            warnings.append(f"{path.name}: skipped, {reason}")
            continue
        version = data.get("schema") if isinstance(data, dict) else None
        if version != SCHEMA:
            warnings.append(f"{path.name}: skipped, catalog schema version {version!r} is not supported "
                            f"(this hermes reads version {SCHEMA})")
            continue
        try:
            entry = parse_manifest(data, path.name)
        except CatalogEntryError as exc:
            warnings.append(f"{path.name}: skipped, {exc.key}: {exc.rule}" if exc.key else
                            f"{path.name}: skipped, {exc.rule}")
            continue
        entries[entry.name] = entry
    return entries, warnings
