"""The gateway against a real Matrix homeserver: Synapse from PyPI, on loopback, one per test session.

Run by `.ci/run` after the README suite, with the environment `.ci/platforms.sh` prints:

    eval "$(bash .ci/platforms.sh)" && .venv/bin/python -m pytest -q platforms -n 0

Without that environment these tests fail, on purpose: a skipped test would count as passing
without having run. Synapse runs with federation off, no key servers, no stats and no URL
previews: it makes no connection beyond loopback. Its users are made with the shared-secret
admin API, as `register_new_matrix_user` does; the people in the rooms are matrix-nio clients.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import nio
import pytest

from tests.conftest import blender, bridge_bin, home  # noqa: F401  (the suite's own fixtures, shared)
from tests.support import PATIENCE

CONFIG = """server_name: localhost
public_baseurl: http://127.0.0.1:{port}/
pid_file: {folder}/homeserver.pid
listeners:
  - {{port: {port}, bind_addresses: ["127.0.0.1"], type: http, tls: false, resources: [{{names: [client]}}]}}
database: {{name: sqlite3, args: {{database: {folder}/homeserver.db}}}}
log_config: {folder}/log.config
media_store_path: {folder}/media
signing_key_path: {folder}/signing.key
registration_shared_secret: {secret}
macaroon_secret_key: {macaroon}
form_secret: {form}
report_stats: false
enable_metrics: false
url_preview_enabled: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence: {{enabled: false}}
bcrypt_rounds: 4
rc_message: {unlimited}
rc_registration: {unlimited}
rc_room_creation: {unlimited}
rc_login: {{address: {unlimited}, account: {unlimited}, failed_attempts: {unlimited}}}
rc_joins: {{local: {unlimited}, remote: {unlimited}}}
rc_invites: {{per_room: {unlimited}, per_user: {unlimited}, per_issuer: {unlimited}}}
"""
LOGGING = """version: 1
formatters: {{plain: {{format: '%(asctime)s %(name)s %(levelname)s %(message)s'}}}}
handlers: {{file: {{class: logging.FileHandler, formatter: plain, filename: {folder}/homeserver.log}}}}
root: {{level: WARNING, handlers: [file]}}
disable_existing_loggers: false
"""
UNLIMITED = "{per_second: 100000, burst_count: 100000}"


@dataclass
class Account:
    user_id: str
    token: str


@dataclass
class Homeserver:
    url: str
    secret: str
    folder: Path
    made: int = 0

    def account(self, name: str) -> Account:
        """A new user on the homeserver (a fresh name each time: tests share one server)."""
        self.made += 1
        username, password = f"{name}{self.made}", secrets.token_hex(8)
        with httpx.Client(base_url=self.url, timeout=PATIENCE) as client:
            nonce = client.get("/_synapse/admin/v1/register").json()["nonce"]
            mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
            for part in (nonce, username, password, "notadmin"):
                mac.update(part.encode() + (b"\x00" if part != "notadmin" else b""))
            made = client.post("/_synapse/admin/v1/register", json={
                "nonce": nonce, "username": username, "password": password, "admin": False,
                "mac": mac.hexdigest()})
            made.raise_for_status()
            return Account(made.json()["user_id"], made.json()["access_token"])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homeserver]:
    python = os.environ.get("HERMES_SYNAPSE")
    if not python:
        raise RuntimeError('HERMES_SYNAPSE is not set: run `eval "$(bash .ci/platforms.sh)"` first')
    folder = tmp_path_factory.mktemp("synapse")
    port, secret = _free_port(), secrets.token_hex(16)
    (folder / "homeserver.yaml").write_text(CONFIG.format(
        port=port, folder=folder, secret=secret, macaroon=secrets.token_hex(16), form=secrets.token_hex(16),
        unlimited=UNLIMITED))
    (folder / "log.config").write_text(LOGGING.format(folder=folder))
    with open(folder / "output.log", "wb") as output:
        process = subprocess.Popen([python, "-m", "synapse.app.homeserver", "--generate-keys", "-c",
                                    str(folder / "homeserver.yaml")], cwd=folder, stdout=output, stderr=output)
        assert process.wait(PATIENCE) == 0, (folder / "output.log").read_text()
        process = subprocess.Popen([python, "-m", "synapse.app.homeserver", "-c", str(folder / "homeserver.yaml")],
                                   cwd=folder, stdout=output, stderr=output)
    url = f"http://127.0.0.1:{port}"
    try:
        _until_answering(url, process, folder)
        yield Homeserver(url, secret, folder)
    finally:
        process.terminate()
        process.wait(PATIENCE)


def _until_answering(url: str, process: subprocess.Popen[bytes], folder: Path) -> None:
    """Synapse is up when its client API answers (it says so nowhere else a test can wait on)."""
    deadline = time.monotonic() + 3 * PATIENCE
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Synapse exited at start: {(folder / 'output.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/_matrix/client/versions", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("Synapse did not answer within its start budget")


@dataclass
class Person:
    """Someone in the rooms, on a matrix-nio client of their own: what they were sent, as it arrives."""

    client: Any
    received: list[tuple[str, str, str]] = field(default_factory=list)  # (room, sender, text)
    changed: anyio.Event = field(default_factory=anyio.Event)

    @property
    def user_id(self) -> str:
        return str(self.client.user_id)

    async def room_with(self, bot: str, *, direct: bool = False) -> str:
        """A new room with the bot in it (it takes invites); returns once the bot has joined."""
        made = await self.client.room_create(invite=[bot], is_direct=direct)
        assert isinstance(made, nio.RoomCreateResponse), made
        await self.until(lambda: bot in self._members(made.room_id))
        return str(made.room_id)

    def _members(self, room: str) -> set[str]:
        """Who has joined `room`: nio's `users` counts the invited too, and a message sent while the
        bot is only invited comes before its join (history to it, rightly not answered)."""
        found = self.client.rooms.get(room)
        return set(found.users) - set(found.invited_users) if found is not None else set()

    async def say(self, room: str, text: str) -> int:
        """Send `text`; returns where the replies to it start in `received`."""
        mark = len(self.received)
        sent = await self.client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": text})
        assert isinstance(sent, nio.RoomSendResponse), sent
        return mark

    async def reply(self, room: str, *, after: int, containing: str = "") -> str:
        found: list[str] = []

        def seen() -> bool:
            found[:] = [text for where, _, text in self.received[after:] if where == room and containing in text]
            return bool(found)

        await self.until(seen)
        return found[0]

    async def until(self, predicate: Any) -> None:
        with anyio.fail_after(PATIENCE):
            while not predicate():
                await self.changed.wait()

    def _saw(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


@asynccontextmanager
async def person(homeserver: Homeserver, account: Account) -> AsyncIterator[Person]:
    client = nio.AsyncClient(homeserver.url, account.user_id)
    client.access_token, client.user_id = account.token, account.user_id
    someone = Person(client)

    async def message(room: nio.MatrixRoom, event: nio.RoomMessageText) -> None:
        if event.sender != account.user_id:
            someone.received.append((room.room_id, event.sender, event.body))
        someone._saw()

    async def synced(_: Any) -> None:
        someone._saw()

    client.add_event_callback(message, nio.RoomMessageText)
    client.add_response_callback(synced, nio.SyncResponse)
    try:
        await client.sync(timeout=0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: client.sync_forever(timeout=5_000))
            yield someone
            tasks.cancel_scope.cancel()
    finally:
        await client.close()
