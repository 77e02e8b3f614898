"""Hostile inputs for every reader of user and plugin files, and the rule they must keep.

The rule: a reader returns its value or raises a `HermesError` (one sentence for the user); any
other exception is an *escape*, a traceback waiting to happen. Inputs are hypothesis strategies:
random documents built from each format's own vocabulary (so they get deep into the readers),
mutations of valid documents, broken syntax and raw bytes. Used by `tests/test_fuzz.py` (a few
hundred per reader, every run) and `bench/fuzz_readers.py` (20,000 per reader).
"""

from __future__ import annotations

import contextlib
import functools
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from hermes.apps.declaration import EXTENSION_KEY, parse_declarations
from hermes.catalog.manifest import load_entries, parse_manifest
from hermes.config.model import parse_config
from hermes.config.yamlfile import load_yaml
from hermes.errors import HermesError
from hermes.plugins.catalog import _read as read_plugin_catalog
from hermes.plugins.manifest import load_plugin

SCALARS: list[Any] = [None, True, False, 0, -1, 1, 2**31, 2**64, 1.5, float("nan"), float("inf"), "", "x", "..",
                      "/", "~", "%APPDATA%/x", "$HOME/x", "${X}", "http://127.0.0.1:1/mcp", "https://[oops",
                      "ftp://h", "\x00", "é", "a" * 300, "*", "/*/*/*", "-y", "stdio", "sse", "http", "oauth",
                      "server_json", "none", "static", "plist", "dpkg", "executable", "bundle", "5.1", "1.0-beta",
                      "\ud800", "a\udc80b", "\u202e", "\U000e0041", "../..", "~/.ssh", "${HOME}/.ssh", "off",
                      "/tmp", "--token=ghp_" + "a1B2" * 6]


@dataclass(eq=False)  # compared (and cached) by identity: one strategy per vocabulary
class Vocabulary:
    keys: list[str]
    valid: list[Any] = field(default_factory=list)


# Built once per vocabulary (cached): `mutated` draws from these for every case, and building (and
# validating) a recursive strategy each time cost more than feeding the reader.
@functools.cache
def values(vocab: Vocabulary) -> st.SearchStrategy[Any]:
    """Random documents of the format's own words: scalars, lists and mappings, nested."""
    leaves = st.sampled_from(SCALARS + vocab.keys) | st.text(max_size=20)
    return st.recursive(leaves, lambda children: st.lists(children, max_size=4)
                        | st.dictionaries(st.sampled_from([*vocab.keys, "zz"]), children, max_size=5),
                        max_leaves=40)


@st.composite
def mutated(draw: st.DrawFn, vocab: Vocabulary) -> Any:
    """A valid document with one node replaced, removed or added somewhere inside."""
    document = json.loads(json.dumps(draw(st.sampled_from(vocab.valid))))
    node = document
    for _ in range(draw(st.integers(0, 6))):
        children = [c for c in (node.values() if isinstance(node, dict) else node if isinstance(node, list) else [])
                    if isinstance(c, (dict, list))]
        if not children:
            break
        node = draw(st.sampled_from(children))
    replacement = draw(values(vocab))
    if isinstance(node, dict):
        if node and draw(st.booleans()):
            del node[draw(st.sampled_from(sorted(node)))]
        else:
            node[draw(st.sampled_from(vocab.keys + sorted(node or {"zz": 0})))] = replacement
    elif isinstance(node, list):
        if node and draw(st.booleans()):
            node[draw(st.integers(0, len(node) - 1))] = replacement
        else:
            node.append(replacement)
    return document


@functools.cache
def documents(vocab: Vocabulary) -> st.SearchStrategy[Any]:
    return mutated(vocab) | values(vocab) if vocab.valid else values(vocab)


# -- the readers, each fed one input -------------------------------------------------------------

CONFIG = Vocabulary(
    ["mcp_servers", "platform_toolsets", "mcp", "plugins", "model", "command", "args", "env", "cwd", "url", "headers",
     "transport", "auth", "oauth", "enabled", "timeout", "connect_timeout", "tools", "include", "exclude",
     "resources", "prompts", "client", "stdio_servers", "client_id", "client_secret", "scope", "redirect_port",
     "box", "web", "cli", "sandbox", "read", "write", "network", "ports", "roots", "approval", "allow", "ask",
     "sampling", "auto_approve"],
    [{"mcp_servers": {"box": {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "${K}"},
                              "tools": {"include": ["a*"]}},
                      "web": {"url": "https://h/mcp", "headers": {"A": "B"}, "auth": "oauth",
                              "oauth": {"client_id": "i", "redirect_port": 3000}, "timeout": 5}},
      "platform_toolsets": {"cli": ["mcp-box"]}, "mcp": {"client": True}, "plugins": {"enabled": ["p"]}}])

DECLARATION = Vocabulary(
    ["app", "requires", "liveness", "darwin", "win32", "linux", "presence", "location", "version", "kind", "path",
     "min_version", "name", "fields", "endpoint_path", "url", "token", "pid", "package", "app_id",
     "display_name_prefix", "file", "pid_key", "url_key", "token_key", "command", "snap", "flatpak", "app_bundle",
     "uninstall_registry", "pe_resource", "rpm"],
    [{"app": {"linux": {"presence": "executable", "location": [{"kind": "command", "name": "blender"},
                                                               {"kind": "snap", "name": "blender"}],
                        "version": {"kind": "snap"}},
              "darwin": {"presence": "bundle", "location": "/Applications/B.app", "version": {"kind": "plist"}}},
      "requires": {"app": True, "min_version": "5.1"},
      "liveness": {"kind": "server_json", "path": "~/x/server.json", "fields": {"url": "http"}}}])

MANIFEST = Vocabulary(
    ["name", "version", "title", "description", "extensions", EXTENSION_KEY, "servers", "mcpServers", "type",
     "command", "args", "env", "url", "headers", "cwd", "timeout", "$schema", "acme", "stdio", "streamable-http"],
    [{"plugin.json": {"name": "acme", "version": "1", "title": "Acme"},
      "mcp.json": {"mcpServers": {"acme": {"type": "stdio", "command": "uvx", "args": ["acme"]},
                                  "web": {"type": "streamable-http", "url": "https://h/mcp"}}}}])

CATALOG = Vocabulary(
    ["schema", "name", "title", "description", "transport", "type", "command", "args", "env", "url", "headers",
     "auth", "settings", "prompt", "secret", "default", "required", "tools", "default_enabled", "default_excluded",
     "install", "post_install", "scope", "plugins", "repo", "sha", "version", "platforms", "api_key", "windows"],
    [{"schema": 1, "name": "box", "title": "Box", "description": "d",
      "transport": {"type": "stdio", "command": "npx", "args": ["-y", "p"], "env": {"K": "${K}"}},
      "auth": {"type": "api_key", "settings": [{"name": "K", "prompt": "Key", "secret": True}]},
      "tools": {"default_excluded": ["x"]}, "install": {"command": ["npx", "-y", "p"]}},
     {"schema": 1, "plugins": [{"name": "p", "repo": "o/r", "sha": "a" * 40, "version": "1", "title": "P",
                                "description": "d", "platforms": ["linux"]}]}])


def _yaml_text(value: Any) -> str:
    import io

    buffer = io.StringIO()
    try:
        YAML(typ="safe").dump(value, buffer)
    except Exception:  # a value YAML cannot write (a NaN key, say): use its JSON text instead
        return json.dumps(value, default=str)
    return buffer.getvalue()


@dataclass(frozen=True)
class Reader:
    """One reader: the inputs it is fed, and how one input reaches it."""

    cases: st.SearchStrategy[Any]
    feed: Callable[[Any, Path], None]


def _config_files() -> st.SearchStrategy[bytes]:
    text = documents(CONFIG).map(_yaml_text)
    broken = st.tuples(text, st.integers(0, 1 << 16), st.sampled_from(
        ["[", "{", ":", "? ", "&a", "*a", "!!python/object:os.system", "\t"])).map(
        lambda t: t[0][:t[1] % (len(t[0]) + 1)] + t[2] + t[0][t[1] % (len(t[0]) + 1):])
    return st.binary(max_size=200) | text.map(str.encode) | broken.map(str.encode)


def _feed_config(case: bytes, scratch: Path) -> None:
    path = scratch / "config.yaml"
    path.write_bytes(case)
    parse_config(load_yaml(path), path)


def _feed_declaration(case: Any, scratch: Path) -> None:
    parse_declarations(case, {"blender"})


_DECLARATIONS = documents(DECLARATION).map(
    lambda d: {"extensions": {EXTENSION_KEY: {"servers": {"blender": d}}}}) | values(DECLARATION).map(
    lambda v: {"extensions": v})


def _plugin_files() -> st.SearchStrategy[dict[str, bytes | None]]:
    content = values(MANIFEST).map(lambda v: json.dumps(v, default=str).encode()) | st.binary(max_size=64) | st.none()

    @st.composite
    def files(draw: st.DrawFn) -> dict[str, bytes | None]:
        base = draw(documents(MANIFEST))
        base = base if isinstance(base, dict) else {"plugin.json": base}
        found: dict[str, bytes | None] = {}
        for name in ("plugin.json", "mcp.json"):
            found[name] = json.dumps(base[name], default=str).encode() if name in base and draw(st.booleans()) \
                else draw(content)
        return found

    return files()


def _feed_plugin(case: dict[str, bytes | None], scratch: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="plugin-", dir=scratch))
    for name, content in case.items():
        if content is not None:
            (root / name).write_bytes(content)
    load_plugin(root, scratch / "data")


def _feed_catalogs(case: tuple[Any, bool, bool], scratch: Path) -> None:
    value, as_manifest, nested = case
    if as_manifest:
        parse_manifest(value, "box.json")
        return
    folder = Path(tempfile.mkdtemp(prefix="catalog-", dir=scratch))
    path = folder / "catalog.json"
    path.write_text(json.dumps(value, default=str) if not nested else "{" * 5000)
    read_plugin_catalog(path)
    entries = folder / "entries"
    entries.mkdir()
    (entries / "x.json").write_text(json.dumps(value, default=str))
    load_entries(entries)


CLIENT = Vocabulary(
    ["mcpServers", "servers", "mcp", "extensions", "projects", "inputs", "command", "args", "env", "cwd", "url",
     "headers", "type", "transport", "disabled", "enabled", "cmd", "envs", "env_keys", "uri", "name", "id",
     "password", "Authorization", "GITHUB_TOKEN", "${input:key}", "${workspaceFolder}", "${X:-d}", "files"],
    [{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "pkg"], "env": {"GITHUB_TOKEN": "ghp_x"}}}},
     {"servers": {"w": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}}}},
     {"extensions": {"f": {"type": "stdio", "cmd": "uvx", "args": ["x"], "env_keys": ["K"], "enabled": True}}}])


def _client_files() -> st.SearchStrategy[bytes]:
    text = documents(CLIENT).map(lambda d: json.dumps(d, default=str))
    # As VS Code writes them: comments and trailing commas anywhere a token may end.
    commented = st.tuples(text, st.integers(0, 1 << 16), st.sampled_from(
        ["// c\n", "/* c */", ",", "/*", "//", '"', "\\", "{" * 3000])).map(
        lambda t: t[0][:t[1] % (len(t[0]) + 1)] + t[2] + t[0][t[1] % (len(t[0]) + 1):])
    return st.binary(max_size=200) | text.map(str.encode) | commented.map(str.encode)


def _feed_client_file(case: bytes, scratch: Path) -> None:
    from hermes.config.client_json import translate
    from hermes.config.importers import read_any

    path = scratch / "mcp.json"
    path.write_bytes(case)
    found, _ = read_any(path, scratch)
    for server in found:
        with contextlib.suppress(HermesError):  # what `hermes mcp import` shows as that server's skip reason
            translate(server.name, server.data)


def _feed_project(case: bytes, scratch: Path) -> None:
    """A project's `.hermes/config.yaml`: what it asks beyond its folder, confined until granted."""
    from hermes.config.project import load_project
    from hermes.home import Home

    project = Path(tempfile.mkdtemp(prefix="project-", dir=scratch))
    (project / ".hermes").mkdir()
    (project / ".hermes" / "config.yaml").write_bytes(case)
    home = Home(scratch / "home")
    home.root.mkdir(exist_ok=True)
    loaded = load_project(home, project)
    assert loaded is not None and set(loaded.asks) <= set(loaded.servers)


# Server and model text: stderr lines, failed calls' text, names, arguments.
_SERVER_WORDS = ["Cannot find package '", "Cannot find module '", "' imported from ", "/tmp/x/node_modules/a.js",
                 "ENOENT", "EROFS", "Read-only file system", "Permission denied", "ECONNREFUSED 127.0.0.1:", "9",
                 "Authorization: Bearer ", "Basic ", "sk-live_", "token=", "password: ", "\x1b]0;", "\u200d",
                 "\ufe0f", "\U000e0067", "🏴", "\ud800", "\n", " ", "~/.ssh/id_ed25519", "@scope/pkg", "x" * 100,
                 "Network is unreachable ", "a-" * 3000]
_SERVER_TEXT = st.lists(st.sampled_from(_SERVER_WORDS) | st.text(max_size=20), max_size=40).map("".join) | \
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", "surrogateescape"))


def _feed_server_text(case: str, scratch: Path) -> None:
    from hermes.config.sandbox import SandboxSettings
    from hermes.mcp.sandbox import plan
    from hermes.mcp.sandbox_denials import DenialWatch
    from hermes.security.invisible import one_line, visible
    from hermes.security.redact import Redactor, shown_command

    sandbox = plan("/bin/sh", [], env={"HOME": str(scratch), "PATH": "/usr/bin"}, cwd=str(scratch),
                   configured_cwd=False, roots=(), settings=SandboxSettings(), hermes_home=str(scratch / "h"))
    DenialWatch("box", sandbox).observe(case)
    shown = visible(case)
    assert visible(shown) == shown
    one_line(case)
    Redactor([case[:12]])(case)
    shown_command(case, case.split(" "))


def _feed_vector_cache(case: bytes, scratch: Path) -> None:
    from hermes.tools.vectors import VectorFile

    path = scratch / "tool-vectors.npz"
    path.write_bytes(case)
    found = VectorFile(path).read(8)
    assert all(len(v) == 8 for v in found.values())


def _vector_files() -> st.SearchStrategy[bytes]:
    """Archives of two `.npy` members whose headers claim any dtype and shape, over little data."""
    import io
    import zipfile

    def archive(parts: tuple[str, str, int, int, int]) -> bytes:
        descr, other, rows, width, data = parts
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as members:
            for name, dtype, columns in (("digests.npy", other, 16), ("vectors.npy", descr, width)):
                header = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': ({rows}, {columns}), }}"
                header += " " * (-(len(header) + 11) % 64) + "\n"
                members.writestr(name, b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
                                 + b"\0" * data)
        return buffer.getvalue()

    dtypes = st.sampled_from(["<f2", "|u1", "<f8", "|O", "<U3", "x"])
    return st.binary(max_size=300) | st.tuples(dtypes, dtypes, st.integers(-2, 2**40), st.integers(-1, 20),
                                               st.integers(0, 4096)).map(archive)


def _feed_dictionary(case: tuple[str, bytes], scratch: Path) -> None:
    from hermes.tools.latin_words import Dictionaries

    index, entries = case
    for name in ("deu-eng", "eng-por"):  # read forwards, and backwards
        (scratch / f"freedict-{name}.index").write_text(index, encoding="utf-8", errors="surrogatepass")
        (scratch / f"freedict-{name}.dict.dz").write_bytes(entries)
    found = Dictionaries(scratch)
    german, portuguese, _ = found.tables()
    assert all(isinstance(w, str) and isinstance(e, str) for w, e in [*german.items(), *portuguese.items()])
    for word in [*list(german)[:3], *list(portuguese)[:3], "datei"]:
        found.english_of(word, found.language_of(word.split()))


def _dictionaries() -> st.SearchStrategy[tuple[str, bytes]]:
    """dictd indexes of lines with any fields (base-64 digits or not, offsets anywhere), over
    entries gzip-compressed or not."""
    import gzip

    digits = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/!", max_size=8)
    line = st.tuples(st.text(max_size=12), digits, digits).map("\t".join) | st.text(max_size=30)
    index = st.lists(line, max_size=12).map("\n".join)
    entry = st.text(max_size=200).map(lambda text: text.encode("utf-8", "surrogatepass"))
    return st.tuples(index, entry.map(gzip.compress) | st.binary(max_size=200))


READERS: dict[str, Reader] = {
    "dictionaries": Reader(_dictionaries(), _feed_dictionary),
    "project config": Reader(_config_files(), _feed_project),
    "server text": Reader(_SERVER_TEXT, _feed_server_text),
    "vector cache": Reader(_vector_files(), _feed_vector_cache),
    "client files": Reader(_client_files(), _feed_client_file),
    "config": Reader(_config_files(), _feed_config),
    "declaration": Reader(_DECLARATIONS, _feed_declaration),
    "plugin manifest": Reader(_plugin_files(), _feed_plugin),
    "catalog manifests": Reader(st.tuples(documents(CATALOG), st.booleans(), st.integers(0, 19).map(lambda n: n == 0)),
                                _feed_catalogs),
}


def run(name: str, count: int, seed_value: int) -> list[str]:
    """Feed `count` inputs to one reader; the escapes, as 'Type: message' lines."""
    reader = READERS[name]
    escapes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hermes-fuzz-") as folder:
        scratch = Path(folder)

        @seed(seed_value)
        @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(reader.cases)
        def feed(case: Any) -> None:
            try:
                reader.feed(case, scratch)
            except HermesError:
                pass
            except Exception as exc:
                escapes.append(f"{type(exc).__name__}: {str(exc)[:200]}")

        feed()
    return escapes
