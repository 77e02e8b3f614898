"""The strict parser for `extensions."com.nousresearch.hermes".servers` in a plugin's plugin.json.

Every rule that a declaration can break raises `DeclarationError` naming the server, the path
inside the declaration and the rule, e.g.
`plugin.json servers.blender: app.linux.version.kind 'plist' is only valid under app.darwin`.
Any error is fatal for the whole plugin: a half-understood declaration could admit a server whose
requirements nobody checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from hermes.apps.kinds import CANDIDATE_FIELDS, CANDIDATE_OS, VERSION_FIELDS, VERSION_OS, CandidateKind, VersionKind
from hermes.apps.runtimefile import plain_endpoint_path
from hermes.apps.versions import is_version
from hermes.config.sandbox import SandboxSettings
from hermes.errors import InvalidFile
from hermes.validation import Invalid, Loc, dotted, items, mapping, nonempty_text, optional, required

EXTENSION_KEY = "com.nousresearch.hermes"
OSES = ("darwin", "win32", "linux")
PRESENCES = ("bundle", "executable")
DEFAULT_ENDPOINT_PATH = "/mcp"
# Bounds on where an app may be looked for: each `*` segment lists a folder, so the work grows
# with the product of the matches at every level. These keep a hostile or careless declaration
# from turning validation, the install gate and every session start into minutes of disk walking.
MAX_PATH_SEGMENTS = 24
MAX_WILDCARD_SEGMENTS = 2
MAX_CANDIDATES = 16
MAX_PATH_LENGTH = 1024
MAX_SEGMENT_LENGTH = 255
MAX_STARS_PER_SEGMENT = 3
# Wildcard locations across a whole plugin: each is one bounded directory walk, and a lookup runs
# all of them; this many keeps the worst case of a lookup to a few seconds.
MAX_WILDCARD_LOCATIONS = 16
MAX_DECLARED_SERVERS = 64

_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_ENV_PREFIX = re.compile(r"^(%[A-Za-z_][A-Za-z0-9_]*%|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_BARE_NAME = re.compile(r"^[^/\\\x00]{1,255}$")

class DeclarationError(InvalidFile):
    """A declaration broke a rule, in the form the documents use (SPEC 5.1):
    `plugin.json servers.blender: app.linux.version.kind 'plist' is only valid under app.darwin`."""

    def __init__(self, server: str | None, key: str, rule: str, *, file: str = "plugin.json") -> None:
        self.server = server
        super().__init__(rule, path=file, key=key)

    def describe(self) -> str:
        if self.server is None:
            return f"{self.path} {self.key}: {self.rule}"
        subject = f"{self.key} " if self.key else ""
        return f"{self.path} servers.{self.server}: {subject}{self.rule}"


class LivenessKind(StrEnum):
    SERVER_JSON = "server_json"
    NONE = "none"
    INTERACTIVE_SESSION = "interactive_session"


STATIC = "static"


@dataclass(frozen=True)
class Candidate:
    """One place the app may be: a path (`*` globs one segment) or a lookup of some kind."""

    kind: CandidateKind
    path: str | None = None
    name: str | None = None
    app_id: str | None = None
    display_name_prefix: str | None = None
    file: str | None = None

    def describe(self) -> str:
        if self.kind is CandidateKind.PATH:
            return str(self.path)
        detail = self.name or self.app_id or self.display_name_prefix or ""
        return f"{self.kind} {detail}".strip()


@dataclass(frozen=True)
class VersionSource:
    kind: VersionKind = VersionKind.NONE
    display_name_prefix: str | None = None
    package: str | None = None
    name: str | None = None
    app_id: str | None = None


@dataclass(frozen=True)
class LivenessSpec:
    kind: LivenessKind
    path: str | None = None
    endpoint_path: str = DEFAULT_ENDPOINT_PATH
    pid_key: str = "pid"
    url_key: str = "http"
    token_key: str = "token"


@dataclass(frozen=True)
class AppBlock:
    os: str
    presence: str
    candidates: tuple[Candidate, ...]
    version: VersionSource = field(default_factory=VersionSource)
    liveness: LivenessSpec | None = None


@dataclass(frozen=True)
class AppSpec:
    """Data: where the app lives on each OS and how to read its version."""

    blocks: Mapping[str, AppBlock]


@dataclass(frozen=True)
class Requirements:
    """Policy: whether the server insists on the app, and on which version."""

    app: bool = False
    min_version: str | None = None


@dataclass(frozen=True)
class ServerDeclaration:
    server: str
    app: AppSpec | None
    requires: Requirements
    liveness: LivenessSpec | None = None
    # Tools that always ask the user before they run (names or globs): code execution and the like.
    asks_approval: tuple[str, ...] = ()
    sandbox: SandboxSettings | None = None  # the network (and host ports) its server needs

    def liveness_for(self, os_name: str) -> LivenessSpec | None:
        """The server-level liveness overrides the per-OS one."""
        if self.liveness is not None:
            return self.liveness
        block = self.app.blocks.get(os_name) if self.app else None
        return block.liveness if block else None

    def has_server_json(self) -> bool:
        """A runtime file to read on every OS this declaration names (or at server level)."""
        if self.liveness is not None:
            return self.liveness.kind is LivenessKind.SERVER_JSON
        blocks = self.app.blocks.values() if self.app else []
        return bool(blocks) and all(b.liveness is not None and b.liveness.kind is LivenessKind.SERVER_JSON
                                    for b in blocks)

    def version_enforced_on(self, os_name: str) -> bool:
        if self.requires.min_version is None or self.app is None:
            return False
        block = self.app.blocks.get(os_name)
        return block is not None and block.version.kind is not VersionKind.NONE


def _bare_name(value: Any, loc: Loc) -> str:
    name = nonempty_text(value, loc)
    if not _BARE_NAME.match(name) or name in (".", "..") or ".." in name.split("/"):
        raise Invalid(loc, f"{name!r} must be a bare name (no path separators, no '..')")
    return name


def _relative_file(value: Any, loc: Loc) -> str:
    text = nonempty_text(value, loc)
    segments = re.split(r"[\\/]", text)
    if text.startswith(("/", "\\", "~", "%", "$")) or _WINDOWS_DRIVE.match(text) or "://" in text \
            or ".." in segments or "" in segments:
        raise Invalid(loc, f"{text!r} must be a plain path relative to the install folder")
    return text


def _key_name(value: Any, loc: Loc) -> str:
    if not isinstance(value, str) or not _SIMPLE_KEY.match(value):
        raise Invalid(loc, f"must be a simple key name like 'pid' (got {value!r})")
    return value


def _endpoint_path(value: Any, loc: Loc) -> str:
    text = nonempty_text(value, loc)
    if not plain_endpoint_path(text):
        raise Invalid(loc, f"{text!r} must be a plain path like /mcp (letters, digits, . _ ~ - and /)")
    return text


def rooted_path(value: Any, loc: Loc, os_name: str | None) -> str:
    """An absolute path for `os_name` (or any OS), or one starting with `~`, `%VAR%` or `$VAR`."""
    text = nonempty_text(value, loc)
    if len(text) > MAX_PATH_LENGTH:
        raise Invalid(loc, f"is longer than {MAX_PATH_LENGTH} characters")
    if "://" in text:
        raise Invalid(loc, f"{text!r} must be a file path, not a URL")
    if "\x00" in text:
        raise Invalid(loc, "must not contain NUL characters")
    if text.startswith(("\\\\", "//")):
        raise Invalid(loc, f"{text!r} is a UNC or device path, which is not allowed")
    segments = re.split(r"[\\/]", text)
    if ".." in segments:
        raise Invalid(loc, f"{text!r} must not contain a '..' segment")
    if any("**" in segment for segment in segments):
        raise Invalid(loc, f"{text!r}: '**' is not allowed; '*' matches within one segment")
    if len(segments) > MAX_PATH_SEGMENTS:
        raise Invalid(loc, f"{text!r} has more than {MAX_PATH_SEGMENTS} segments")
    if any(len(segment) > MAX_SEGMENT_LENGTH for segment in segments):
        raise Invalid(loc, f"has a segment longer than {MAX_SEGMENT_LENGTH} characters")
    if any(segment.count("*") > MAX_STARS_PER_SEGMENT for segment in segments):
        raise Invalid(loc, f"{text!r} has a segment with more than {MAX_STARS_PER_SEGMENT} '*'")
    wildcards = sum(1 for segment in segments if "*" in segment)
    if wildcards > MAX_WILDCARD_SEGMENTS:
        raise Invalid(loc, f"{text!r} has {wildcards} segments with '*'; at most {MAX_WILDCARD_SEGMENTS} are allowed")
    rooted = text.startswith("~") or bool(_ENV_PREFIX.match(text))
    if not rooted:
        if os_name == "win32":
            rooted = bool(_WINDOWS_DRIVE.match(text))
        elif os_name in ("darwin", "linux"):
            rooted = text.startswith("/")
        else:
            rooted = text.startswith("/") or bool(_WINDOWS_DRIVE.match(text))
    if not rooted:
        absolute = {"win32": "absolute (like C:\\...)", "darwin": "absolute (starting with /)",
                    "linux": "absolute (starting with /)"}.get(os_name or "", "absolute")
        raise Invalid(loc, f"{text!r} must be {absolute} or start with ~, %VAR% or $VAR")
    if text.startswith("~") and len(text) > 1 and text[1] not in "/\\":
        raise Invalid(loc, f"{text!r}: '~' must be followed by a path separator")
    return text


_FIELD_READERS: dict[str, Callable[[Any, Loc], str]] = {
    "display_name_prefix": nonempty_text, "file": _relative_file,
}


Kind = TypeVar("Kind", CandidateKind, VersionKind)


def _kinded(value: Any, loc: Loc, os_name: str, kinds: Mapping[Kind, str | None],
            fields: Mapping[Kind, tuple[tuple[str, ...], tuple[str, ...]]]) -> tuple[Kind, dict[str, str]]:
    """An object with a `kind` that belongs to one OS (or any) and the fields that kind takes."""
    if not isinstance(value, dict):
        raise Invalid(loc, "must be an object with 'kind'")
    written = value.get("kind")
    kind = next((k for k in kinds if k.value == written), None)
    if kind is None:
        raise Invalid((*loc, "kind"), f"must be one of: {', '.join(kinds)} (got {written!r})")
    wanted_os = kinds[kind]
    if wanted_os is not None and wanted_os != os_name:
        raise Invalid((*loc, "kind"), f"'{kind}' is only valid under app.{wanted_os}")
    needed: tuple[str, ...] = fields[kind][0]
    extra: tuple[str, ...] = fields[kind][1]
    data = mapping(value, loc, ("kind", *needed, *extra))
    values: dict[str, str] = {}
    for name in (*needed, *extra):
        if name in data:
            values[name] = _FIELD_READERS.get(name, _bare_name)(data[name], (*loc, name))
        elif name in needed:
            raise Invalid((*loc, name), f"is required for kind '{kind}'")
    return kind, values


def _candidate(value: Any, loc: Loc, os_name: str) -> Candidate:
    if isinstance(value, str):
        return Candidate(CandidateKind.PATH, path=rooted_path(value, loc, os_name))
    if not isinstance(value, dict):
        raise Invalid(loc, "must be a path or an object with 'kind'")
    kind, values = _kinded(value, loc, os_name, CANDIDATE_OS, CANDIDATE_FIELDS)
    return Candidate(kind, **values)


def _version(value: Any, loc: Loc, os_name: str) -> VersionSource:
    kind, values = _kinded(value, loc, os_name, VERSION_OS, VERSION_FIELDS)
    return VersionSource(kind, **values)


def _liveness(value: Any, loc: Loc, os_name: str | None) -> LivenessSpec:
    """Per-OS liveness (`os_name` given: key names as `pid_key`...) or the portable server-level form
    (`fields: {url, token, pid}`, also `static` and `interactive_session`); one reader for both."""
    portable = os_name is None
    keys = ("kind", "path", "endpoint_path") + (("fields",) if portable else ("pid_key", "url_key", "token_key"))
    data = mapping(value, loc, keys)
    raw = data.get("kind")
    kinds = tuple(LivenessKind) if portable else (LivenessKind.SERVER_JSON, LivenessKind.NONE)
    # `static` is the documents' synonym of `none` in the portable form.
    kind = LivenessKind.NONE if portable and raw == STATIC else raw
    if kind not in kinds:
        quoted = ", ".join(f"'{k.value}'" for k in kinds[:-1]) + (f", '{STATIC}'" if portable else "")
        raise Invalid((*loc, "kind"), f"must be {quoted} or '{kinds[-1].value}' (got {raw!r})")
    if kind != LivenessKind.SERVER_JSON:
        extra = [k for k in data if k != "kind"]
        if extra:
            raise Invalid((*loc, extra[0]), f"only applies to kind '{LivenessKind.SERVER_JSON.value}'")
        return LivenessSpec(LivenessKind(kind))
    path = required(data, "path", loc, lambda v, at: rooted_path(v, at, os_name),
                    why=f"is required for kind '{LivenessKind.SERVER_JSON.value}'")
    if portable:
        names = mapping(data.get("fields", {}), (*loc, "fields"), ("url", "token", "pid"))
        keys_loc: Loc = (*loc, "fields")
        pid, url, token = (optional(names, field, keys_loc, _key_name, default)
                           for field, default in (("pid", "pid"), ("url", "http"), ("token", "token")))
    else:
        pid, url, token = (optional(data, f"{field}_key", loc, _key_name, default)
                           for field, default in (("pid", "pid"), ("url", "http"), ("token", "token")))
    return LivenessSpec(LivenessKind.SERVER_JSON, path=path,
                        endpoint_path=optional(data, "endpoint_path", loc, _endpoint_path, DEFAULT_ENDPOINT_PATH),
                        pid_key=pid, url_key=url, token_key=token)


def _app_block(value: Any, os_name: str) -> AppBlock:
    loc: Loc = ("app", os_name)
    data = mapping(value, loc, ("presence", "location", "version", "liveness"), what="an object")
    presence = data.get("presence")
    if presence not in PRESENCES:
        raise Invalid((*loc, "presence"), f"must be 'bundle' or 'executable' (got {presence!r})")
    if presence == "bundle" and os_name != "darwin":
        raise Invalid((*loc, "presence"), "'bundle' is only valid under app.darwin")
    location = required(data, "location", loc, lambda v, at: v)
    if isinstance(location, list):
        if not location:
            raise Invalid((*loc, "location"), "must not be an empty list")
        if len(location) > MAX_CANDIDATES:
            raise Invalid((*loc, "location"), f"lists more than {MAX_CANDIDATES} places")
        candidates = items(location, (*loc, "location"), lambda v, at: _candidate(v, at, os_name))
    else:
        candidates = (_candidate(location, (*loc, "location"), os_name),)
    version = optional(data, "version", loc, lambda v, at: _version(v, at, os_name), VersionSource())
    if version.kind is VersionKind.SNAP and version.name is None and \
            not any(c.kind is CandidateKind.SNAP for c in candidates):
        raise Invalid((*loc, "version", "name"), "is required when no location is a snap")
    if version.kind is VersionKind.FLATPAK and version.app_id is None and \
            not any(c.kind is CandidateKind.FLATPAK for c in candidates):
        raise Invalid((*loc, "version", "app_id"), "is required when no location is a flatpak")
    liveness = optional(data, "liveness", loc, lambda v, at: _liveness(v, at, os_name), None)
    return AppBlock(os_name, str(presence), candidates, version, liveness)


def _requirements(value: Any, has_app: bool) -> Requirements:
    loc: Loc = ("requires",)
    data = mapping(value, loc, ("app", "min_version"), what="an object")
    app = data.get("app", False)
    if not isinstance(app, bool):
        raise Invalid((*loc, "app"), f"must be true or false (got {app!r})")
    if app and not has_app:
        raise Invalid((*loc, "app"), "is true but there is no 'app' block saying where the app is")
    minimum = data.get("min_version")
    if minimum is not None:
        if not isinstance(minimum, str) or not is_version(minimum):
            raise Invalid((*loc, "min_version"), f"must be dotted digits like '5.1' (got {minimum!r})")
        if not app:
            raise Invalid((*loc, "min_version"), "needs requires.app: true")
    return Requirements(app, minimum)


def _declaration(server: str, value: Any) -> ServerDeclaration:
    data = mapping(value, (), ("app", "requires", "liveness", "approval", "sandbox"), what="an object")
    app: AppSpec | None = None
    if "app" in data:
        raw = mapping(data["app"], ("app",), OSES, what="an object")
        if not raw:
            raise Invalid(("app",), "needs at least one of darwin, win32, linux")
        app = AppSpec({os_name: _app_block(block, os_name) for os_name, block in raw.items()})
    requires = _requirements(data.get("requires", {}), app is not None)
    if requires.min_version and app is not None:
        others = len(app.blocks) > 1
        for os_name, block in app.blocks.items():
            if block.version.kind is VersionKind.NONE and not (os_name == "linux" and others):
                raise Invalid(("app", os_name, "version", "kind"),
                              "is 'none', but requires.min_version needs every OS block to read a version")
    liveness = optional(data, "liveness", (), lambda v, at: _liveness(v, at, None), None)
    none: tuple[str, ...] = ()
    asks = optional(data, "approval", (), _approval, none)
    sandbox = optional(data, "sandbox", (), SandboxSettings.read_declared, None)
    return ServerDeclaration(server, app, requires, liveness, asks, sandbox)



def _approval(value: Any, loc: Loc) -> tuple[str, ...]:
    """`approval: {ask: [tool, glob*]}`: what the plugin's author knows must never run unasked."""
    data = mapping(value, loc, ("ask",), what="an object")
    return tuple(nonempty_text(name, (*loc, "ask", index)) for index, name in enumerate(
        required(data, "ask", loc, lambda v, at: v if isinstance(v, list) else _not_a_list(at))))


def _not_a_list(loc: Loc) -> Any:
    raise Invalid(loc, "must be a list of tool names")


def parse_declarations(plugin: Mapping[str, Any], mcp_servers: set[str] | frozenset[str], *,
                       file: str = "plugin.json") -> dict[str, ServerDeclaration]:
    """Read the declarations of a parsed plugin.json; no extension block means no declarations."""
    extensions = plugin.get("extensions")
    if extensions is None:
        return {}
    if not isinstance(extensions, dict):
        raise DeclarationError(None, "extensions", "must be an object", file=file)
    ours = extensions.get(EXTENSION_KEY)
    if ours is None:
        return {}
    path = f'extensions."{EXTENSION_KEY}"'
    if not isinstance(ours, dict):
        raise DeclarationError(None, path, "must be an object", file=file)
    unknown = [k for k in ours if k != "servers"]
    if unknown:
        raise DeclarationError(None, f"{path}.{unknown[0]}", "is not a known key (expected: servers)", file=file)
    servers = ours.get("servers", {})
    if not isinstance(servers, dict):
        raise DeclarationError(None, f"{path}.servers", "must be an object", file=file)
    if len(servers) > MAX_DECLARED_SERVERS:
        raise DeclarationError(None, f"{path}.servers", f"declares more than {MAX_DECLARED_SERVERS} servers",
                               file=file)
    declarations: dict[str, ServerDeclaration] = {}
    for name, value in servers.items():
        if not isinstance(name, str) or name not in mcp_servers:
            raise DeclarationError(None, f"servers.{name}",
                                   "does not name a server in mcp.json" + (
                                       f" (servers there: {', '.join(sorted(mcp_servers))})" if mcp_servers else ""),
                                   file=file)
        try:
            declarations[name] = _declaration(name, value)
        except Invalid as exc:
            raise DeclarationError(name, dotted(exc.loc), exc.rule, file=file) from None
    wildcards = len([c for d in declarations.values() if d.app is not None for block in d.app.blocks.values()
                     for c in block.candidates if c.kind is CandidateKind.PATH and "*" in (c.path or "")])
    if wildcards > MAX_WILDCARD_LOCATIONS:
        raise DeclarationError(None, f"{path}.servers", f"has {wildcards} locations with '*' in all; at most "
                                                        f"{MAX_WILDCARD_LOCATIONS} are allowed (each one is a "
                                                        f"directory walk at every lookup)", file=file)
    return declarations
