"""Seeded hostile inputs for every reader of user and plugin files, and the rule they must keep.

The rule: a reader returns its value or raises a `HermesError` (one sentence for the user); any
other exception is an *escape*, a traceback waiting to happen. Inputs are random documents built
from each format's own vocabulary (so they get deep into the readers), random mutations of valid
documents, and raw bytes. Used by `tests/test_fuzz.py` (a few hundred per reader, every run) and
`bench/fuzz_readers.py` (20,000 per reader).
"""

from __future__ import annotations

import copy
import json
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
                      "server_json", "none", "static", "plist", "dpkg", "executable", "bundle", "5.1", "1.0-beta"]


@dataclass
class Vocabulary:
    keys: list[str]
    valid: list[Any] = field(default_factory=list)


def random_value(rng: random.Random, vocab: Vocabulary, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 5 or roll < 0.35:
        return rng.choice(SCALARS + vocab.keys)
    if roll < 0.55:
        return [random_value(rng, vocab, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice([*vocab.keys, "zz"]): random_value(rng, vocab, depth + 1) for _ in range(rng.randint(0, 5))}


def mutate(rng: random.Random, value: Any, vocab: Vocabulary) -> Any:
    """A copy of `value` with one node replaced, removed or added somewhere inside."""
    value = copy.deepcopy(value)
    containers = [value]
    node = value
    for _ in range(rng.randint(0, 6)):
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        children = [c for c in children if isinstance(c, (dict, list))]
        if not children:
            break
        node = rng.choice(children)
        containers.append(node)
    target = rng.choice(containers)
    if isinstance(target, dict):
        if target and rng.random() < 0.4:
            del target[rng.choice(list(target))]
        else:
            target[rng.choice(vocab.keys + list(target or ["zz"]))] = random_value(rng, vocab, 3)
    elif isinstance(target, list):
        if target and rng.random() < 0.5:
            target[rng.randrange(len(target))] = random_value(rng, vocab, 3)
        else:
            target.append(random_value(rng, vocab, 3))
    return value


def document(rng: random.Random, vocab: Vocabulary) -> Any:
    if vocab.valid and rng.random() < 0.6:
        return mutate(rng, rng.choice(vocab.valid), vocab)
    return random_value(rng, vocab)


# -- the readers, each fed one input -------------------------------------------------------------

CONFIG = Vocabulary(
    ["mcp_servers", "platform_toolsets", "mcp", "plugins", "model", "command", "args", "env", "cwd", "url", "headers",
     "transport", "auth", "oauth", "enabled", "timeout", "connect_timeout", "tools", "include", "exclude",
     "resources", "prompts", "client", "stdio_servers", "client_id", "client_secret", "scope", "redirect_port",
     "box", "web", "cli"],
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


def read_config(rng: random.Random, scratch: Path) -> None:
    path = scratch / "config.yaml"
    roll = rng.random()
    if roll < 0.1:
        path.write_bytes(rng.randbytes(rng.randint(0, 200)))
    elif roll < 0.2:
        text = _yaml_text(document(rng, CONFIG))
        cut = rng.randrange(len(text) + 1)
        path.write_text(text[:cut] + rng.choice(["[", "{", ":", "? ", "&a", "*a", "!!python/object:os.system", "\t"])
                        + text[cut:])
    else:
        path.write_text(_yaml_text(document(rng, CONFIG)))
    parse_config(load_yaml(path), path)


def read_declaration(rng: random.Random, scratch: Path) -> None:
    plugin = {"extensions": {EXTENSION_KEY: {"servers": {"blender": document(rng, DECLARATION)}}}}
    if rng.random() < 0.1:
        plugin = {"extensions": random_value(rng, DECLARATION)}
    parse_declarations(plugin, {"blender"})


def read_plugin(rng: random.Random, scratch: Path) -> None:
    root = scratch / f"plugin-{rng.randrange(1 << 30)}"
    root.mkdir()
    files = document(rng, MANIFEST)
    if not isinstance(files, dict):
        files = {"plugin.json": files}
    for name in ("plugin.json", "mcp.json"):
        content = files.get(name, random_value(rng, MANIFEST)) if rng.random() < 0.9 else None
        if content is None:
            continue
        if rng.random() < 0.05:
            (root / name).write_bytes(rng.randbytes(rng.randint(0, 64)))
        else:
            (root / name).write_text(json.dumps(content, default=str))
    load_plugin(root, scratch / "data")


def read_catalogs(rng: random.Random, scratch: Path) -> None:
    value = document(rng, CATALOG)
    if rng.random() < 0.5:
        parse_manifest(value, "box.json")
        return
    path = scratch / f"catalog-{rng.randrange(1 << 30)}.json"
    path.write_text(json.dumps(value, default=str) if rng.random() < 0.95 else "{" * rng.randint(1, 5000))
    read_plugin_catalog(path)
    folder = scratch / f"entries-{rng.randrange(1 << 30)}"
    folder.mkdir()
    (folder / "x.json").write_text(json.dumps(value, default=str))
    load_entries(folder)


READERS: dict[str, Callable[[random.Random, Path], None]] = {
    "config": read_config, "declaration": read_declaration, "plugin manifest": read_plugin,
    "catalog manifests": read_catalogs,
}


def run(name: str, count: int, seed: int) -> list[str]:
    """Feed `count` inputs to one reader; the escapes, as 'Type: message' lines."""
    reader = READERS[name]
    rng = random.Random(f"{name}:{seed}")
    escapes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hermes-fuzz-") as folder:
        scratch = Path(folder)
        for _ in range(count):
            try:
                reader(rng, scratch)
            except HermesError:
                pass
            except Exception as exc:
                escapes.append(f"{type(exc).__name__}: {str(exc)[:200]}")
    return escapes
