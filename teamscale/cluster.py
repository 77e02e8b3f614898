"""Debian's PostgreSQL server and HAProxy on loopback, started for the cluster tests and the bench."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx2

from tests.support import PATIENCE, free_port, wait_for

DEPLOY = Path(__file__).parents[1] / "deploy"

# A password that must never appear in anything hermes prints or writes.
PASSWORD = "pg-CANARY-" + secrets.token_hex(8)


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


def start_postgres(bin: Path) -> tuple[Postgres, Path]:
    """A fresh cluster as the `postgres` user when run as root (it refuses root); and its folder."""
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
    return server, folder


class Proxy:
    """Debian's HAProxy with the shipped configuration, pointed at these replicas' ports."""

    def __init__(self, folder: Path, haproxy: str, ports: list[int], per_minute: int | None = None) -> None:
        """`per_minute`: the shipped per-address rate limit replaced (a benchmark sends more from one address)."""
        self.port = free_port()
        text = (DEPLOY / "haproxy" / "haproxy.cfg").read_text()
        if per_minute is not None:
            assert "sc_http_req_rate(0) gt 600" in text
            text = text.replace("sc_http_req_rate(0) gt 600", f"sc_http_req_rate(0) gt {per_minute}")
        text = text.replace("bind 127.0.0.1:8443", f"bind 127.0.0.1:{self.port}")
        for index, port in enumerate(ports, start=1):
            text = re.sub(rf"server replica{index} 127\.0\.0\.1:\d+", f"server replica{index} 127.0.0.1:{port}",
                          text)
        config = folder / "haproxy.cfg"
        config.write_text(text)
        self.log = folder / "haproxy.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=out, stderr=out)
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        if not wait_for(lambda: self._ready() or self.process.poll() is not None) or self.process.poll() is not None:
            raise AssertionError(f"HAProxy did not start: {self.log.read_text()}")

    def _ready(self) -> bool:
        try:
            # A replica answers through it: /mcp without a token is a replica's 401 (the probes
            # stay inside the cluster: the proxy answers 404 for them).
            return httpx2.get(f"http://127.0.0.1:{self.port}/mcp", timeout=5).status_code == 401
        except httpx2.HTTPError:
            return False

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=PATIENCE)
