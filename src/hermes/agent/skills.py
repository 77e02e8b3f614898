"""The skills a chat session's system prompt carries, and the ones it leaves out (with why).

Two sources:
- enabled plugins' `skills/<name>/SKILL.md`, offered while the apps they require are there;
- the project's `./.hermes/skills/<name>/SKILL.md` in the folder hermes runs in, only once the
  user has trusted that folder (and as long as nothing in its `.hermes` changed since).
The list is read once, when a session starts: the prompt it goes into never changes mid-session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes.apps.host import Host
from hermes.config.trust import TrustStore
from hermes.plugins.manifest import Plugin
from hermes.plugins.skills import plugin_skills, read_skill, split_frontmatter

MAX_SKILL_CHARS = 20_000  # a skill's text in the prompt; past it, cut (and said so)


@dataclass(frozen=True)
class SkillEntry:
    source: str  # "plugin:<name>" or "project"
    name: str
    description: str
    path: Path
    loaded: bool
    why_not: str | None = None
    body: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "name": self.name, "description": self.description, "path": str(self.path),
                "loaded": self.loaded, "why_not": self.why_not}


def _body(text: str) -> str:
    """The skill's text without its frontmatter, capped."""
    text = split_frontmatter(text)[1].strip()
    if len(text) > MAX_SKILL_CHARS:
        text = text[:MAX_SKILL_CHARS] + f"\n[... skill text cut at {MAX_SKILL_CHARS} characters ...]"
    return text


def project_skill_files(folder: Path) -> list[Path]:
    skills = folder / ".hermes" / "skills"
    if not skills.is_dir() or skills.is_symlink():
        return []
    return sorted(p / "SKILL.md" for p in skills.iterdir() if p.is_dir() and not p.is_symlink()
                  and (p / "SKILL.md").is_file() and not (p / "SKILL.md").is_symlink())


def project_skills(folder: Path, trust: TrustStore) -> list[SkillEntry]:
    files = project_skill_files(folder)
    if not files:
        return []
    state = trust.state(folder)
    entries = []
    for path in files:
        text, meta, problem = read_skill(path)
        name = str(meta.get("name") or path.parent.name)
        description = str(meta.get("description") or "")
        why_not = problem or (None if state.trusted else
                              f"the project {state.folder} is not trusted: {state.why_not} "
                              f"(run `hermes skills trust {state.folder}`)")
        entries.append(SkillEntry("project", name, description, path, why_not is None, why_not,
                                  _body(text) if why_not is None else ""))
    return entries


def plugin_skill_entries(plugins: list[Plugin], host: Host) -> list[SkillEntry]:
    entries = []
    for plugin in plugins:
        for skill in plugin_skills(plugin, host):
            entries.append(SkillEntry(f"plugin:{plugin.name}", skill.name, skill.description, skill.path,
                                      skill.offered, skill.why_not, _body(skill.text) if skill.offered else ""))
    return entries


def all_skills(plugins: list[Plugin], host: Host, folder: Path, trust: TrustStore) -> list[SkillEntry]:
    return plugin_skill_entries(plugins, host) + project_skills(folder, trust)
