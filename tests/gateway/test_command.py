"""`hermes gateway …` as a user meets it: the settings checked with the key named, the service started,
found and stopped as a real background process, pairing from the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes.errors import HermesError
from hermes.gateway.access import Access
from hermes.gateway.service import log_path, running
from hermes.home import Home
from tests.agent.conftest import model_config, scripted_model  # noqa: F401  (the agent tests' fixture)
from tests.gateway.bot_api import bot_api
from tests.support import fast_entry, hermes, hermes_process, needs_sandbox, write_config

TOKEN = "123456:canary-service-token-77ab"


@pytest.mark.parametrize(("gateway", "key", "rule"), [
    ({"matrix": {"user_id": "@h:x", "access_token": "t"}}, "gateway.matrix.homeserver", "is required"),
    ({"matrix": {"homeserver": "http://127.0.0.1:1", "user_id": "@h:x", "access_token": "t", "password": "p"}},
     "gateway.matrix", "exactly one of access_token or password"),
    ({"telegram": {"token": "t", "allowed_users": "42"}}, "gateway.telegram.allowed_users", "list"),
    ({"telegram": {"token": "t", "api_url": "file:///etc"}}, "gateway.telegram.api_url", "http"),
    ({"slack": {"token": "t"}}, "gateway", "slack"),
    ({"email": {"address": "h@x.org", "password": "p", "imap_host": "imap.x.org", "smtp_host": "127.0.0.1",
                "security": "none"}}, "gateway.email.security", "only for a server on this machine"),
    ({"email": {"address": "h@x.org", "password": "p", "imap_host": "i", "smtp_host": "s", "smtp_port": 0}},
     "gateway.email.smtp_port", "port"),
])
def test_broken_gateway_settings_name_the_key_and_change_nothing(home: Home, gateway: dict[str, Any], key: str,
                                                                 rule: str) -> None:
    write_config(home, {"gateway": gateway})
    before = home.config.read_bytes()
    ran = hermes("gateway", "status", home=home)
    assert ran.returncode != 0 and str(home.config) in ran.stderr and key in ran.stderr and rule in ran.stderr
    assert "Traceback" not in ran.stderr and home.config.read_bytes() == before


def test_without_a_model_or_a_platform_the_gateway_says_what_to_add(home: Home) -> None:
    ran = hermes("gateway", "run", home=home)
    assert ran.returncode == 2 and "No model is configured" in ran.stderr
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m"}})
    ran = hermes("gateway", "run", home=home)
    assert ran.returncode != 0 and "No messaging platform is configured" in ran.stderr and "gateway:" in ran.stderr


def test_an_unset_token_variable_is_named_with_its_key(home: Home) -> None:
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m"},
                        "gateway": {"telegram": {"token": "${NO_SUCH_TOKEN_VAR}"}}})
    for command in ("run", "status"):
        ran = hermes("gateway", command, home=home)
        assert ran.returncode != 0 and "NO_SUCH_TOKEN_VAR" in ran.stderr and "gateway.telegram.token" in ran.stderr


def test_a_toolset_that_names_nothing_stops_the_start_before_any_room_meets_it(home: Home) -> None:
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m"},
                        "gateway": {"telegram": {"token": "t", "api_url": "http://127.0.0.1:9"}},
                        "platform_toolsets": {"telegram": ["mcp-fst"]}, "mcp_servers": {"fast": fast_entry()}})
    for command in ("run", "status"):
        ran = hermes("gateway", command, home=home)
        assert ran.returncode != 0 and "platform_toolsets.telegram" in ran.stderr
        assert "unknown toolset 'mcp-fst' (did you mean 'mcp-fast'?)" in ran.stderr


def test_pairing_from_the_command_line(home: Home) -> None:
    code = Access(home, {}).code_for("telegram", "77")
    assert not Access(home, {}).allowed("telegram", "77")
    assert hermes("gateway", "pair", "NOPE-NOPE", home=home).returncode != 0
    waiting = hermes("gateway", "users", home=home)
    assert f"telegram: 77 is waiting with code {code}" in waiting.stdout
    assert json.loads(hermes("gateway", "users", "--json", home=home).stdout)["waiting"][0]["code"] == code
    paired = hermes("gateway", "pair", code.replace("-", "").lower(), home=home)  # as someone may type it
    assert paired.returncode == 0 and "77 on telegram" in paired.stdout
    assert Access(home, {}).allowed("telegram", "77")
    assert "telegram: 77 (paired)" in hermes("gateway", "users", home=home).stdout
    assert hermes("gateway", "unpair", "telegram", "77", home=home).returncode == 0
    assert not Access(home, {}).allowed("telegram", "77")
    assert hermes("gateway", "unpair", "telegram", "77", home=home).returncode != 0
    typo = hermes("gateway", "unpair", "telegrm", "77", home=home)
    assert typo.returncode != 0 and "(did you mean 'telegram'?)" in typo.stderr
    write_config(home, {"gateway": {"telegram": {"token": "t", "allowed_users": ["42"]}}})
    listed = hermes("gateway", "unpair", "telegram", "42", home=home)
    assert listed.returncode != 0 and "gateway.telegram.allowed_users" in listed.stderr


def test_a_damaged_access_record_lets_in_only_configs_users(home: Home) -> None:
    (home.gateway).mkdir(parents=True)
    (home.gateway / "access.json").write_text('{"approved": {"telegram": "77"}, "pending": [1, 2]}')
    access = Access(home, {"telegram": ("42",)})
    assert access.allowed("telegram", "42") and not access.allowed("telegram", "77")
    assert access.code_for("telegram", "77")  # and it is written anew, whole


@pytest.mark.anyio
@needs_sandbox
async def test_the_background_service_starts_reports_and_stops(home: Home, tmp_path: Path,
                                                               scripted_model: Any) -> None:  # noqa: F811
    model = scripted_model([{"content": "from the service"}])
    async with bot_api(TOKEN) as api:
        write_config(home, {"model": model_config(model), "mcp_servers": {"fast": fast_entry()},
                            "gateway": {"telegram": {"token": "${TELEGRAM_BOT_TOKEN}", "api_url": api.url,
                                                     "allowed_users": ["42"]}}})
        home.dotenv.write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")
        os.chmod(home.dotenv, 0o600)
        started = await anyio.to_thread.run_sync(lambda: hermes_process("gateway", "start", home=home))
        try:
            assert started.returncode == 0, started.stderr
            assert "serving on telegram" in started.stdout
            found = running(home)
            assert found is not None and found.platforms == ("telegram",)
            again = await anyio.to_thread.run_sync(lambda: hermes_process("gateway", "start", home=home))
            assert again.returncode != 0 and "already running" in again.stderr
            beside = await anyio.to_thread.run_sync(lambda: hermes_process("gateway", "run", home=home))
            assert beside.returncode != 0 and f"already running for this HERMES_HOME (pid {found.pid})" in beside.stderr
            status = await anyio.to_thread.run_sync(lambda: hermes_process("gateway", "status", home=home))
            assert status.returncode == 0 and f"pid {found.pid}" in status.stdout
            api.message(42, 42, "hello")
            assert (await api.reply(42, containing="from the service"))["text"] == "from the service"
        finally:
            stopped = await anyio.to_thread.run_sync(lambda: hermes_process("gateway", "stop", home=home))
        assert stopped.returncode == 0 and "stopped" in stopped.stdout
        assert running(home) is None
        status = await anyio.to_thread.run_sync(lambda: hermes_process("gateway", "status", home=home))
        assert status.returncode == 1 and "not running" in status.stdout
    assert TOKEN not in log_path(home).read_text()


def test_without_the_sandbox_the_rooms_file_and_terminal_tools_keep_the_gateway_from_starting(home: Home) -> None:
    gateway = {"telegram": {"token": "t", "api_url": "http://127.0.0.1:9"}}
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m"}, "mcp": {"sandbox": "off"},
                        "gateway": gateway})
    ran = hermes("gateway", "run", home=home)
    assert ran.returncode != 0 and "gives telegram the file and terminal tools" in ran.stderr
    assert "mcp.sandbox is off" in ran.stderr and "`telegram: [mcp-github]`" in ran.stderr


def test_a_symlinked_or_damaged_record_is_never_written_over(home: Home, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file")
    home.gateway.mkdir(parents=True)
    (home.gateway / "access.json").symlink_to(victim)
    with pytest.raises(HermesError, match="symbolic link"):
        Access(home, {}).code_for("telegram", "77")
    ran = hermes("gateway", "unpair", "telegram", "77", home=home)
    assert ran.returncode != 0 and "symbolic link" in ran.stderr and "Traceback" not in ran.stderr
    assert victim.read_text() == "the user's own file"
    (home.gateway / "access.json").unlink()
    damaged = '{"approved": {"telegram": ["1", "2"]},}'
    (home.gateway / "access.json").write_text(damaged)
    for command in (("gateway", "pair", "ABCD-EFGH"), ("gateway", "users")):
        ran = hermes(*command, home=home)
        assert ran.returncode != 0 and "cannot be read" in ran.stderr and "access.json" in ran.stderr
    assert not Access(home, {"telegram": ("42",)}).allowed("telegram", "1")  # only config's users, meanwhile
    assert (home.gateway / "access.json").read_text() == damaged


def test_a_fifo_in_the_logs_place_stops_start_with_a_sentence(home: Home) -> None:
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "m"}})
    home.logs.mkdir(parents=True)
    os.mkfifo(log_path(home))
    ran = hermes("gateway", "start", home=home)
    assert ran.returncode != 0 and "not a regular file" in ran.stderr and str(log_path(home)) in ran.stderr


def test_the_systemd_user_unit_is_one_systemd_reads_and_only_ours_is_replaced(home: Home, tmp_path: Path) -> None:
    config = tmp_path / "config home"
    env = {"XDG_CONFIG_HOME": str(config), "PATH": "/opt/node 22/bin:/usr/bin"}
    installed = hermes("gateway", "install-service", home=home, env=env)
    unit = config / "systemd" / "user" / "hermes-gateway.service"
    assert installed.returncode == 0 and str(unit) in installed.stdout and "enable --now" in installed.stdout
    text = unit.read_text()
    assert f'Environment="HERMES_HOME={home.root}" "PATH=/opt/node 22/bin:/usr/bin"' in text
    assert "-m hermes gateway run" in text and "Restart=on-failure" in text
    analyze = shutil.which("systemd-analyze")
    if analyze is not None:  # systemd's own parser, where the machine has it
        runtime = tmp_path / "runtime"
        runtime.mkdir(mode=0o700)
        checked = subprocess.run([analyze, "verify", "--user", str(unit)], capture_output=True, text=True,
                                 env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)}, timeout=60)
        assert checked.returncode == 0 and "hermes-gateway" not in checked.stderr, checked.stderr
    assert hermes("gateway", "install-service", home=home, env=env).returncode == 0  # ours: written again
    assert hermes("gateway", "uninstall-service", home=home, env=env).returncode == 0 and not unit.exists()
    unit.write_text("[Service]\nExecStart=/usr/bin/true\n")  # someone else's
    refused = hermes("gateway", "install-service", home=home, env=env)
    assert refused.returncode != 0 and "not written by hermes" in refused.stderr
    assert hermes("gateway", "uninstall-service", home=home, env=env).returncode != 0
    assert unit.read_text() == "[Service]\nExecStart=/usr/bin/true\n"
