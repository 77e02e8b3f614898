"""The redactor, URL masking for listings, and the exact environment a stdio server receives."""

from __future__ import annotations

import pytest

from hermes.security.environment import child_environment
from hermes.security.redact import REDACTED, Redactor, mask_url


@pytest.mark.parametrize(("text", "leaked"), [
    ("token ghp_0123456789abcdefghijABCD here", "ghp_0123456789abcdefghijABCD"),
    ("key sk-proj-abcdefghijklmnop", "sk-proj-abcdefghijklmnop"),
    ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
    ("url?token=s3cr3tvalue&x=1", "s3cr3tvalue"),
    ("password: hunter2hunter2", "hunter2hunter2"),
    ('{"api_key": "zzzzzzzzzz"}', "zzzzzzzzzz"),
    ("slack xoxb-1234567890-abcdef", "xoxb-1234567890-abcdef"),
])
def test_known_shapes_are_redacted(text: str, leaked: str) -> None:
    redacted = Redactor()(text)
    assert leaked not in redacted and REDACTED in redacted


@pytest.mark.parametrize("before", ["İ ", "İstanbul, ", "İ" * 10 + " ", "x" * 300 + "İ" * 10 + " "])
@pytest.mark.parametrize(("text", "leaked"), [
    ("token=abcDEF123456xyz", "abcDEF123456xyz"),
    ("Authorization: Bearer abcdefghijklmnop123", "abcdefghijklmnop123"),
    ("db https://user:S3cretPass99@host/db", "S3cretPass99"),
    ("basic dXNlcjpodW50ZXIyaHVudGVyMg==", "dXNlcjpodW50ZXIyaHVudGVyMg=="),
])
def test_a_dotted_capital_i_before_a_secret_moves_nothing(before: str, text: str, leaked: str) -> None:
    """"İ" is the one character that lowers to two: the rules find names in the lowered text and
    cut the text at the same places, so every place after it must stay where it was."""
    redacted = Redactor()(before + text)
    assert leaked not in redacted and redacted.startswith(before) and REDACTED in redacted
    assert Redactor()(before + "basic") == before + "basic"


def test_registered_values_longest_first_and_repr_hides() -> None:
    redactor = Redactor(["abcd1234", "abcd1234-extended"])
    assert redactor("x abcd1234-extended y abcd1234") == f"x {REDACTED} y {REDACTED}"
    assert "abcd" not in repr(redactor)
    redactor.register("ab")  # too short to hide everywhere without destroying ordinary text
    assert redactor("ab") == "ab"


def test_json_values_are_redacted_at_every_depth_keys_included() -> None:
    canary = "canary-5e1f9a0b7c"
    redactor = Redactor([canary])
    value = {"level": [1, {"note": f"seen {canary}"}], canary: None, "n": 3.5, "ok": True}
    redacted = redactor.value(value)
    assert canary not in repr(redacted)
    assert redacted == {"level": [1, {"note": f"seen {REDACTED}"}], REDACTED: None, "n": 3.5, "ok": True}


def test_child_environment_allowlist() -> None:
    parent = {"PATH": "/bin", "HOME": "/h", "AWS_SECRET_ACCESS_KEY": "x", "XDG_RUNTIME_DIR": "/run/u",
              "http_proxy": "p", "LANG": "C", "SHELL": "() { :; }; evil"}
    env = child_environment(parent, {"OWN": "1"})
    assert env == {"PATH": "/bin", "HOME": "/h", "XDG_RUNTIME_DIR": "/run/u", "LANG": "C", "OWN": "1"}
    windows = child_environment({"SYSTEMROOT": "C:\\Windows", "APPDATA": "a"}, {}, windows=True)
    assert windows == {"SYSTEMROOT": "C:\\Windows", "APPDATA": "a"}


def test_windows_children_keep_their_system_variables_whatever_their_spelling() -> None:
    parent = {"SystemRoot": "C:\\Windows", "Path": "C:\\bin", "ComSpec": "cmd.exe", "appdata": "a",
              "OPENAI_API_KEY": "k", "TEMP": "t", "xdg_config_home": "x"}
    env = child_environment(parent, {"PATH": "C:\\mine"}, windows=True)
    assert env == {"SystemRoot": "C:\\Windows", "ComSpec": "cmd.exe", "appdata": "a", "TEMP": "t",
                   "xdg_config_home": "x", "PATH": "C:\\mine"}
    assert child_environment(parent, {}) == {}  # on POSIX, names are exact


@pytest.mark.anyio
async def test_a_session_on_a_windows_host_derives_the_allowlist_from_the_host(tmp_path: object) -> None:
    from pathlib import Path

    from hermes.home import Home
    from hermes.session.core import Session
    from tests.hosts import FixtureHost

    home = Home(Path(str(tmp_path)) / "home")
    session = Session(home, host=FixtureHost("win32", Path(str(tmp_path)) / "c"), environ={"SystemRoot": "C:\\W"})
    assert session._opener.windows
    assert child_environment({"SystemRoot": "C:\\W"}, {}, windows=session._opener.windows) == {"SystemRoot": "C:\\W"}


@pytest.mark.parametrize(("url", "shown"), [
    ("https://h.example/mcp?token=abc&x=1", "https://h.example/mcp?token=[REDACTED]&x=1"),
    ("https://h.example/mcp?api_key=abc&sig=zz", "https://h.example/mcp?api_key=[REDACTED]&sig=[REDACTED]"),
    ("https://me:pw@h.example/mcp", "https://[REDACTED]@h.example/mcp"),
    ("https://h.example/mcp?key=${MY_KEY}", "https://h.example/mcp?key=${MY_KEY}"),
    ("https://h.example/mcp?page=2", "https://h.example/mcp?page=2"),
])
def test_listings_mask_credentials_in_urls(url: str, shown: str) -> None:
    assert mask_url(url) == shown
