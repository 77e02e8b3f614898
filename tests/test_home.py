"""HERMES_HOME is private: the folder hermes creates is 0700 and every file it writes there is 0600."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from hermes.home import Home
from tests.support import fast_entry, hermes, stdio_entry, write_config


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_home_hermes_creates_is_private(tmp_path: Path) -> None:
    home = Home(tmp_path / "new-home")
    assert hermes("mcp", "add", "box", "--command", "srv", home=home).returncode == 0
    assert _mode(home.root) == 0o700 and _mode(home.config) == 0o600


def test_logs_cache_and_state_files_are_0600(home: Home) -> None:
    write_config(home, {"mcp_servers": {"fast": fast_entry("--stderr-secret"), "box": stdio_entry()}})
    assert hermes("tools", "list", home=home).returncode == 0
    assert hermes("tools", "call", "mcp__box__picture", home=home).returncode == 0
    written = [p for p in home.root.rglob("*") if p.is_file() and p != home.config and not p.name.endswith(".lock")]
    assert {p.name for p in written} >= {"mcp-fast.log", "mcp-box.log", "hermes.log", "known-tools.json"}
    assert any(p.suffix == ".png" for p in written)
    assert {p.name: oct(_mode(p)) for p in written if _mode(p) != 0o600} == {}


@pytest.mark.parametrize("mode", [0o644, 0o640])
def test_a_dotenv_others_can_read_gets_a_warning(home: Home, mode: int) -> None:
    home.dotenv.write_text("K=v\n")
    home.dotenv.chmod(mode)
    result = hermes("mcp", "list", home=home)
    assert result.returncode == 0 and f"{home.dotenv} is readable by other users" in result.stderr
    assert "chmod 600" in result.stderr
    home.dotenv.chmod(0o600)
    assert "readable by other users" not in hermes("mcp", "list", home=home).stderr
