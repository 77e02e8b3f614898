"""config.yaml: strict parsing with file/line/key errors, round-trip edits, locking, .env, ${VAR}."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hermes.config.dotenv import read_dotenv, set_dotenv
from hermes.config.interpolate import interpolate
from hermes.config.model import ServerConfig
from hermes.config.resolve import resolve_server
from hermes.config.store import ConfigStore
from hermes.errors import ConfigError, InterpolationError
from hermes.home import Home
from tests.support import hermes


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("mcp_servers:\n  a:\n    command: x\n    enabled: 'yes'\n", 4, "mcp_servers.a.enabled"),
    ("mcp_servers:\n  a:\n    command: x\n    url: http://h\n", 2, "both 'command' and 'url'"),
    ("mcp_servers:\n  a:\n    comand: x\n", 3, "mcp_servers.a.comand: is not a known key"),
    ("mcp_servers:\n  a:\n    command: x\n    timeout: -1\n", 4, "mcp_servers.a.timeout"),
    ("mcp_servers:\n  a: [1, 2]\n", 2, "mcp_servers.a"),
    ("mcp_servers:\n  a:\n    url: http://h\n    tools:\n      include: fetch\n", 5, "mcp_servers.a.tools.include"),
    ("mcp_servers:\n  a:\n    command: x\n   bad indent: [\n", None, "not valid YAML"),
    ("- just\n- a list\n", 1, "mapping at the top level"),
    ("mcp:\n  client: nope\n", 2, "mcp.client"),
    ("platform_toolsets:\n  cli: mcp-a\n", 2, "platform_toolsets.cli"),
    ("mcp_servers:\n  ../../escape:\n    command: x\n", 2, "mcp_servers.../../escape: is not a valid server name"),
    ("mcp_servers:\n  '..':\n    command: x\n", 2, "is not a valid server name"),
    ('mcp_servers:\n  "nl\\n":\n    command: x\n', 2, "is not a valid server name"),  # `$` passed a final newline
    ("mcp:\n  clinet: false\n", 2, "mcp.clinet: is not a known key (did you mean 'client'?)"),
    ("plugins:\n  enable: [a]\n", 2, "plugins.enable: is not a known key (did you mean 'enabled'?)"),
    ("mcp_servers:\n  a:\n    command: x\n    connect_timeout: .nan\n", 4, "must be a positive number"),
    ("mcp_servers:\n  a:\n    command: x\n    timeout: .inf\n", 4, "must be a positive number"),
    ("mcp_servers:\n  a:\n    url: https://[oops\n", 3, "mcp_servers.a.url: is not a valid URL"),
    ("mcp_servers:\n  a:\n    url: ftp://h/x\n", 3, "must be an http:// or https:// URL"),
    ("? [a, b]\n: c\n", 1, "a mapping key that is not plain text"),
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", None, "nests deeper than 64 levels"),
    ("a:\n" + "".join("  " * i + "k:\n" for i in range(1, 1200)), None, "not valid YAML"),
])
def test_bad_config_names_file_line_and_key(home: Home, text: str, line: int | None, fragment: str) -> None:
    home.config.write_text(text)
    with pytest.raises(ConfigError) as info:
        ConfigStore(home).load()
    message = str(info.value)
    assert str(home.config) in message
    assert fragment in message
    if line is not None:
        assert f"line {line}" in message


def test_unreadable_config_and_dotenv_are_one_sentence_each(home: Home) -> None:
    home.config.write_bytes(b"mcp_servers: {}\n\xff\xfe\n")
    result = hermes("mcp", "list", home=home)
    assert result.returncode == 2 and "not UTF-8 text" in result.stderr and str(home.config) in result.stderr
    home.config.write_text("mcp_servers:\n  a:\n    command: x\n    env: {K: '${K}'}\n")
    home.dotenv.mkdir()
    result = hermes("tools", "list", home=home)
    assert result.returncode == 2 and "not a regular file (a folder)" in result.stderr and ".env" in result.stderr
    home.dotenv.rmdir()
    home.dotenv.write_bytes(b"K=caf\xe9\n")
    result = hermes("tools", "list", home=home)
    assert result.returncode == 2 and "not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_read_only_config_is_not_replaced(home: Home) -> None:
    home.config.write_text("mcp_servers: {}\n")
    home.config.chmod(0o444)
    result = hermes("mcp", "add", "b", "--command", "y", home=home)
    assert result.returncode == 2 and "is read-only" in result.stderr
    assert home.config.read_text() == "mcp_servers: {}\n"


def test_a_symlinked_config_is_edited_through_the_link(home: Home, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "hermes.yaml"
    real.parent.mkdir()
    real.write_text("# mine\nmcp_servers: {}\n")
    home.config.symlink_to(real)
    assert hermes("mcp", "add", "b", "--command", "y", home=home).returncode == 0
    assert home.config.is_symlink() and "b:" in real.read_text() and real.read_text().startswith("# mine")


def test_bad_config_exits_2_and_writes_nothing(home: Home) -> None:
    text = "# my servers\nmcp_servers:\n  a:\n    command: x\n    enabled: 'yes'\n"
    home.config.write_text(text)
    result = hermes("mcp", "add", "b", "--command", "y", home=home)
    assert result.returncode == 2
    assert "line 5" in result.stderr and "mcp_servers.a.enabled" in result.stderr
    assert home.config.read_text() == text
    listing = hermes("mcp", "list", home=home)
    assert listing.returncode == 2


def test_args_string_is_shell_split() -> None:
    config = ServerConfig.from_data({"command": "npx", "args": "-y '@scope/pkg name'"})
    assert config.args == ("-y", "@scope/pkg name")


def test_round_trip_edit_keeps_comments_and_order(home: Home) -> None:
    original = (
        "# top comment\n"
        "model: some-model   # unrelated setting, kept\n"
        "mcp_servers:\n"
        "  zeta:\n"
        "    command: z   # inline comment\n"
        "  alpha:\n"
        "    url: https://example.invalid/mcp\n"
    )
    home.config.write_text(original)
    result = hermes("mcp", "add", "beta", "--", "b", "x", "y", home=home)
    assert result.returncode == 0, result.stderr
    text = home.config.read_text()
    assert text.startswith(original)
    assert "# inline comment" in text and "# unrelated setting, kept" in text
    assert text.index("zeta") < text.index("alpha") < text.index("beta")
    assert ConfigStore(home).load().mcp_servers["beta"].args == ("x", "y")
    removed = hermes("mcp", "remove", "zeta", home=home)
    assert removed.returncode == 0
    assert "# top comment" in home.config.read_text() and "zeta" not in home.config.read_text()


def test_twenty_concurrent_adds_lose_nothing(home: Home) -> None:
    home.config.write_text("# keep me\nmcp_servers: {}\n")
    env = {**os.environ, "HERMES_HOME": str(home.root)}
    processes = [subprocess.Popen([sys.executable, "-m", "hermes", "mcp", "add", f"s{i:02d}", "--command", "cmd",
                                   "--args", f"--n,{i}"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for i in range(20)]
    codes = [p.wait(timeout=120) for p in processes]
    assert codes == [0] * 20
    config = ConfigStore(home).load()
    assert sorted(config.mcp_servers) == [f"s{i:02d}" for i in range(20)]
    assert home.config.read_text().startswith("# keep me\n")
    assert not list(home.root.glob(".config.yaml.*.tmp"))


def test_dotenv_is_0600_and_keeps_other_lines(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# secrets\nA=1\nexport B='two'\n")
    set_dotenv(path, {"A": "one", "C": "three"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_dotenv(path) == {"A": "one", "B": "two", "C": "three"}
    assert path.read_text().startswith("# secrets\n")


def test_dotenv_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("A=1\nnot a pair\n")
    with pytest.raises(ConfigError, match="line 2"):
        read_dotenv(path)


def test_interpolation_both_forms_and_unset_names_server() -> None:
    assert interpolate("Bearer ${TOKEN} ${env:HOST}", {"TOKEN": "t", "HOST": "h"}, server="s") == "Bearer t h"
    with pytest.raises(InterpolationError) as info:
        interpolate("${MISSING_ONE}", {}, server="github")
    assert "MISSING_ONE" in str(info.value) and "'github'" in str(info.value)


def test_resolve_uses_dotenv_and_lists_secrets(home: Home) -> None:
    set_dotenv(home.dotenv, {"GH_TOKEN": "ghp_from_dotenv_value"})
    home.config.write_text("mcp_servers:\n  gh:\n    url: https://x.invalid/mcp\n"
                           "    headers:\n      Authorization: Bearer ${GH_TOKEN}\n")
    store = ConfigStore(home)
    server = resolve_server("gh", store.load().mcp_servers["gh"], store.variables())
    assert server.headers["Authorization"] == "Bearer ghp_from_dotenv_value"
    assert "Bearer ghp_from_dotenv_value" in server.secrets


def test_a_config_symlinked_to_a_device_is_refused_and_nothing_is_created_beside_the_device(
        home: Home, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "null"
    target.parent.mkdir()
    os.mkfifo(target)
    home.config.symlink_to(target)
    ran = hermes("mcp", "add", "x", "--", "srv", home=home)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert sorted(p.name for p in target.parent.iterdir()) == ["null"]
    locks = list(home.root.glob("*.lock"))
    assert all(stat.S_IMODE(lock.stat().st_mode) == 0o600 for lock in locks)


def test_bad_plugin_names_and_dotenv_values_are_refused_with_the_rule(home: Home) -> None:
    home.config.write_text("plugins:\n  enabled: [good, \"bad\\x1b[31m\"]\n")
    ran = hermes("mcp", "list", home=home)
    assert ran.returncode == 2 and "plugins.enabled[1]" in ran.stderr and "is not a plugin name" in ran.stderr
    assert "\x1b" not in ran.stderr
    home.config.write_text("mcp_servers: {}\n")
    home.dotenv.write_text("\ufeffGOOD=1\nBAD=a\x00b\n")
    home.dotenv.chmod(0o600)
    bad = hermes("mcp", "list", home=home)
    assert bad.returncode == 0  # mcp list does not read .env
    tools = hermes("tools", "list", home=home)
    assert tools.returncode == 2 and ".env, line 2" in tools.stderr and "NUL character" in tools.stderr
