"""Helpers shared by the benchmarks: temporary homes, configs and a small report format."""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from hermes.home import Home

BENCH = Path(__file__).parent
REPO = BENCH.parent
PYTHON = sys.executable
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"


@contextmanager
def temp_home(servers: dict[str, dict[str, Any]]) -> Iterator[Home]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as root:
        home = Home(Path(root))
        with home.config.open("w") as handle:
            YAML().dump({"mcp_servers": servers}, handle)
        yield home


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(title: str, rows: list[tuple[str, str]]) -> None:
    print(f"\n== {title}")
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label.ljust(width)}  {value}")


@contextmanager
def toolbox_http() -> Iterator[str]:
    """The suite's SDK test server over Streamable HTTP on loopback: its /mcp URL; stopped at the end."""
    from tests.support import start_portfile_server

    with tempfile.TemporaryDirectory() as scratch:
        portfile = Path(scratch) / "port"
        server, port = start_portfile_server([PYTHON, str(TOOLBOX), "--http", str(portfile)], portfile)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.kill()
            server.wait()
