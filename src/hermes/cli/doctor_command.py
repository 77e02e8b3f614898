"""`hermes doctor`: everything hermes depends on, checked at once, each failure with its fix.

config.yaml (and its near-miss keys), `.env`'s permissions, the stdio sandbox (bubblewrap), the
launchers the configured servers need (node, npx, uvx), the model endpoint (one small request
offering a tool), and every configured server (connect, handshake, tools), all at the same time:
the slowest check decides how long it takes, not their sum.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

import click

from hermes import interrupts
from hermes.cli.options import json_option, wait_option
from hermes.cli.output import print_json, print_table, say
from hermes.home import Home

LAUNCHERS = ("node", "npx", "uvx")
_VERSION_WAIT = 15.0  # seconds a launcher's --version may take on a loaded machine


class Verdict(StrEnum):
    OK = "ok"
    WARN = "warn"  # works, but something is off or missing that a server may need later
    FAIL = "fail"
    SKIP = "skip"  # nothing to check (no model configured, a disabled server)


@dataclass(frozen=True)
class Check:
    name: str
    verdict: Verdict
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        return data


@click.command("doctor")
@wait_option
@json_option
def doctor_command(wait: float, as_json: bool) -> None:
    """Check config.yaml, .env, the sandbox, node/npx/uvx, the model endpoint and every server, at once;
    each problem comes with its fix. Exit 1 when anything failed."""
    home = Home.from_env()
    checks = interrupts.run(run_checks, home, wait)
    if as_json:
        print_json({"checks": [c.to_json() for c in checks]})
    else:
        marks = {Verdict.OK: "✓", Verdict.WARN: "!", Verdict.FAIL: "✗", Verdict.SKIP: "-"}
        print_table(["", "CHECK", "RESULT"], [[marks[c.verdict], c.name, c.detail] for c in checks],
                    shrink=["RESULT"])
        for check in checks:
            if check.fix and check.verdict in (Verdict.FAIL, Verdict.WARN):
                say(f"{check.name}: {check.fix}")
        failed = sum(c.verdict is Verdict.FAIL for c in checks)
        say(f"{failed} problem{'s' if failed != 1 else ''} found." if failed else "Everything checked works.")
    sys.exit(1 if any(c.verdict is Verdict.FAIL for c in checks) else 0)


async def run_checks(home: Home, wait: float) -> list[Check]:
    import anyio

    from hermes.config.store import ConfigStore
    from hermes.errors import HermesError

    checks: list[Check] = []
    try:
        config = ConfigStore(home).load()
    except HermesError as exc:
        # Nothing else can be checked against a broken file: say what is wrong with it, and stop there.
        return [Check("config.yaml", Verdict.FAIL, str(exc), "fix the line named, then run `hermes doctor` again"),
                _dotenv(home), _sandbox()]
    checks.append(_config(home, config))
    checks.append(_dotenv(home))
    checks.append(_sandbox())
    found: dict[str, list[Check]] = {}

    async def gather(key: str, work: Any, *args: Any) -> None:
        found[key] = await work(*args)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(gather, "launchers", _launchers, config)
        tasks.start_soon(gather, "model", _model, home)
        tasks.start_soon(gather, "servers", _servers, home, wait)
    return checks + found["launchers"] + found["model"] + found["servers"]


def _config(home: Home, config: Any) -> Check:
    if not home.config.exists():
        return Check("config.yaml", Verdict.WARN, f"{home.config} does not exist yet",
                     "add a server with `hermes mcp add` or `hermes mcp catalog`")
    if config.near_misses:
        return Check("config.yaml", Verdict.WARN, f"unknown top-level key {config.near_misses[0]}",
                     "rename the key; hermes ignores keys it does not know")
    return Check("config.yaml", Verdict.OK, f"{home.config} reads cleanly ({len(config.mcp_servers)} servers)")


def _dotenv(home: Home) -> Check:
    from hermes.config.dotenv import exposure_warning

    if not home.dotenv.exists():
        return Check(".env", Verdict.SKIP, f"no {home.dotenv} (secrets are read from the environment)")
    exposed = exposure_warning(home.dotenv)
    if exposed:
        return Check(".env", Verdict.FAIL, f"{home.dotenv} can be read by other users",
                     f"run `chmod 600 {home.dotenv}`")
    return Check(".env", Verdict.OK, f"{home.dotenv} is private (0600)")


def _sandbox() -> Check:
    from hermes.mcp.sandbox_support import support

    found = support()
    if found.available:
        return Check("sandbox", Verdict.OK, f"bubblewrap works ({found.bwrap}); stdio servers run sandboxed")
    return Check("sandbox", Verdict.FAIL, found.problem,
                 "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`), or set "
                 "`mcp: {sandbox: off}` to run stdio servers with your full rights")


async def _launchers(config: Any) -> list[Check]:
    """node, npx and uvx: found and answering, and which configured servers need each."""
    import anyio

    needed: dict[str, list[str]] = {name: [] for name in LAUNCHERS}
    for name, entry in config.mcp_servers.items():
        program = os.path.basename(entry.command or "")
        if program in needed:
            needed[program].append(name)
    if needed["npx"]:
        needed["node"] += needed["npx"]
    found: list[Check] = []
    for launcher in LAUNCHERS:
        users = needed[launcher]
        path = shutil.which(launcher)
        if path is None:
            verdict = Verdict.FAIL if users else Verdict.SKIP
            why = f"not found; needed by {', '.join(sorted(set(users)))}" if users else "not found (no server needs it)"
            found.append(Check(launcher, verdict, why, "install Node.js 22 or later (npx comes with it)"
                               if launcher != "uvx" else "install uv (`pip install uv`)"))
            continue
        try:
            with anyio.fail_after(_VERSION_WAIT):
                ran = await anyio.run_process([path, "--version"], check=False)
            version = ran.stdout.decode(errors="replace").strip().splitlines()[0] if ran.stdout else "?"
        except (OSError, TimeoutError, IndexError):
            version = "did not say its version"
        found.append(Check(launcher, Verdict.OK, f"{version} ({path})"))
    return found


async def _model(home: Home) -> list[Check]:
    from hermes.agent.chat import ChatOptions, NoModel, model_settings
    from hermes.agent.provider import ModelError
    from hermes.agent.setup import try_model
    from hermes.errors import HermesError

    try:
        settings = model_settings(home, ChatOptions())
    except NoModel:
        return [Check("model", Verdict.SKIP, "no model configured (only `hermes chat` needs one)",
                      "run `hermes model` to set one up")]
    except HermesError as exc:
        return [Check("model", Verdict.FAIL, str(exc), "fix the model block in config.yaml, or run `hermes model`")]
    try:
        tried = await try_model(settings.base_url, settings.name, settings.api_key)
    except ModelError as exc:
        return [Check("model", Verdict.FAIL, str(exc), "check model.base_url, model.name and the API key, or "
                                                       "run `hermes model`")]
    verdict = Verdict.OK if tried.called_tool else Verdict.WARN
    return [Check("model", verdict, tried.sentence(settings.name))]


async def _servers(home: Home, wait: float) -> list[Check]:
    """Every configured server in one session (they start at once), as `hermes mcp test` judges one."""
    from hermes.session.core import Session, SessionSettings
    from hermes.tools.toolsets import shown_server

    found: list[Check] = []
    async with Session(home, SessionSettings(start_wait=wait)) as session:
        for status in session.status():
            name = f"server {shown_server(status.name)}"
            if status.unavailable is None:
                timing = f" in {status.connect_ms:g} ms" if status.connect_ms else ""
                found.append(Check(name, Verdict.OK, f"{status.transport}, connected{timing}, "
                                                     f"{status.tools_offered} tools"))
                continue
            verdict = Verdict.SKIP if str(status.state) == "disabled" else Verdict.FAIL
            found.append(Check(name, verdict, status.why_unavailable, str(status.unavailable.get("user_action", ""))))
    return found
