"""The strict parser for `extensions."com.nousresearch.hermes".servers` in a plugin's plugin.json.

Every rule that a declaration can break raises `DeclarationError` naming the server, the path
inside the declaration and the rule, e.g.
`plugin.json servers.blender: app.linux.version.kind 'plist' is only valid under app.darwin`.
Any error is fatal for the whole plugin: a half-understood declaration could admit a server whose
requirements nobody checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes.apps.versions import is_version
from hermes.errors import HermesError
from hermes.runtimefile import plain_endpoint_path

EXTENSION_KEY = "com.nousresearch.hermes"
OSES = ("darwin", "win32", "linux")
PRESENCES = ("bundle", "executable")
DEFAULT_ENDPOINT_PATH = "/mcp"

_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_ENV_PREFIX = re.compile(r"^(%[A-Za-z_][A-Za-z0-9_]*%|\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_BARE_NAME = re.compile(r"^[^/\\\x00]{1,255}$")

# Which OS each location kind and version kind belongs to (None: any OS).
_CANDIDATE_OS = {"command": None, "app_bundle": "darwin", "flatpak": "linux", "snap": "linux",
                 "uninstall_registry": "win32"}
_CANDIDATE_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # kind: (required fields, optional fields)
    "command": (("name",), ()), "app_bundle": (("name",), ()), "flatpak": (("app_id",), ()), "snap": (("name",), ()),
    "uninstall_registry": (("display_name_prefix", "file"), ()),
}
_VERSION_OS = {"plist": "darwin", "uninstall_registry": "win32", "pe_resource": "win32", "none": None,
               "dpkg": "linux", "rpm": "linux", "snap": "linux", "flatpak": "linux"}
_VERSION_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # kind: (required fields, optional fields)
    "plist": ((), ()), "pe_resource": ((), ()), "none": ((), ()),
    "uninstall_registry": (("display_name_prefix",), ()),
    "dpkg": (("package",), ()), "rpm": (("package",), ()),
    "snap": ((), ("name",)), "flatpak": ((), ("app_id",)),
}


class DeclarationError(HermesError):
    exit_code = 2

    def __init__(self, server: str | None, path: str, rule: str, *, file: str = "plugin.json") -> None:
        self.server = server
        self.path = path
        self.rule = rule
        where = f"{file} servers.{server}" if server else f"{file} {path}"
        subject = f"{path} " if server and path else ""
        super().__init__(f"{where}: {subject}{rule}")


@dataclass(frozen=True)
class Candidate:
    """One place the app may be: a path (`*` globs one segment) or a lookup of some kind."""

    kind: str  # "path" | "command" | "app_bundle" | "flatpak" | "snap" | "uninstall_registry"
    path: str | None = None
    name: str | None = None
    app_id: str | None = None
    display_name_prefix: str | None = None
    file: str | None = None

    def describe(self) -> str:
        if self.kind == "path":
            return str(self.path)
        detail = self.name or self.app_id or self.display_name_prefix or ""
        return f"{self.kind} {detail}".strip()


@dataclass(frozen=True)
class VersionSource:
    kind: str = "none"
    display_name_prefix: str | None = None
    package: str | None = None
    name: str | None = None
    app_id: str | None = None


@dataclass(frozen=True)
class LivenessSpec:
    kind: str  # "server_json" | "none" | "interactive_session"
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

    def liveness_for(self, os_name: str) -> LivenessSpec | None:
        """The server-level liveness overrides the per-OS one."""
        if self.liveness is not None:
            return self.liveness
        block = self.app.blocks.get(os_name) if self.app else None
        return block.liveness if block else None

    def version_enforced_on(self, os_name: str) -> bool:
        if self.requires.min_version is None or self.app is None:
            return False
        block = self.app.blocks.get(os_name)
        return block is not None and block.version.kind != "none"


class _Parser:
    def __init__(self, server: str, file: str) -> None:
        self.server = server
        self.file = file

    def fail(self, path: str, rule: str) -> DeclarationError:
        return DeclarationError(self.server, path, rule, file=self.file)

    def mapping(self, value: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, "must be an object")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(path, f"has a key that is not text: {key!r}")
            if key not in allowed:
                raise self.fail(f"{path}.{key}" if path else key,
                                f"is not a known key (expected one of: {', '.join(allowed)})")
        return value

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, "must be a non-empty string")
        return value

    def bare_name(self, value: Any, path: str) -> str:
        name = self.text(value, path)
        if not _BARE_NAME.match(name) or name in (".", "..") or ".." in name.split("/"):
            raise self.fail(path, f"{name!r} must be a bare name (no path separators, no '..')")
        return name

    def rooted_path(self, value: Any, path: str, os_name: str | None) -> str:
        text = self.text(value, path)
        if "://" in text:
            raise self.fail(path, f"{text!r} must be a file path, not a URL")
        if "\x00" in text:
            raise self.fail(path, "must not contain NUL characters")
        if text.startswith(("\\\\", "//")):
            raise self.fail(path, f"{text!r} is a UNC or device path, which is not allowed")
        segments = re.split(r"[\\/]", text)
        if ".." in segments:
            raise self.fail(path, f"{text!r} must not contain a '..' segment")
        for segment in segments:
            if "**" in segment:
                raise self.fail(path, f"{text!r}: '**' is not allowed; '*' matches within one segment")
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
            raise self.fail(path, f"{text!r} must be {absolute} or start with ~, %VAR% or $VAR")
        if text.startswith("~") and len(text) > 1 and text[1] not in "/\\":
            raise self.fail(path, f"{text!r}: '~' must be followed by a path separator")
        return text

    def candidate(self, value: Any, path: str, os_name: str) -> Candidate:
        if isinstance(value, str):
            return Candidate("path", path=self.rooted_path(value, path, os_name))
        if not isinstance(value, dict):
            raise self.fail(path, "must be a path or an object with 'kind'")
        kind, values = self.kinded(value, path, os_name, _CANDIDATE_OS, _CANDIDATE_FIELDS)
        return Candidate(kind, **values)

    def kinded(self, value: dict[str, Any], path: str, os_name: str, kinds: Mapping[str, str | None],
               fields: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]) -> tuple[str, dict[str, str]]:
        """An object with a `kind` that belongs to one OS (or any) and the fields that kind takes."""
        kind = value.get("kind")
        if not isinstance(kind, str) or kind not in kinds:
            raise self.fail(f"{path}.kind", f"must be one of: {', '.join(kinds)} (got {kind!r})")
        wanted_os = kinds[kind]
        if wanted_os is not None and wanted_os != os_name:
            raise self.fail(f"{path}.kind", f"'{kind}' is only valid under app.{wanted_os}")
        required, optional = fields[kind]
        data = self.mapping(value, path, ("kind", *required, *optional))
        values: dict[str, str] = {}
        for name in (*required, *optional):
            if name not in data:
                if name in required:
                    raise self.fail(f"{path}.{name}", f"is required for kind '{kind}'")
                continue
            where = f"{path}.{name}"
            if name == "display_name_prefix":
                values[name] = self.text(data[name], where)
            elif name == "file":
                values[name] = self.relative_file(data[name], where)
            else:
                values[name] = self.bare_name(data[name], where)
        return kind, values

    def relative_file(self, value: Any, path: str) -> str:
        text = self.text(value, path)
        segments = re.split(r"[\\/]", text)
        if text.startswith(("/", "\\", "~", "%", "$")) or _WINDOWS_DRIVE.match(text) or "://" in text \
                or ".." in segments or "" in segments:
            raise self.fail(path, f"{text!r} must be a plain path relative to the install folder")
        return text

    def version(self, value: Any, path: str, os_name: str) -> VersionSource:
        if not isinstance(value, dict):
            raise self.fail(path, "must be an object with 'kind'")
        kind, values = self.kinded(value, path, os_name, _VERSION_OS, _VERSION_FIELDS)
        return VersionSource(kind, **values)

    def key_name(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not _SIMPLE_KEY.match(value):
            raise self.fail(path, f"must be a simple key name like 'pid' (got {value!r})")
        return value

    def endpoint_path(self, value: Any, path: str) -> str:
        text = self.text(value, path)
        if not plain_endpoint_path(text):
            raise self.fail(path, f"{text!r} must be a plain path like /mcp (letters, digits, . _ ~ - and /)")
        return text

    def os_liveness(self, value: Any, path: str, os_name: str) -> LivenessSpec:
        data = self.mapping(value, path, ("kind", "path", "endpoint_path", "pid_key", "url_key", "token_key"))
        kind = data.get("kind")
        if kind not in ("server_json", "none"):
            raise self.fail(f"{path}.kind", f"must be 'server_json' or 'none' (got {kind!r})")
        if kind == "none":
            extra = [k for k in data if k != "kind"]
            if extra:
                raise self.fail(f"{path}.{extra[0]}", "only applies to kind 'server_json'")
            return LivenessSpec("none")
        if "path" not in data:
            raise self.fail(f"{path}.path", "is required for kind 'server_json'")
        return LivenessSpec(
            "server_json",
            path=self.rooted_path(data["path"], f"{path}.path", os_name),
            endpoint_path=self.endpoint_path(data["endpoint_path"], f"{path}.endpoint_path")
            if "endpoint_path" in data else DEFAULT_ENDPOINT_PATH,
            pid_key=self.key_name(data.get("pid_key", "pid"), f"{path}.pid_key"),
            url_key=self.key_name(data.get("url_key", "http"), f"{path}.url_key"),
            token_key=self.key_name(data.get("token_key", "token"), f"{path}.token_key"),
        )

    def server_liveness(self, value: Any) -> LivenessSpec:
        data = self.mapping(value, "liveness", ("kind", "path", "fields", "endpoint_path"))
        kind = data.get("kind")
        if kind == "static":
            kind = "none"
        if kind not in ("server_json", "none", "interactive_session"):
            raise self.fail("liveness.kind", "must be 'server_json', 'none', 'static' or 'interactive_session' "
                                             f"(got {kind!r})")
        if kind != "server_json":
            extra = [k for k in data if k != "kind"]
            if extra:
                raise self.fail(f"liveness.{extra[0]}", "only applies to kind 'server_json'")
            return LivenessSpec(kind)
        if "path" not in data:
            raise self.fail("liveness.path", "is required for kind 'server_json'")
        fields = self.mapping(data.get("fields", {}), "liveness.fields", ("url", "token", "pid"))
        return LivenessSpec(
            "server_json",
            path=self.rooted_path(data["path"], "liveness.path", None),
            endpoint_path=self.endpoint_path(data["endpoint_path"], "liveness.endpoint_path")
            if "endpoint_path" in data else DEFAULT_ENDPOINT_PATH,
            pid_key=self.key_name(fields.get("pid", "pid"), "liveness.fields.pid"),
            url_key=self.key_name(fields.get("url", "http"), "liveness.fields.url"),
            token_key=self.key_name(fields.get("token", "token"), "liveness.fields.token"),
        )

    def app_block(self, value: Any, os_name: str) -> AppBlock:
        path = f"app.{os_name}"
        data = self.mapping(value, path, ("presence", "location", "version", "liveness"))
        presence = data.get("presence")
        if presence not in PRESENCES:
            raise self.fail(f"{path}.presence", f"must be 'bundle' or 'executable' (got {presence!r})")
        if presence == "bundle" and os_name != "darwin":
            raise self.fail(f"{path}.presence", "'bundle' is only valid under app.darwin")
        if "location" not in data:
            raise self.fail(f"{path}.location", "is required")
        location = data["location"]
        if isinstance(location, list):
            if not location:
                raise self.fail(f"{path}.location", "must not be an empty list")
            candidates = tuple(self.candidate(item, f"{path}.location[{i}]", os_name)
                               for i, item in enumerate(location))
        else:
            candidates = (self.candidate(location, f"{path}.location", os_name),)
        version = self.version(data["version"], f"{path}.version", os_name) if "version" in data \
            else VersionSource()
        if version.kind == "snap" and version.name is None and not any(c.kind == "snap" for c in candidates):
            raise self.fail(f"{path}.version.name", "is required when no location is a snap")
        if version.kind == "flatpak" and version.app_id is None and not any(c.kind == "flatpak" for c in candidates):
            raise self.fail(f"{path}.version.app_id", "is required when no location is a flatpak")
        liveness = self.os_liveness(data["liveness"], f"{path}.liveness", os_name) if "liveness" in data else None
        return AppBlock(os_name, str(presence), candidates, version, liveness)

    def requirements(self, value: Any, has_app: bool) -> Requirements:
        data = self.mapping(value, "requires", ("app", "min_version"))
        app = data.get("app", False)
        if not isinstance(app, bool):
            raise self.fail("requires.app", f"must be true or false (got {app!r})")
        if app and not has_app:
            raise self.fail("requires.app", "is true but there is no 'app' block saying where the app is")
        minimum = data.get("min_version")
        if minimum is not None:
            if not isinstance(minimum, str) or not is_version(minimum):
                raise self.fail("requires.min_version", f"must be dotted digits like '5.1' (got {minimum!r})")
            if not app:
                raise self.fail("requires.min_version", "needs requires.app: true")
        return Requirements(app, minimum)

    def declaration(self, value: Any) -> ServerDeclaration:
        data = self.mapping(value, "", ("app", "requires", "liveness"))
        app: AppSpec | None = None
        if "app" in data:
            raw = self.mapping(data["app"], "app", OSES)
            if not raw:
                raise self.fail("app", "needs at least one of darwin, win32, linux")
            app = AppSpec({os_name: self.app_block(block, os_name) for os_name, block in raw.items()})
        requires = self.requirements(data.get("requires", {}), app is not None)
        if requires.min_version and app is not None:
            for os_name, block in app.blocks.items():
                others = len(app.blocks) > 1
                if block.version.kind == "none" and not (os_name == "linux" and others):
                    raise self.fail(f"app.{os_name}.version.kind",
                                    "is 'none', but requires.min_version needs every OS block to read a version")
        liveness = self.server_liveness(data["liveness"]) if "liveness" in data else None
        return ServerDeclaration(self.server, app, requires, liveness)


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
    declarations: dict[str, ServerDeclaration] = {}
    for name, value in servers.items():
        if not isinstance(name, str) or name not in mcp_servers:
            raise DeclarationError(None, f"servers.{name}",
                                   "does not name a server in mcp.json" + (
                                       f" (servers there: {', '.join(sorted(mcp_servers))})" if mcp_servers else ""),
                                   file=file)
        declarations[name] = _Parser(name, file).declaration(value)
    return declarations
