"""Edits of `mcp_servers` in the round-trip document (comments and order of the rest survive)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hermes.errors import NoSuchServer, UsageError


def _servers(doc: CommentedMap, *, create: bool) -> CommentedMap:
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = CommentedMap()
        if create:
            doc["mcp_servers"] = servers
    return servers  # type: ignore[no-any-return]


def _child(parent: Any, key: str, kind: type[CommentedMap] | type[CommentedSeq]) -> Any:
    """`parent[key]` when it is a container of that kind, else a new empty one put there."""
    value = parent.get(key)
    if not isinstance(value, dict if kind is CommentedMap else list):
        value = kind()
        parent[key] = value
    return value


def _round_trip(value: Any) -> Any:
    if isinstance(value, dict):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[key] = _round_trip(item)
        return mapping
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_round_trip(v) for v in value)
        seq.fa.set_flow_style()
        return seq
    return value


def add_server(doc: CommentedMap, name: str, entry: dict[str, Any], *, replace: bool = False) -> None:
    servers = _servers(doc, create=True)
    if name in servers and not replace:
        raise UsageError(f"MCP server '{name}' is already configured; use --replace to overwrite it.")
    servers[name] = _round_trip(entry)


def remove_server(doc: CommentedMap, name: str) -> None:
    servers = _servers(doc, create=False)
    if name not in servers:
        raise NoSuchServer(name)
    del servers[name]


def set_server_enabled(doc: CommentedMap, name: str, enabled: bool) -> None:
    """`enabled: false` switches a server off; switching it on removes the key (on is the default)."""
    servers = _servers(doc, create=False)
    if name not in servers:
        raise NoSuchServer(name)
    if enabled:
        servers[name].pop("enabled", None)
    else:
        servers[name]["enabled"] = False


def set_tool_include(doc: CommentedMap, name: str, include: list[str] | None) -> None:
    """Write `tools.include`; None removes the filter (every tool selected)."""
    servers = _servers(doc, create=False)
    if name not in servers:
        raise NoSuchServer(name)
    entry = servers[name]
    tools = entry.get("tools")
    if include is None:
        if isinstance(tools, dict):
            tools.pop("include", None)
            tools.pop("exclude", None)
            if not tools:
                del entry["tools"]
        return
    tools = _child(entry, "tools", CommentedMap)
    tools.pop("exclude", None)
    tools["include"] = _round_trip(include)


def set_plugin_enabled(doc: CommentedMap, name: str, enabled: bool) -> bool:
    """Add or remove `name` in `plugins.enabled`; returns whether anything changed."""
    if enabled:
        names = _child(_child(doc, "plugins", CommentedMap), "enabled", CommentedSeq)
        if name in names:
            return False
        names.append(name)
        return True
    plugins = doc.get("plugins")
    names = plugins.get("enabled") if isinstance(plugins, dict) else None
    if isinstance(names, list) and name in names:
        names.remove(name)
        return True
    return False


def set_model_endpoint(doc: CommentedMap, base_url: str, name: str, api_key: str | None) -> None:
    """Point `model:` at this endpoint and model; its other settings (max_tokens, …) stay as they are.
    `api_key` is what goes into the file (a `${VAR}` reference); None removes a key of another endpoint."""
    model = doc.get("model")
    if not isinstance(model, CommentedMap):
        model = CommentedMap()
        doc["model"] = model
    model["base_url"] = base_url
    model["name"] = name
    if api_key is not None:
        model["api_key"] = api_key
    elif "api_key" in model:
        del model["api_key"]


def add_sandbox_paths(doc: CommentedMap, name: str, read: list[str], write: list[str]) -> None:
    """Add folders to a server's `sandbox.read` / `sandbox.write` (each once; the rest kept as it is)."""
    servers = _servers(doc, create=False)
    if name not in servers:
        raise NoSuchServer(name)
    entry = servers[name]
    current = entry.get("sandbox")
    if current is False or (isinstance(current, str) and current.lower() == "off"):
        raise UsageError(f"MCP server '{name}' runs without a sandbox (sandbox: off); it needs no folders granted.")
    sandbox = _child(entry, "sandbox", CommentedMap)
    for key, paths in (("read", read), ("write", write)):
        if paths:
            listed = _child(sandbox, key, CommentedSeq)
            listed.fa.set_flow_style()
            listed.extend(path for path in dict.fromkeys(paths) if path not in listed)


PERMISSION_KEYS = ("allow", "ask", "deny")


def set_permission(doc: CommentedMap, pattern: str, permission: str | None) -> bool:
    """Put `pattern` under `permissions.<permission>` and out of the other two (None: out of all);
    returns whether anything changed. An emptied list, and an emptied `permissions:`, go away."""
    rules = doc.get("permissions")
    if permission is None and rules is None:
        return False
    # What the user wrote there is never dropped for them: a value of the wrong shape is theirs to fix.
    if rules is not None and not isinstance(rules, dict):
        raise UsageError("config.yaml: permissions must be a mapping with allow, ask and deny lists; fix it first.")
    for key in PERMISSION_KEYS:
        if isinstance(rules, dict) and rules.get(key) is not None and not isinstance(rules.get(key), list):
            raise UsageError(f"config.yaml: permissions.{key} must be a list of tool names; fix it first.")
    rules = _child(doc, "permissions", CommentedMap)
    changed = False
    for key in PERMISSION_KEYS:
        listed = rules.get(key)
        if key == permission:
            listed = _child(rules, key, CommentedSeq)
            if pattern not in listed:
                listed.append(pattern)
                changed = True
        elif isinstance(listed, list) and pattern in listed:
            listed.remove(pattern)
            changed = True
            if not listed:
                del rules[key]
    if not rules:
        del doc["permissions"]
    return changed
