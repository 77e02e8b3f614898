"""The team gateway on a real cluster's parts: Debian's PostgreSQL server and HAProxy, on loopback.

Run by `.ci/run` after the README suite, with the environment `.ci/teamscale.sh` prints:

    eval "$(bash .ci/teamscale.sh)" && .venv/bin/python -m pytest -q teamscale -n 0

Without that environment these tests fail, on purpose: a skipped test would count as passing
without having run. PostgreSQL runs as the `postgres` user when the tests run as root (it refuses
root), with password authentication, listening on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from teamscale.cluster import PASSWORD, Postgres, start_postgres
from tests.conftest import anyio_backend, home  # noqa: F401  (the suite's own fixtures, shared)

__all__ = ["PASSWORD", "Postgres"]

def _required(variable: str) -> str:
    value = os.environ.get(variable)
    if not value:
        pytest.fail(f"{variable} is not set: run `eval \"$(bash .ci/teamscale.sh)\"` first")
    return value


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    server, folder = start_postgres(Path(_required("HERMES_POSTGRES_BIN")))
    try:
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
