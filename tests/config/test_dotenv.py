"""`.env` holds the user's secrets: a write keeps every other key, and no value can add a line.

An imported client file or a pasted token may carry any character. Whatever the value, setting it
either gives exactly that value back on reading, every other key untouched, or is refused with a
sentence naming the key, the file left byte for byte as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes.config.dotenv import LINE_BREAKS, read_dotenv, set_dotenv
from hermes.errors import ConfigError

BEFORE = "# mine\nGITHUB_TOKEN=ghp_the_users_own\nOPENAI_API_KEY=sk-users-own\n"
# Characters that matter here, often: every line break, quotes, spaces, '=', '#', NUL.
_TRICKY = st.sampled_from([*sorted(LINE_BREAKS), "'", '"', " ", "\t", "=", "#", "\x00", "export ", "GITHUB_TOKEN="])
VALUES = st.lists(st.one_of(st.text(max_size=8), _TRICKY), max_size=12).map("".join)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=VALUES)
def test_a_value_comes_back_exactly_or_is_refused_and_nothing_else_changes(tmp_path: Path, value: str) -> None:
    path = tmp_path / ".env"
    path.write_text(BEFORE)
    try:
        set_dotenv(path, {"IMPORTED": value})
    except ConfigError as exc:
        assert "IMPORTED" in str(exc) and path.read_text() == BEFORE
        return
    values = read_dotenv(path)
    assert values == {"GITHUB_TOKEN": "ghp_the_users_own", "OPENAI_API_KEY": "sk-users-own", "IMPORTED": value}


@pytest.mark.parametrize("brk", sorted(LINE_BREAKS))
def test_a_line_break_in_a_value_is_refused_not_written(tmp_path: Path, brk: str) -> None:
    path = tmp_path / ".env"
    path.write_text(BEFORE)
    with pytest.raises(ConfigError, match=r"IMPORTED: the value holds a line break \(U\+"):
        set_dotenv(path, {"IMPORTED": f"x{brk}GITHUB_TOKEN=attacker"})
    assert path.read_text() == BEFORE


def test_reading_splits_lines_at_newlines_only(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    # Written by an older hermes or by hand: a U+2028 inside a value stays inside it.
    path.write_text("A=one\u2028GITHUB_TOKEN=attacker\r\nGITHUB_TOKEN=ghp_the_users_own\n")
    assert read_dotenv(path) == {"A": "one\u2028GITHUB_TOKEN=attacker", "GITHUB_TOKEN": "ghp_the_users_own"}


def test_setting_a_key_written_twice_replaces_both(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("TOKEN=old\nOTHER=1\nTOKEN=older\n")
    set_dotenv(path, {"TOKEN": "new"})
    assert read_dotenv(path) == {"TOKEN": "new", "OTHER": "1"}
    assert path.read_text() == "TOKEN=new\nOTHER=1\n"
