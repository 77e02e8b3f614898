"""`hermes mcp import`: the servers Claude Desktop, Claude Code, Cursor, VS Code and Goose already know.

It shows what it found and where, then adds the chosen ones (a checklist in a terminal; all with
`--yes`). Secrets in those files go to `.env` and the config refers to them as `${VAR}`. A name
that is already configured (or found twice) is reported and left alone, never overwritten.
Everything is one transaction: config.yaml and .env are both written, or neither is.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes.cli.asking import answer_to
from hermes.cli.options import json_option
from hermes.cli.output import print_json, print_table, say
from hermes.config.store import ConfigStore
from hermes.errors import HermesError, UsageError
from hermes.home import Home
from hermes.security.redact import mask_url, shown_command

if TYPE_CHECKING:  # the readers load only when `import` runs
    from hermes.config.client_json import Translated
    from hermes.config.importers import FoundServer


@dataclass
class Candidate:
    """A server found in another client's file, and what adding it would do."""

    found: FoundServer
    name: str
    translated: Translated | None = None
    skip: str | None = None  # why it will not be added
    notes: list[str] = field(default_factory=list)
    # Read from a file of the project in the current folder (its .mcp.json, say): it came with the
    # code, so it goes to the project's config, where nothing starts until the folder is trusted.
    from_project: bool = False

    def row(self) -> dict[str, Any]:
        entry = self.translated.entry if self.translated else {}
        target = mask_url(entry["url"]) if entry.get("url") else \
            shown_command(entry.get("command", ""), entry.get("args", []))
        return {"client": self.found.client, "file": str(self.found.path), "name": self.name,
                "original_name": self.found.name, "target": target, "skip": self.skip,
                "secrets": sorted(self.translated.secrets) if self.translated else [], "notes": self.notes}


def _hermes_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "server"
    return cleaned[:64]


def gather(home: Home, source: Path | None) -> tuple[list[Candidate], list[str]]:
    from hermes.config.client_json import translate
    from hermes.config.importers import client_files, read_any, read_client_file
    from hermes.config.model import SERVER_NAME

    cwd = Path.cwd()
    problems: list[str] = []
    found: list[FoundServer] = []
    if source is not None:
        servers, problem = read_any(source, cwd)
        found += servers
        problems += [problem] if problem else []
    else:
        appdata = Path(os.environ["APPDATA"]) if os.environ.get("APPDATA") else None
        for file in client_files(Path.home(), cwd, sys.platform, appdata):
            servers, problem = read_client_file(file, cwd)
            found += servers
            problems += [problem] if problem else []
    project = project_store(home)
    project_folder = project.path.parent.parent
    existing = set(ConfigStore(home).load().mcp_servers)
    if project.path.is_file():
        existing |= set(project.load().mcp_servers)
    taken: dict[str, Candidate] = {}
    candidates = []
    for server in found:
        name = _hermes_name(server.name)
        candidate = Candidate(server, name, from_project=_inside(server.path, project_folder))
        if name != server.name:
            candidate.notes.append(f"renamed from '{server.name}' (hermes names: letters, digits, _ . -)")
        try:
            candidate.translated = translate(name, server.data)
            candidate.notes += candidate.translated.notes
        except HermesError as exc:
            candidate.skip = str(exc)
        if candidate.skip is None and not SERVER_NAME.match(name):
            candidate.skip = f"'{name}' is not a name hermes can use"
        if candidate.skip is None and name in existing:
            candidate.skip = f"a server named '{name}' is already configured (kept as it is)"
        if candidate.skip is None and name in taken:
            first, earlier = taken[name].found, taken[name].translated
            same = earlier is not None and candidate.translated is not None and \
                earlier.entry == candidate.translated.entry
            candidate.skip = (f"the same server as in {first.client}" if same else
                              f"'{name}' was also found in {first.client} ({first.path}); that one is used")
        if candidate.skip is None:
            taken[name] = candidate
        candidates.append(candidate)
    return candidates, problems


def _choose(candidates: list[Candidate]) -> list[Candidate]:
    import questionary

    choices = [questionary.Choice(f"{c.name}  ({c.found.client})", value=c, checked=True)
               for c in candidates if c.skip is None]
    picked = answer_to(questionary.checkbox("Servers to add to hermes:", choices=choices))
    return list(picked or [])


def _write(home: Home, chosen: list[Candidate]) -> None:
    """Every chosen server and its secrets, as one change (nothing is written if any part fails)."""
    from hermes.config.client_json import apply_renames
    from hermes.config.dotenv import secrets_to_dotenv
    from hermes.config.edit import add_server
    from hermes.config.transaction import edit_transaction

    secrets: dict[str, str] = {}
    for candidate in chosen:
        assert candidate.translated is not None
        for key, value in candidate.translated.secrets.items():
            if key in secrets and secrets[key] != value:
                # Two servers use the same variable name for different values: the later one is renamed.
                new = f"{key}_{_hermes_name(candidate.name).upper().replace('-', '_').replace('.', '_')}"
                apply_renames(candidate.translated.entry, {key: new})
                key = new
            secrets[key] = value
    home.ensure()
    project = project_store(home)
    with edit_transaction(home, project.path):
        renames = secrets_to_dotenv(home.dotenv, secrets)
        for store, group in ((ConfigStore(home), [c for c in chosen if not c.from_project]),
                             (project, [c for c in chosen if c.from_project])):
            if not group:
                continue
            with store.edit() as doc:
                for candidate in group:
                    assert candidate.translated is not None
                    apply_renames(candidate.translated.entry, renames)
                    add_server(doc, candidate.name, candidate.translated.entry)


def project_store(home: Home) -> ConfigStore:
    """The project's `.hermes/config.yaml`, where servers read from the project's own files go."""
    from hermes.config.project import PROJECT_CONFIG, project_root_for_edit

    return ConfigStore(home, project_root_for_edit(Path.cwd(), home) / PROJECT_CONFIG)


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


@click.command("import")
@click.option("--from", "source", type=click.Path(dir_okay=False, path_type=Path),
              help="Read this file (any of the clients' formats) instead of the clients' usual places.")
@click.option("--yes", "-y", is_flag=True, help="Add every server found that is not already configured.")
@json_option
def import_command(source: Path | None, yes: bool, as_json: bool) -> None:
    """Import MCP servers from Claude Desktop, Claude Code, Cursor, VS Code and Goose."""
    home = Home.from_env()
    candidates, problems = gather(home, source)
    if source is not None and problems:
        raise UsageError(problems[0])  # the one file the user named cannot be used: nothing is written
    for problem in problems:
        say(f"warning: {problem}", err=True)
    addable = [c for c in candidates if c.skip is None]
    if as_json and not yes:
        print_json({"found": [c.row() for c in candidates], "problems": problems})
        return
    if not candidates:
        say("No MCP servers found in Claude Desktop, Claude Code, Cursor, VS Code or Goose"
            + (f" ({source})" if source else "") + ".")
        return
    if not as_json:
        print_table(["NAME", "FROM", "TARGET", "STATUS"],
                    [[c.name, c.found.client, c.row()["target"], f"skip: {c.skip}" if c.skip else "new"]
                     for c in candidates], shrink=("TARGET", "STATUS"))
    if not addable:
        say("Nothing new to add.")
        return
    if yes:
        chosen = addable
    elif sys.stdin.isatty() and sys.stdout.isatty():
        chosen = _choose(candidates)
    else:
        raise UsageError("Choosing needs a terminal; run `hermes mcp import --yes` to add every new server.")
    if not chosen:
        say("Nothing added.")
        return
    _write(home, chosen)
    if as_json:
        print_json({"added": [c.row() for c in chosen], "skipped": [c.row() for c in candidates if c.skip],
                    "problems": problems})
        return
    for candidate in chosen:
        for note in candidate.notes:
            say(f"note: {note}")
    moved = sorted({k for c in chosen if c.translated for k in c.translated.secrets})
    say(f"Added {len(chosen)} server{'s' if len(chosen) != 1 else ''}: {', '.join(c.name for c in chosen)}."
        + (f" Secrets ({', '.join(moved)}) are in {home.dotenv} (0600), referred to as ${{VAR}}." if moved else ""))
    from_project = [c.name for c in chosen if c.from_project]
    if from_project:
        folder = project_store(home).path.parent.parent
        say(f"{', '.join(from_project)} came from this project's files, so they went to {folder}/.hermes/config.yaml "
            f"and start only once you trust the folder: review it, then run `hermes mcp trust {folder}`.")
    say("Check them with `hermes mcp test NAME`; running sessions pick them up after `hermes mcp reload`.")
