"""Starting a real team gateway (`hermes mcp serve --http --team`) and its users, for tests."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx2

from hermes.home import Home
from hermes.team.auth import key_hash, new_key
from hermes.team.records import AuditRecord, Rule, User
from hermes.team.sealing import new_key as new_team_key
from tests.support import PATIENCE, PYTHON, wait_for, write_config


def team_config(home: Home, servers: dict[str, Any], *, secrets: dict[str, str] | None = None,
                **team: Any) -> str:
    """The team's config, with its key (and any other secret) in `.env` as a user keeps them; the key."""
    key = new_team_key()
    values = {"HERMES_TEAM_KEY": key, **(secrets or {})}
    home.dotenv.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    home.dotenv.chmod(0o600)
    write_config(home, {"team": {"secret_key": "${HERMES_TEAM_KEY}", **team}, "mcp_servers": servers})
    return key


class Team:
    """The gateway's store and key as `hermes team …` uses them, for a test's setup and checks."""

    def __init__(self, home: Home) -> None:
        from hermes.team.run import team_settings, team_store
        from hermes.team.sealing import Sealer

        settings = team_settings(home)
        self.store = team_store(home, settings)
        self.sealer = Sealer(settings.secret_key)

    async def __aenter__(self) -> Team:
        await self.store.migrate()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.store.close()

    async def user(self, name: str, *groups: str) -> str:
        """Add a user with a static key; the key."""
        key = new_key()
        await self.store.add_user(User(name, groups), key_hash(key))
        return key

    async def rule(self, subject: str, *servers: str, **settings: Any) -> None:
        await self.store.set_rule(Rule(subject, servers, **settings))

    async def credential(self, user: str, name: str, value: str) -> None:
        await self.store.set_credential(user, name, self.sealer.seal(user, name, value))

    async def audit(self) -> list[AuditRecord]:
        return await self.store.audit(limit=10_000)


class Gateway:
    """One replica on a loopback port, its stderr in `log`; `stop()` signals it and waits."""

    def __init__(self, home: Home, log: Path, *extra: str, env: dict[str, str] | None = None, port: int = 0,
                 ready: bool = True) -> None:
        """`ready`: wait until `/readyz` says so (not when the database is meant to be away)."""
        self.log = log
        with log.open("w") as errors:
            self.process = subprocess.Popen(
                [PYTHON, "-m", "hermes", "mcp", "serve", "--http", "--team", "--port", str(port), *extra],
                stdout=subprocess.DEVNULL, stderr=errors,
                env={**os.environ, "HERMES_HOME": str(home.root), "NO_COLOR": "1", **(env or {})})
        found: list[str] = []

        def listening() -> bool:
            found[:] = re.findall(r"team gateway on (http://\S+/mcp)", log.read_text())
            return bool(found) or self.process.poll() is not None

        if not wait_for(listening) or not found:
            self.stop()
            raise AssertionError(f"the team gateway did not start: {log.read_text()}")
        self.url = found[0]
        self.base = self.url.removesuffix("/mcp")
        if ready and not wait_for(lambda: self.get("/readyz").status_code == 200 or self.process.poll() is not None):
            raise AssertionError(f"the team gateway never became ready: {log.read_text()}")

    def get(self, path: str, **kwargs: Any) -> httpx2.Response:
        return httpx2.get(self.base + path, timeout=PATIENCE, **kwargs)

    def stop(self, signal: int = 15) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal)
        try:
            return self.process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
