"""`hermes plugins …` and `hermes skills list`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from hermes.cli.completion import complete_plugins
from hermes.cli.options import json_option
from hermes.cli.output import print_json, print_table, say
from hermes.cli.progress import progress
from hermes.home import Home

_ACTIVATION = ("A running session gets its MCP servers on `hermes mcp reload`; its tools and prompt changes "
               "reach a model from the next session.")


def _host() -> Any:
    from hermes.apps.host import local_host

    return local_host()


@click.group("plugins")
def plugins_group() -> None:
    """Install, enable and inspect portable plugins."""


@plugins_group.command("install")
@click.argument("source")
@click.option("--ref", help="Commit, tag or branch to install (repositories only; catalog entries are pinned).")
@click.option("--enable", "enable_after", is_flag=True, help="Enable the plugin once installed.")
@click.option("--no-warm", is_flag=True, help="Do not fetch the packages its servers launch from (uvx, npx) now.")
def install_command(source: str, ref: str | None, enable_after: bool, no_warm: bool) -> None:
    """Install from a catalog name, owner/repo, a git URL or a folder."""
    from hermes.plugins.install import install
    from hermes.plugins.lifecycle import set_enabled
    from hermes.plugins.manifest import load_plugin

    home = Home.from_env()
    with progress(f"Installing {source}…"):
        result = install(home, source, ref=ref, host=_host())
    what = " ".join(p for p in (result.name, result.version, f"at {result.commit[:12]}" if result.commit else "") if p)
    say(f"{'Replaced' if result.replaced else 'Installed'} plugin {what} in {result.path}.")
    for warning in result.warnings:
        say(f"warning: {warning}", err=True)
    if not no_warm:
        _warm(load_plugin(result.path, home.plugin_data))
    if enable_after:
        set_enabled(home, result.name, True)
        say(f"Enabled '{result.name}'. {_ACTIVATION}")
    else:
        say(f"Enable it with `hermes plugins enable {result.name}`.")


@plugins_group.command("enable")
@click.argument("name", shell_complete=complete_plugins)
def enable_command(name: str) -> None:
    """Enable an installed plugin."""
    from hermes.plugins.lifecycle import set_enabled

    changed = set_enabled(Home.from_env(), name, True)
    say(f"Enabled '{name}'. {_ACTIVATION}" if changed else f"'{name}' was already enabled.")


@plugins_group.command("disable")
@click.argument("name", shell_complete=complete_plugins)
def disable_command(name: str) -> None:
    """Disable a plugin (it stays installed)."""
    from hermes.plugins.lifecycle import set_enabled

    changed = set_enabled(Home.from_env(), name, False)
    say(f"Disabled '{name}'. Running sessions drop its servers on `hermes mcp reload`." if changed
        else f"'{name}' was not enabled.")


@plugins_group.command("remove")
@click.argument("name", shell_complete=complete_plugins)
def remove_command(name: str) -> None:
    """Disable and delete an installed plugin and its data."""
    from hermes.plugins.install import remove_installed
    from hermes.plugins.lifecycle import NoSuchPlugin, set_enabled

    home = Home.from_env()
    if not (home.plugins / name).is_dir():
        raise NoSuchPlugin(name)
    set_enabled(home, name, False)
    remove_installed(home, name)
    say(f"Removed plugin '{name}'.")


@plugins_group.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """Installed plugins: version, source, pinned commit, enabled, availability per server."""
    from hermes.plugins.lifecycle import list_plugins

    rows = list_plugins(Home.from_env(), _host())
    if as_json:
        print_json({"plugins": [r.to_json() for r in rows]})
        return
    if not rows:
        say("No plugins installed. See `hermes plugins catalog`.")
        return
    print_table(["PLUGIN", "VERSION", "ENABLED", "COMMIT", "SOURCE", "SERVERS"], [[
        r.name, r.version or "-", "yes" if r.enabled else "no", (r.commit or "-")[:12], r.source or "-",
        r.error or ", ".join(f"{s.name}: {s.availability.value}" for s in r.servers) or "-",
    ] for r in rows])


@plugins_group.command("update")
@click.argument("name", shell_complete=complete_plugins)
def update_command(name: str) -> None:
    """Move a catalog install to the catalog's current pinned commit (never a branch tip)."""
    from hermes.plugins.lifecycle import update

    with progress(f"Updating {name}…"):
        result = update(Home.from_env(), name, _host())
    if result is None:
        say(f"'{name}' is already at the catalog's pinned commit.")
    else:
        say(f"Updated '{name}' to {result.version or ''} at {(result.commit or '')[:12]}. {_ACTIVATION}")


@plugins_group.command("catalog")
@json_option
def catalog_command(as_json: bool) -> None:
    """Catalog entries and whether each is installed."""
    from hermes.plugins.catalog import PLATFORM_NAMES
    from hermes.plugins.lifecycle import catalog_rows

    rows = catalog_rows(Home.from_env())
    if as_json:
        print_json({"catalog": [row.to_json() for row in rows]})
        return
    for row in rows:
        entry = row.entry
        platforms = ", ".join(PLATFORM_NAMES[p] for p in entry.platforms) or "all"
        say(f"{entry.name} {entry.version} — {entry.shown_title} [{row.shown_state}]")
        say(f"  {entry.repo} @ {entry.sha[:12]}; platforms: {platforms}")
        say(f"  {entry.description}")


@plugins_group.command("validate")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--install-deps", is_flag=True, help="Warm the package caches the plugin's servers launch from.")
def validate_command(path: Path, install_deps: bool) -> None:
    """Check a plugin folder; report each declared server's availability (never a failure)."""
    from hermes.plugins.validate import install_deps as warm
    from hermes.plugins.validate import validate

    home = Home.from_env()
    report = validate(path, _host(), home.plugin_data)
    for line in report.lines:
        say(line)
    if not install_deps:
        return
    failed = False

    def starting(server: str, command: list[str]) -> None:
        say(f"warming {server}: {' '.join(command)}")

    with progress("Preparing the plugin's servers (a cold uvx/npx start can take minutes)…"):
        results = warm(report.plugin, on_start=starting)
    for result in results:
        failed = failed or not result.ok
        say(f"deps {result.server}: {'ok' if result.ok else 'FAILED'} ({result.seconds:.1f} s) {result.detail}")
        for line in result.output:
            say(f"    {line}")
    if not results:
        say("deps: no server needs preparing.")
    sys.exit(1 if failed else 0)


def _warm(plugin: Any) -> None:
    """Fetch what the plugin's servers launch from, so their first start is not a long download."""
    from hermes.plugins.validate import install_deps

    def starting(server: str, command: list[str]) -> None:
        say(f"Preparing {server}: {' '.join(command)}")

    with progress("Fetching the packages the plugin's servers launch from (this can take minutes)…"):
        results = install_deps(plugin, on_start=starting)
    for result in results:
        if result.ok:
            say(f"  {result.server}: ready ({result.seconds:.1f} s)")
            continue
        say(f"warning: preparing {result.server} failed ({result.detail}); its first start may fail or take "
            f"long. `hermes plugins validate --install-deps` retries.", err=True)
        for line in result.output:
            say(f"    {line}", err=True)


@click.group("skills")
def skills_group() -> None:
    """Skills: from enabled plugins, and from this project's .hermes/skills once it is trusted."""


@skills_group.command("list")
@json_option
def skills_list_command(as_json: bool) -> None:
    """Every skill hermes knows here, and whether a chat started now would load it (and why not)."""
    from hermes.agent.skills import all_skills
    from hermes.config.store import ConfigStore
    from hermes.config.trust import TrustKind, TrustStore
    from hermes.plugins.registry import load_enabled

    home = Home.from_env()
    loaded = load_enabled(home, ConfigStore(home).load())
    skills = all_skills(loaded.plugins, _host(), Path.cwd(), TrustStore(home, TrustKind.SKILLS))
    if as_json:
        print_json({"skills": [s.to_json() for s in skills], "plugin_errors": loaded.errors})
        return
    for error in loaded.errors:
        say(f"warning: {error}", err=True)
    if not skills:
        say("No skills: none from enabled plugins, and no .hermes/skills in this folder.")
    for skill in skills:
        state = "loaded" if skill.loaded else f"not loaded: {skill.why_not}"
        say(f"{skill.source}/{skill.name} [{state}] {skill.description}".rstrip())


@skills_group.command("trust")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
def skills_trust_command(folder: Path | None) -> None:
    """Trust a project folder (default: this one): its .hermes skills load from now on, until they change."""
    from hermes.agent.skills import project_skill_files
    from hermes.config.trust import TrustKind, TrustStore

    home = Home.from_env()
    target = TrustStore(home, TrustKind.SKILLS).trust_project(folder or Path.cwd())
    names = [path.parent.name for path in project_skill_files(target)]
    say(f"Trusted {target} for its skills" + (f": {', '.join(names)} load in chat from now on" if names else "")
        + ". Its MCP servers are not affected (`hermes mcp trust` starts them). A change to its .hermes folder "
          "asks again.")
