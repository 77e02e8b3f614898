"""Parsed config documents kept across commands (`config.documents`): the same text is not parsed
again, a changed text always is, and a damaged or tampered cache costs only the time it saves."""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import hermes.config.store as store_module
from hermes.config.documents import KEPT, plain_document
from hermes.config.model import HermesConfig
from hermes.config.store import ConfigStore
from hermes.config.yamlfile import parse_yaml_text
from hermes.errors import ConfigError
from hermes.home import Home

TEXT = """\
mcp_servers:
  files:
    command: npx
    args: ['-y', "@modelcontextprotocol/server-filesystem", '/tmp']
    timeout: 12.5
    env: {ROOT: "${HOME}/work"}
  web:
    url: https://example.com/mcp
    enabled: false
"""


def _home(tmp_path: Path, text: str = TEXT) -> Home:
    home = Home(tmp_path / "home")
    home.ensure()
    home.config.write_text(text, encoding="utf-8")
    return home


def _read(home: Home) -> HermesConfig:
    """As a new command reads it: nothing kept in this process."""
    store_module._PARSED.clear()
    return ConfigStore(home).load()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()


def _kept_texts(home: Home, *candidates: str) -> list[str]:
    """Which of the candidate texts (or TEXT and the test's others) the cache holds documents for, in its order."""
    if not home.config_documents.exists():
        return []
    named = {_digest(text): text for text in candidates}
    return [named.get(entry["digest"], entry["digest"]) for entry in
            json.loads(home.config_documents.read_text())["documents"]]


READ_IN_A_NEW_PROCESS = """
import dataclasses, sys
from hermes.config.store import ConfigStore
from hermes.home import Home
print(dataclasses.asdict(ConfigStore(Home.from_env()).load()))
print("ruamel.yaml" in sys.modules)
"""


def test_a_second_command_takes_the_kept_document_and_never_loads_the_yaml_parser(tmp_path: Path) -> None:
    home = _home(tmp_path)
    runs = [subprocess.run([sys.executable, "-c", READ_IN_A_NEW_PROCESS], env={"HERMES_HOME": str(home.root)},
                           capture_output=True, text=True, check=True).stdout.splitlines() for _ in range(2)]
    (first_config, first_parser), (second_config, second_parser) = runs
    assert (first_parser, second_parser) == ("True", "False")
    assert second_config == first_config  # the very same configuration, field by field
    assert "server-filesystem" in second_config and "12.5" in second_config
    assert stat.S_IMODE(home.config_documents.stat().st_mode) == 0o600


def test_a_changed_file_is_read_afresh_even_at_the_same_length(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert set(_read(home).mcp_servers) == {"files", "web"}
    changed = TEXT.replace("web:", "wow:")
    assert len(changed) == len(TEXT)
    home.config.write_text(changed, encoding="utf-8")
    assert set(_read(home).mcp_servers) == {"files", "wow"}
    assert _kept_texts(home, TEXT, changed) == [TEXT, changed]


def test_only_plain_documents_are_kept(tmp_path: Path) -> None:
    # Another tool's date, and an integer written in hexadecimal: their plain forms would read differently.
    for extra in ("other_tool:\n  since: 2024-01-01\n", "other_tool:\n  mask: 0x1F\n"):
        home = _home(tmp_path / extra[12:17], TEXT + extra)
        assert set(_read(home).mcp_servers) == {"files", "web"}
        assert _kept_texts(home) == []
        assert plain_document(parse_yaml_text(TEXT + extra, home.config)) is None
    assert plain_document(parse_yaml_text(TEXT, Path("c.yaml"))) == {
        "mcp_servers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                                  "timeout": 12.5, "env": {"ROOT": "${HOME}/work"}},
                        "web": {"url": "https://example.com/mcp", "enabled": False}}}


@pytest.mark.parametrize("damage", [
    b"not json at all",
    b"[" * 200_000,  # nested past the JSON reader's recursion limit
    b'{"format": 2, "documents": {"a": 1}}',
    b'{"format": 2, "documents": [{"digest": 3, "document": []}, {"digest": "x"}, 7, null]}',
    b'{"format": 99, "documents": []}',
    b"\xff\xfe\x00garbage",
])
def test_a_damaged_cache_is_ignored_and_written_anew(tmp_path: Path, damage: bytes) -> None:
    home = _home(tmp_path)
    expected = _read(home)
    home.config_documents.write_bytes(damage)
    assert _read(home) == expected
    assert _kept_texts(home, TEXT) == [TEXT]


def test_an_oversized_cache_is_not_read(tmp_path: Path) -> None:
    home = _home(tmp_path)
    expected = _read(home)
    with home.config_documents.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)  # sparse: large, and nothing to read in it
    assert _read(home) == expected


def test_a_kept_document_that_no_longer_validates_gives_way_to_the_text(tmp_path: Path) -> None:
    home = _home(tmp_path)
    expected = _read(home)
    tampered = {"format": 2, "documents": [{"digest": _digest(TEXT),
                                            "document": {"mcp_servers": {"files": {"comand": 1}}}}]}
    home.config_documents.write_text(json.dumps(tampered))
    assert _read(home) == expected
    # And a mistake in the file itself still names its line: it is never kept.
    broken = TEXT.replace("timeout: 12.5", "timeout: -1")
    home.config.write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        _read(home)
    assert "line 5" in str(raised.value) and "timeout" in str(raised.value)
    assert broken not in _kept_texts(home, broken)


def test_a_cache_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    home = _home(tmp_path)
    if home.cache.is_dir():
        home.cache.rmdir()
    home.cache.write_text("a file where the cache folder would be")
    assert set(_read(home).mcp_servers) == {"files", "web"}
    assert home.cache.read_text() == "a file where the cache folder would be"


def test_the_cache_keeps_the_latest_texts_only(tmp_path: Path) -> None:
    home = _home(tmp_path)
    texts = [TEXT.replace("web:", f"w{n:02d}:") for n in range(KEPT + 3)]
    for text in texts:
        home.config.write_text(text, encoding="utf-8")
        _read(home)
    assert _kept_texts(home, *texts) == texts[-KEPT:]


@pytest.mark.parametrize("secret", [
    "mcp_servers:\n  a:\n    command: x\n    env: {DB_PASSWORD: hunter2-staging}\n",
    "mcp_servers:\n  a:\n    url: https://h.example/mcp\n    headers: {Authorization: Bearer abcdefgh12345678}\n",
    "mcp_servers:\n  a:\n    command: x\n    args: [--api-key, plain-looking-value]\n",
    "mcp_servers:\n  a:\n    url: https://h.example/mcp?token=Zq8Lm2Xw9Tt4kPq\n",
    "mcp_servers:\n  a:\n    command: x\n    args: [ghp_0123456789abcdefghijABCDEFGHIJ012345]\n",
    "model:\n  base_url: http://127.0.0.1:8080/v1\n  name: m\n  api_key: sk-0123456789abcdefghij\n",
    # Found by an attack: arguments in one string, YAML escapes, a line continuation, a signed
    # URL's query, a token alone in a list, an option's value after "=".
    "mcp_servers:\n  a:\n    command: npx\n    args: '--token Tr0ub4dor3xK9'\n",
    'mcp_servers:\n  a:\n    url: "https://u:zebracanarypass\\x40h.example/mcp"\n',
    'mcp_servers:\n  a:\n    command: x\n    args: ["ghp\\x5f0123456789abcdefghijABCDEFGHIJ012345"]\n',
    'mcp_servers:\n  a:\n    command: x\n    args: ["ghp_0123456789abcdefghij\\\n      ABCDEFGHIJ012345"]\n',
    "mcp_servers:\n  a:\n    url: https://h.example/mcp?sig=zebracanarypass\n",
    "other_tool:\n  - Zq8Lm2Xw9Kp4Rt7Yv3Bn\n",
    "mcp_servers:\n  a:\n    command: x\n    args: ['--token=Tr0ub4dor3xK9']\n",
])
def test_a_file_that_writes_out_a_secret_is_never_copied(tmp_path: Path, secret: str) -> None:
    home = _home(tmp_path, secret)
    _read(home)
    assert _kept_texts(home) == []
    if any(literal in secret for literal in BY_REFERENCE):
        _by_reference(home, secret)


# The same settings by reference (`${VAR}`, kept in .env) are no secret of the file's. (Not a URL's
# `?sig=${SIG}`: a secret-sounding query name is not kept at all, whatever its value.)
BY_REFERENCE = {"hunter2-staging": '"${DB_PASSWORD}"', "Bearer abcdefgh12345678": '"Bearer ${TOKEN}"',
                "plain-looking-value": '"${KEY}"', "ghp_0123456789abcdefghijABCDEFGHIJ012345": '"${GH}"',
                "sk-0123456789abcdefghij": "${OPENAI}", "--token Tr0ub4dor3xK9": "--token ${TOKEN}"}


def _by_reference(home: Home, secret: str) -> None:
    for literal, reference in BY_REFERENCE.items():
        secret = secret.replace(literal, reference)
    home.config.write_text(secret, encoding="utf-8")
    _read(home)
    assert _kept_texts(home, secret) == [secret]


def test_the_text_itself_is_not_kept(tmp_path: Path) -> None:
    noted = "# the staging box: root / hunter2-staging (ask Ana)\n" + TEXT + "other_tool: {note: fine}\n"
    home = _home(tmp_path, noted)
    _read(home)
    kept = home.config_documents.read_text()
    assert _kept_texts(home, noted) == [noted]
    assert "hunter2" not in kept and "Ana" not in kept and "server-filesystem" in kept


def test_the_cache_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    home = _home(tmp_path)
    precious = tmp_path / "precious.txt"
    precious.write_text("precious")
    home.cache.mkdir(parents=True, exist_ok=True)
    home.config_documents.symlink_to(precious)
    assert set(_read(home).mcp_servers) == {"files", "web"}
    assert precious.read_text() == "precious" and home.config_documents.is_symlink()
