"""Skills of enabled plugins: `skills/<name>/SKILL.md`, offered only while their apps are there.

A skill whose frontmatter says `requires_apps: [server]` is offered only while each named server's
app requirement holds on this host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes.apps.gate import app_gate
from hermes.apps.host import Host
from hermes.config.yamlfile import load_small_yaml
from hermes.files import read_text_bounded
from hermes.plugins.manifest import Plugin


@dataclass(frozen=True)
class Skill:
    plugin: str
    name: str
    description: str
    path: Path
    requires_apps: tuple[str, ...]
    offered: bool
    why_not: str | None
    text: str = field(default="", repr=False, compare=False)  # the SKILL.md as read for this check

    def to_json(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "name": self.name, "description": self.description, "path": str(self.path),
                "requires_apps": list(self.requires_apps), "offered": self.offered, "why_not": self.why_not}


MAX_SKILL_BYTES = 1024 * 1024


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(the `---` block, or None without one; the text after it)."""
    if not text.startswith("---"):
        return None, text
    end = text.find("\n---", 3)
    if end == -1:
        return None, text
    return text[3:end], text[end + 4:]


def frontmatter(text: str) -> dict[str, Any]:
    """The skill's `---` block as plain values; ValueError (the rule) when it is not usable YAML."""
    block, _ = split_frontmatter(text)
    if block is None:
        return {}
    data = load_small_yaml(block)
    if not isinstance(data, dict):
        return {}
    return {str(k): plain(v) for k, v in data.items()}


def plain(value: Any) -> Any:
    """Printable text for a frontmatter value: control characters (terminal escapes) removed."""
    if isinstance(value, str):
        return "".join(c for c in value if c.isprintable() or c in "\t")
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def read_skill(path: Path) -> tuple[str, dict[str, Any], str | None]:
    """(text, frontmatter, why it is unusable): bounded, never a FIFO or a device, never a crash."""
    try:
        text = read_text_bounded(path, MAX_SKILL_BYTES)
    except OSError as exc:
        return "", {}, f"its SKILL.md cannot be read ({getattr(exc, 'reason', None) or exc})"
    try:
        return text, frontmatter(text), None
    except ValueError as exc:
        return text, {}, f"its frontmatter {exc}"


def plugin_skills(plugin: Plugin, host: Host) -> list[Skill]:
    skills = []
    for path in plugin.skills:
        text, meta, why_not = read_skill(path)
        required = meta.get("requires_apps") or []
        required = tuple(str(r) for r in required) if isinstance(required, list) else (str(required),)
        for server in required if why_not is None else ():
            declaration = plugin.declarations.get(server)
            if declaration is None:
                why_not = f"it requires server '{server}', which the plugin does not declare"
                break
            gate = app_gate(declaration, host, plugin.app_name)
            if gate.refusal is not None:
                why_not = gate.refusal.sentence
                break
        skills.append(Skill(plugin.name, str(meta.get("name") or path.parent.name),
                            str(meta.get("description") or ""), path, required, why_not is None, why_not, text))
    return skills
