"""The team gateway on a real cluster's parts: Debian's PostgreSQL server and HAProxy, on loopback.

Run by `.ci/run` after the README suite, with the environment `.ci/teamscale.sh` prints:

    eval "$(bash .ci/teamscale.sh)" && .venv/bin/python -m pytest -q teamscale -n 0

Without that environment these tests fail, on purpose: a skipped test would count as passing
without having run. PostgreSQL runs as the `postgres` user when the tests run as root (it refuses
root), with password authentication, listening on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import anyio_backend, home  # noqa: F401  (the suite's own fixtures, shared)
from tests.support import PATIENCE, free_port

# A password that must never appear in anything hermes prints or writes.
PASSWORD = "pg-CANARY-" + secrets.token_hex(8)


def _required(variable: str) -> str:
    value = os.environ.get(variable)
    if not value:
        pytest.fail(f"{variable} is not set: run `eval \"$(bash .ci/teamscale.sh)\"` first")
    return value


@dataclass
class Postgres:
    bin: Path
    data: Path
    port: int
    owner: str | None  # the user it runs as, when the tests run as root

    def _run(self, *command: str) -> None:
        subprocess.run(command, check=True, capture_output=True, timeout=PATIENCE, user=self.owner)

    def start(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", str(int(PATIENCE)), "-l",
                  str(self.data / "server.log"), "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 "
                                                      f"-k {self.data}", "start")

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-m", "fast", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://hermes:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = "team_" + secrets.token_hex(4)
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
        return self.url(name)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    bin = Path(_required("HERMES_POSTGRES_BIN"))
    folder = Path(tempfile.mkdtemp(prefix="hermes-pg-"))
    folder.chmod(0o755)
    owner = "postgres" if os.geteuid() == 0 else None
    data = folder / "data"
    password_file = folder / "password"
    password_file.write_text(PASSWORD + "\n")
    if owner:
        shutil.chown(folder, owner)
        shutil.chown(password_file, owner)
    server = Postgres(bin, data, free_port(), owner)
    subprocess.run([str(bin / "initdb"), "-D", str(data), "-U", "hermes", "--auth=scram-sha-256",
                    f"--pwfile={password_file}", "--no-sync"], check=True, capture_output=True, user=owner,
                   timeout=PATIENCE)
    server.start()
    try:
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
