"""The declaration parser: the seeds' example and a realistic Blender block parse; every rule rejects."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes.apps.declaration import EXTENSION_KEY, DeclarationError, ServerDeclaration, parse_declarations

SEED_EXAMPLE: dict[str, Any] = {"extensions": {EXTENSION_KEY: {"servers": {"blender": {
    "app": {
        "darwin": {"presence": "bundle", "location": "/Applications/Blender.app", "version": {"kind": "plist"}},
        "win32": {"presence": "executable", "location": "%ProgramFiles%/Blender Foundation/Blender/blender.exe",
                  "version": {"kind": "uninstall_registry", "display_name_prefix": "Blender"}},
        "linux": {"presence": "executable", "location": "/usr/bin/blender", "version": {"kind": "none"}},
    },
    "requires": {"app": True, "min_version": "5.1"},
    "liveness": {"kind": "server_json", "path": "%LOCALAPPDATA%/Blender/server.json",
                 "fields": {"url": "http", "token": "token", "pid": "pid"}},
}}}}}

BLENDER: dict[str, Any] = {"extensions": {EXTENSION_KEY: {"servers": {"blender": {
    "app": {
        "win32": {"presence": "executable",
                  "location": [{"kind": "uninstall_registry", "display_name_prefix": "Blender", "file": "blender.exe"},
                               "%ProgramFiles%/Blender Foundation/Blender */blender.exe"],
                  "version": {"kind": "pe_resource"},
                  "liveness": {"kind": "server_json", "path": "%LOCALAPPDATA%/Blender/mcp/server.json"}},
        "darwin": {"presence": "bundle",
                   "location": [{"kind": "app_bundle", "name": "Blender.app"}, "~/Applications/Blender.app"],
                   "version": {"kind": "plist"},
                   "liveness": {"kind": "server_json", "path": "~/Library/Application Support/Blender/mcp.json",
                                "endpoint_path": "/mcp", "pid_key": "pid", "url_key": "http", "token_key": "token"}},
        "linux": {"presence": "executable",
                  "location": [{"kind": "command", "name": "blender"},
                               {"kind": "flatpak", "app_id": "org.blender.Blender"},
                               {"kind": "snap", "name": "blender"}],
                  "liveness": {"kind": "server_json", "path": "$XDG_RUNTIME_DIR/blender/mcp.json"}},
    },
    "requires": {"app": True, "min_version": "5.1"},
}}}}}


def _parse(plugin: dict[str, Any], servers: tuple[str, ...] = ("blender",)) -> dict[str, ServerDeclaration]:
    return parse_declarations(plugin, set(servers))


def test_seed_example_parses() -> None:
    declaration = _parse(SEED_EXAMPLE)["blender"]
    assert declaration.requires.min_version == "5.1" and declaration.requires.app
    assert declaration.app is not None and set(declaration.app.blocks) == {"darwin", "win32", "linux"}
    # The server-level liveness overrides per-OS ones, with the seeds' field names.
    live = declaration.liveness_for("win32")
    assert live is not None and live.kind == "server_json" and live.url_key == "http" and live.endpoint_path == "/mcp"
    # Linux reads no version while other OS blocks do: the minimum is not enforced there.
    assert not declaration.version_enforced_on("linux") and declaration.version_enforced_on("darwin")


def test_realistic_blender_declaration_parses() -> None:
    declaration = _parse(BLENDER)["blender"]
    assert declaration.app is not None
    win = declaration.app.blocks["win32"]
    assert [c.kind for c in win.candidates] == ["uninstall_registry", "path"]
    assert win.version.kind == "pe_resource"
    linux = declaration.app.blocks["linux"]
    assert [c.kind for c in linux.candidates] == ["command", "flatpak", "snap"]
    assert linux.version.kind == "none"
    darwin_live = declaration.liveness_for("darwin")
    assert darwin_live is not None and darwin_live.path == "~/Library/Application Support/Blender/mcp.json"


def test_no_extension_block_means_no_declarations() -> None:
    assert parse_declarations({"name": "x"}, {"a"}) == {}
    assert parse_declarations({"extensions": {"other.host": {"x": 1}}}, {"a"}) == {}


def _with(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A copy of SEED_EXAMPLE's declaration with one value set (`None` deletes it)."""
    plugin = copy.deepcopy(base or SEED_EXAMPLE)
    node: Any = plugin["extensions"][EXTENSION_KEY]["servers"]["blender"]
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(keys[-1], None)
    else:
        node[keys[-1]] = value
    return plugin


REJECTIONS: list[tuple[dict[str, Any], str]] = [
    (_with("app", {}), "app needs at least one of darwin, win32, linux"),
    (_with("sandbox", "off"), "sandbox cannot switch the sandbox off"),
    (_with("sandbox", {"network": "all", "read": ["~/.ssh"]}), "sandbox.read is the user's to grant"),
    (_with("sandbox", {"network": "everything"}), "sandbox.network must be one of none, loopback, all"),
    (_with("app.beos", {"presence": "executable", "location": "/x"}), "app.beos is not a known key"),
    (_with("app", "mac"), "app must be an object"),
    (_with("color", "blue"), "color is not a known key"),
    (_with("app.linux.presence", "folder"), "app.linux.presence must be 'bundle' or 'executable'"),
    (_with("app.linux.presence", "bundle"), "app.linux.presence 'bundle' is only valid under app.darwin"),
    (_with("app.linux.location", None), "app.linux.location is required"),
    (_with("app.linux.location", []), "app.linux.location must not be an empty list"),
    (_with("app.linux.location", "usr/bin/blender"), "must be absolute (starting with /)"),
    (_with("app.win32.location", "/Program Files/b.exe"), "must be absolute (like C:\\...)"),
    (_with("app.linux.location", "/opt/../usr/bin/blender"), "must not contain a '..' segment"),
    (_with("app.linux.location", "file:///usr/bin/blender"), "must be a file path, not a URL"),
    (_with("app.win32.location", "\\\\server\\share\\b.exe"), "UNC or device path"),
    (_with("app.win32.location", "\\\\?\\C:\\b.exe"), "UNC or device path"),
    (_with("app.linux.location", "/opt/**/blender"), "'**' is not allowed"),
    (_with("app.linux.location", "/opt/*a*a*a*a/blender"), "has a segment with more than 3 '*'"),
    (_with("app.linux.location", "/opt/" + "x" * 300 + "/blender"), "has a segment longer than 255 characters"),
    (_with("app.linux.location", "/opt" + "/x" * 600), "is longer than 1024 characters"),
    (_with("app.linux.location", "~blender/bin"), "'~' must be followed by a path separator"),
    (_with("app.linux.location", [{"kind": "registry"}]), "app.linux.location[0].kind must be one of"),
    (_with("app.linux.location", [{"kind": "app_bundle", "name": "B.app"}]),
     "app.linux.location[0].kind 'app_bundle' is only valid under app.darwin"),
    (_with("app.linux.location", [{"kind": "command", "name": "bin/blender"}]), "must be a bare name"),
    (_with("app.linux.location", [{"kind": "command", "name": ".."}]), "must be a bare name"),
    (_with("app.linux.location", [{"kind": "command"}]), "app.linux.location[0].name is required for kind 'command'"),
    (_with("app.linux.location", [{"kind": "snap", "name": "b", "extra": 1}]),
     "app.linux.location[0].extra is not a known key"),
    (_with("app.win32.location", [{"kind": "uninstall_registry", "display_name_prefix": "B", "file": "../b.exe"}]),
     "must be a plain path relative to the install folder"),
    (_with("app.linux.version", {"kind": "plist"}), "app.linux.version.kind 'plist' is only valid under app.darwin"),
    (_with("app.darwin.version", {"kind": "pe_resource"}),
     "app.darwin.version.kind 'pe_resource' is only valid under app.win32"),
    (_with("app.win32.version", {"kind": "uninstall_registry"}),
     "app.win32.version.display_name_prefix is required for kind 'uninstall_registry'"),
    (_with("app.linux.version", {"kind": "dpkg"}), "app.linux.version.package is required for kind 'dpkg'"),
    (_with("app.linux.version", {"kind": "snap"}), "app.linux.version.name is required when no location is a snap"),
    (_with("app.linux.version", {"kind": "git"}), "app.linux.version.kind must be one of"),
    (_with("app.darwin.version", {"kind": "none"}),
     "app.darwin.version.kind is 'none', but requires.min_version needs every OS block to read a version"),
    (_with("app", {"linux": {"presence": "executable", "location": "/usr/bin/blender"}}),
     "app.linux.version.kind is 'none', but requires.min_version"),
    (_with("requires.min_version", "5.1-beta"), "requires.min_version must be dotted digits"),
    (_with("requires.min_version", 5.1), "requires.min_version must be dotted digits"),
    (_with("requires.app", "yes"), "requires.app must be true or false"),
    (_with("requires", {"min_version": "5.1"}), "requires.min_version needs requires.app: true"),
    (_with("app", None), "requires.app is true but there is no 'app' block"),
    (_with("liveness", {"kind": "socket"}), "liveness.kind must be 'server_json', 'none', 'static'"),
    (_with("liveness", {"kind": "server_json"}), "liveness.path is required for kind 'server_json'"),
    (_with("liveness", {"kind": "none", "path": "/x"}), "liveness.path only applies to kind 'server_json'"),
    (_with("liveness", {"kind": "server_json", "path": "relative/server.json"}), "liveness.path 'relative"),
    (_with("liveness", {"kind": "server_json", "path": "/x", "fields": {"url": "a.b"}}),
     "liveness.fields.url must be a simple key name"),
    (_with("liveness", {"kind": "server_json", "path": "/x", "fields": {"port": "p"}}),
     "liveness.fields.port is not a known key"),
    (_with("liveness", {"kind": "server_json", "path": "/x", "endpoint_path": "@169.254.169.254/x"}),
     "must be a plain path like /mcp"),
    (_with("liveness", {"kind": "server_json", "path": "/x", "endpoint_path": "/a/../b"}),
     "must be a plain path like /mcp"),
    (_with("app.linux.liveness", {"kind": "server_json", "path": "/x", "pid_key": ""}),
     "app.linux.liveness.pid_key must be a simple key name"),
    (_with("app.linux.liveness", {"kind": "watch"}), "app.linux.liveness.kind must be 'server_json' or 'none'"),
]


def test_a_plugin_may_not_make_every_lookup_walk_dozens_of_folders() -> None:
    plugin = _with("app.darwin.location", ["/Applications/*/B.app"], _with("app.linux.location", ["/opt/*/b"] * 16))
    with pytest.raises(DeclarationError, match="has 17 locations with '\\*' in all; at most 16 are allowed"):
        _parse(plugin)


@pytest.mark.parametrize(("plugin", "message"), REJECTIONS, ids=[m[:60] for _, m in REJECTIONS])
def test_every_rule_rejects_with_rule_and_path(plugin: dict[str, Any], message: str) -> None:
    with pytest.raises(DeclarationError) as info:
        _parse(plugin)
    text = str(info.value)
    assert text.startswith("plugin.json servers.blender: ")
    assert message in text


def test_declaration_for_unknown_server_is_rejected() -> None:
    with pytest.raises(DeclarationError, match=r"servers.blendr: does not name a server in mcp.json \(servers "
                                               r"there: blender\)"):
        parse_declarations({"extensions": {EXTENSION_KEY: {"servers": {"blendr": {}}}}}, {"blender"})


def test_static_is_a_synonym_of_none() -> None:
    declaration = _parse(_with("liveness", {"kind": "static"}))["blender"]
    assert declaration.liveness is not None and declaration.liveness.kind == "none"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.sampled_from(["darwin", "win32", "linux", "bundle", "executable", "server_json", "plist", "none",
                       "/usr/bin/x", "C:/x.exe", "%APPDATA%/x", "~/x", "5.1", "command", "snap", "kind"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["app", "requires", "liveness", "darwin", "win32", "linux", "presence", "location",
                         "version", "kind", "path", "min_version", "name", "fields", "endpoint_path", "x"]),
        children, max_size=5),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(JSON)
def test_parser_only_returns_a_declaration_or_raises_declaration_error(value: Any) -> None:
    plugin = {"extensions": {EXTENSION_KEY: {"servers": {"blender": value}}}}
    try:
        result = parse_declarations(plugin, {"blender"})
    except DeclarationError:
        return
    assert isinstance(result["blender"], ServerDeclaration)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_parser_survives_any_extension_block(value: Any) -> None:
    with contextlib.suppress(DeclarationError):
        parse_declarations({"extensions": value}, {"blender"})
