"""Skills of enabled plugins: `skills/<name>/SKILL.md`, offered only while their apps are there.

A skill whose frontmatter says `requires_apps: [server]` is offered only while each named server's
app requirement holds on this host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hermes.apps.gate import app_gate
from hermes.apps.host import Host
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

    def to_json(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "name": self.name, "description": self.description, "path": str(self.path),
                "requires_apps": list(self.requires_apps), "offered": self.offered, "why_not": self.why_not}


def frontmatter(text: str) -> dict[str, Any]:
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end == -1:
        return {}
    try:
        data = YAML(typ="safe").load(text[3:end])
    except YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def plugin_skills(plugin: Plugin, host: Host) -> list[Skill]:
    skills = []
    for path in plugin.skills:
        meta = frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        required = meta.get("requires_apps") or []
        required = tuple(str(r) for r in required) if isinstance(required, list) else (str(required),)
        why_not = None
        for server in required:
            declaration = plugin.declarations.get(server)
            if declaration is None:
                why_not = f"it requires server '{server}', which the plugin does not declare"
                break
            gate = app_gate(declaration, host, plugin.app_name)
            if gate.refusal is not None:
                why_not = gate.refusal.sentence
                break
        skills.append(Skill(plugin.name, str(meta.get("name") or path.parent.name),
                            str(meta.get("description") or ""), path, required, why_not is None, why_not))
    return skills
