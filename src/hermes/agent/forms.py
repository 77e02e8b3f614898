"""A server's elicitation form as plain fields, and the answers typed the way its schema says.

The dashboard draws these fields as a web form, the gateway asks them one by one in a chat, the
terminal chat as prompts; each surface hands the values back to `form_content`, which refuses what
the schema does not allow in one sentence.
"""

from __future__ import annotations

from typing import Any

from hermes.errors import UsageError


def options_of(spec: dict[str, Any]) -> list[tuple[Any, str]]:
    """The choices a field offers as (value, what the user reads): `enum` (with the legacy `enumNames`),
    or `oneOf`/`anyOf` entries of `const` and `title`."""
    listed = spec.get("enum")
    if isinstance(listed, list) and listed:
        names = spec.get("enumNames")
        titles = names if isinstance(names, list) and len(names) == len(listed) else listed
        return [(value, str(title)) for value, title in zip(listed, titles, strict=True)]
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list):
            found = [(o["const"], str(o.get("title") or o["const"])) for o in options
                     if isinstance(o, dict) and "const" in o]
            if found:
                return found
    return []


def form_fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """A server's requested schema as fields a page can draw (name, label, type, options, default)."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    found: list[dict[str, Any]] = []
    for name, spec in (properties or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        options = options_of(spec)
        kind = "choice" if options else str(spec.get("type") or "string")
        found.append({"name": str(name), "label": str(spec.get("title") or name),
                      "description": str(spec.get("description") or ""), "type": kind,
                      "required": name in (required or []), "default": spec.get("default"),
                      "options": [[value, title] for value, title in options]})
    return found


def form_content(fields: list[dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """The values the page sent, typed as the schema says; a missing required field is refused."""
    content: dict[str, Any] = {}
    for spec in fields:
        name, raw = spec["name"], values.get(spec["name"])
        if raw is None or raw == "":
            if spec["required"] and spec["type"] != "boolean":
                raise UsageError(f"'{spec['label']}' is required.")
            if spec["type"] == "boolean":
                content[name] = False
            continue
        content[name] = _typed(spec, raw)
    return content


def _typed(spec: dict[str, Any], raw: Any) -> Any:
    kind = spec["type"]
    if kind == "boolean":
        return raw is True or str(raw).lower() in ("true", "on", "yes", "1")
    if kind == "choice":
        for value, _title in spec["options"]:
            if str(value) == str(raw):
                return value
        raise UsageError(f"'{spec['label']}' must be one of the choices offered.")
    if kind in ("integer", "number"):
        try:
            return int(str(raw)) if kind == "integer" else float(str(raw))
        except ValueError:
            raise UsageError(f"'{spec['label']}' must be a number.") from None
    return str(raw)
