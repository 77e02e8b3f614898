"""The server shape other MCP clients use (Claude Desktop and Code, Cursor, VS Code, Goose), as hermes entries.

`{"command", "args", "env", "cwd"}` is a stdio server and `{"url", "headers"}` an HTTP one;
`type` (or `transport`) says `stdio`, `http`/`streamable-http` or `sse`. Literal secrets do not
stay in config.yaml: an `env:` value or header that looks like a credential moves to `.env` under
a variable name, and the entry refers to it as `${VAR}`. Placeholders other clients use
(`${input:id}` in VS Code, `${VAR:-default}` in Claude Code) become plain `${VAR}` references
the user fills in `.env`; each such change is reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes.errors import UsageError
from hermes.security.redact import mask_url

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASS(WORD)?|AUTH|CREDENTIAL|PAT|PRIVATE|COOKIE|SESSION)", re.I)
_SECRET_SHAPE = re.compile(r"^(ghp_|gho_|github_pat_|sk-|xox[abpr]-|glpat-|AKIA|eyJ)|^[A-Za-z0-9_\-]{32,}$")
_INPUT = re.compile(r"\$\{input:([^}]+)\}")
_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):-[^}]*\}")
_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamablehttp": "http",
          "streamable_http": "http", "sse": "sse", "remote": "http"}
_KNOWN = {"command", "args", "env", "cwd", "url", "headers", "type", "transport", "disabled", "enabled"}


@dataclass
class Translated:
    entry: dict[str, Any]
    secrets: dict[str, str] = field(default_factory=dict)  # .env variable -> value
    notes: list[str] = field(default_factory=list)


def variable_name(*parts: str) -> str:
    name = "_".join(re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_") for p in parts if p).upper()
    return name if name and not name[0].isdigit() else f"MCP_{name}"


def _texts(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) and not isinstance(v, bool)
                                               for v in value):
        raise UsageError(f"{what} must be a list of strings.")
    return [str(v) for v in value]


def _text_map(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str | int | float)
                                                 and not isinstance(v, bool) for k, v in value.items()):
        raise UsageError(f"{what} must be an object of strings.")
    return {k: str(v) for k, v in value.items()}


def _placeholders(value: str, server: str, notes: list[str]) -> str:
    def from_input(match: re.Match[str]) -> str:
        name = variable_name(match.group(1))
        notes.append(f"{server}: ${{input:{match.group(1)}}} became ${{{name}}}; set {name} in .env")
        return f"${{{name}}}"

    def without_default(match: re.Match[str]) -> str:
        # The default itself is not repeated: it is as likely a credential as any value.
        notes.append(f"{server}: ${{{match.group(1)}:-…}} became ${{{match.group(1)}}} (hermes has no defaults in "
                     f"${{...}}, so its default was not kept); set {match.group(1)} in .env")
        return f"${{{match.group(1)}}}"

    return _DEFAULTED.sub(without_default, _INPUT.sub(from_input, value))


def _looks_secret(key: str, value: str) -> bool:
    if "${" in value or not value.strip():
        return False
    return bool(_SECRET_NAME.search(key)) or bool(_SECRET_SHAPE.search(value.removeprefix("Bearer ").strip()))


def _kept(result: Translated, server: str, key: str, value: str, name: str, move_secrets: bool) -> str:
    """The value to keep in the entry: itself, or `${NAME}` with the credential moved to `result.secrets`
    (an auth scheme such as `Bearer` stays in the entry, in front of the reference)."""
    value = _placeholders(value, server, result.notes)
    if not move_secrets or not _looks_secret(key, value):
        return value
    scheme, _, credential = value.partition(" ") if value.startswith(("Bearer ", "Basic ")) else ("", "", value)
    result.secrets[name] = credential
    return f"{scheme} ${{{name}}}" if scheme else f"${{{name}}}"


# Where clients keep their servers: Claude Desktop, Cursor and most READMEs (`mcpServers`), VS Code (`servers`).
BLOCK_KEYS = ("mcpServers", "servers")


def one_server(name: str, data: Any) -> tuple[Any, str | None]:
    """The server in a pasted `{"mcpServers": {...}}` block (as most servers' READMEs show it):
    the only one there, or the one called `name`; plain entries pass as they are. Also a note to
    show when the block names the server otherwise."""
    if not isinstance(data, Mapping) or len(data) != 1:
        return data, None
    key, block = next(iter(data.items()))
    if key not in BLOCK_KEYS or not isinstance(block, Mapping):
        return data, None
    if name in block:
        return block[name], None
    if len(block) == 1:
        inner = next(iter(block))
        return block[inner], f"the block calls it '{inner}'; it is added as '{name}'"
    names = ", ".join(sorted(str(n) for n in block)[:10])
    raise UsageError(f"The {key} block holds {len(block)} servers ({names}) and none is called '{name}': give one "
                     f"of those names, or add them all with `hermes mcp import FILE`.")


def translate(server: str, data: Any, *, move_secrets: bool = True) -> Translated:
    """One server of another client's config as a hermes entry (raises `UsageError` with the rule)."""
    if not isinstance(data, Mapping):
        raise UsageError(f"Server '{server}' must be a JSON object with 'command' or 'url'.")
    kind = str(data.get("type") or data.get("transport") or "").lower()
    if kind and kind not in _TYPES:
        raise UsageError(f"Server '{server}': type '{kind}' is not one hermes knows (stdio, http, sse).")
    result = Translated({})
    entry, notes = result.entry, result.notes
    command, url = data.get("command"), data.get("url")
    if isinstance(command, str) and command and isinstance(url, str) and url:
        raise UsageError(f"Server '{server}' has both 'command' and 'url'; a server is either stdio or HTTP.")
    if isinstance(command, str) and command:
        entry["command"] = _placeholders(command, server, notes)
        if "args" in data:
            entry["args"] = [_placeholders(a, server, notes) for a in _texts(data["args"], f"'{server}'.args")]
        env = _text_map(data.get("env") or {}, f"'{server}'.env")
        if env:
            entry["env"] = {}
            for key, value in env.items():
                name = key if re.fullmatch(r"[A-Z_][A-Z0-9_]*", key) else variable_name(server, key)
                entry["env"][key] = _kept(result, server, key, value, name, move_secrets)
        if isinstance(data.get("cwd"), str) and data["cwd"]:
            entry["cwd"] = data["cwd"]
    elif isinstance(url, str) and url:
        from hermes.validation import http_url_problem

        filled = _placeholders(url, server, notes)
        problem = None if "${" in filled else http_url_problem(filled)
        if problem:
            raise UsageError(f"Server '{server}': url {problem} (got {mask_url(url)!r}).")
        entry["url"] = filled
        headers = _text_map(data.get("headers") or {}, f"'{server}'.headers")
        if headers:
            entry["headers"] = {}
            for key, value in headers.items():
                entry["headers"][key] = _kept(result, server, key, value, variable_name(server, key), move_secrets)
        # Cursor (and older clients) name no type: a URL ending in /sse is the legacy SSE transport there.
        from urllib.parse import urlsplit

        legacy = not kind and urlsplit(filled).path.rstrip("/").endswith("/sse")
        if _TYPES.get(kind) == "sse" or legacy:
            entry["transport"] = "sse"
            if legacy:
                notes.append(f"{server}: its url ends in /sse, so it is imported as an SSE server (transport: sse)")
    else:
        from hermes.validation import suggestion

        # A misspelt key (`comand`) is the likeliest reason neither is there: name it.
        hints = [f"; '{key}'{hint}" for key in data if isinstance(key, str) and key not in _KNOWN
                 for hint in [suggestion(key, _KNOWN)] if hint]
        raise UsageError(f"Server '{server}' needs 'command' (stdio) or 'url' (HTTP){''.join(hints[:3])}.")
    if data.get("disabled") is True or data.get("enabled") is False:
        entry["enabled"] = False
    ignored = sorted(k for k in data if k not in _KNOWN)
    if ignored:
        notes.append(f"{server}: ignored {', '.join(ignored)} (not a hermes setting)")
    return result


def apply_renames(entry: dict[str, Any], renames: dict[str, str]) -> None:
    """Point an entry's `${OLD}` references at the names the secrets were actually stored under."""
    for key in ("env", "headers"):
        for name, value in list(entry.get(key, {}).items()):
            for old, new in renames.items():
                value = value.replace(f"${{{old}}}", f"${{{new}}}")
            entry[key][name] = value
