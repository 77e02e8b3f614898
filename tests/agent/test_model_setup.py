"""`hermes model`: the endpoint and model checked against a real OpenAI-compatible server, then written.

The server is the suite's scripted model (it lists models on GET /v1/models, like Ollama, vLLM
and llama.cpp); `realmodels/` does the same against llama.cpp's own server.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pexpect

from hermes.config.store import ConfigStore
from hermes.home import Home
from tests.agent.conftest import ScriptedModel
from tests.support import CANARY, PATIENCE, PYTHON, free_port, hermes, write_config

TOOL_CALL = {"tool_calls": [{"name": "get_time", "arguments": {}}]}


def _setup(home: Home, folder: Path) -> pexpect.spawn:
    """`hermes model` in a real terminal, plain text."""
    return pexpect.spawn(PYTHON, ["-m", "hermes", "model"], encoding="utf-8", timeout=PATIENCE, cwd=str(folder),
                         env={**os.environ, "HERMES_HOME": str(home.root), "TERM": "xterm", "NO_COLOR": "1"},
                         dimensions=(40, 160))


def _saved(child: pexpect.spawn, home: Home, url: str, name: str) -> None:
    """The setup checked the model with a tool, ended well, and wrote `url` and `name`."""
    child.expect("tool calls work")
    child.expect(pexpect.EOF)
    child.wait()
    child.close()
    assert child.exitstatus == 0
    settings = ConfigStore(home).load().model
    assert settings is not None and (settings.base_url, settings.name) == (url, name)


def test_the_only_model_is_checked_with_a_tool_and_written(home: Home, scripted_model: Any) -> None:
    model: ScriptedModel = scripted_model({"steps": [TOOL_CALL, {"content": "hello from chat"}], "models": ["m1"]})
    write_config(home, {"model": {"base_url": "http://127.0.0.1:9/v1", "name": "old", "max_tokens": 77},
                        "mcp_servers": {}})
    ran = hermes("model", "--base-url", model.url, home=home)
    assert ran.returncode == 0, ran.stderr
    assert "m1 answered and called the offered tool: tool calls work." in ran.stdout
    settings = ConfigStore(home).load().model
    assert settings is not None and (settings.base_url, settings.name, settings.max_tokens) == (model.url, "m1", 77)
    assert model.bodies()[0]["tools"][0]["function"]["name"] == "get_time"
    chat = hermes("chat", "-q", "hi", home=home)
    assert chat.returncode == 0 and "hello from chat" in chat.stdout, chat.stderr


def test_several_models_need_a_name_and_a_key_goes_by_reference(home: Home, scripted_model: Any) -> None:
    model: ScriptedModel = scripted_model({"steps": [{"content": "ok"}], "models": ["big", "small"]})
    home.ensure()
    home.dotenv.write_text(f"LOCAL_KEY={CANARY}\n")
    home.dotenv.chmod(0o600)
    vague = hermes("model", "--base-url", model.url, home=home)
    assert vague.returncode == 2 and "serves several models (big, small); choose one with --name" in vague.stderr
    assert not home.config.exists() or "model" not in home.config.read_text()
    chosen = hermes("model", "--base-url", model.url, "--name", "small", "--api-key-env", "LOCAL_KEY", home=home)
    assert chosen.returncode == 0, chosen.stderr
    assert "answered, without calling the offered tool" in chosen.stdout
    text = home.config.read_text()
    assert "api_key: ${LOCAL_KEY}" in text and CANARY not in text + chosen.stdout + chosen.stderr
    assert all(r["authorization"] == f"Bearer {CANARY}" for r in model.requests())


def test_a_model_name_that_is_not_text_is_never_offered_shown_or_saved(home: Home, scripted_model: Any) -> None:
    model: ScriptedModel = scripted_model({"steps": [TOOL_CALL], "models": ["m\ud800", "bad\x1b]0;x\x07", "ok"]})
    ran = hermes("model", "--base-url", model.url, "--no-try", home=home, env={"PYTHONIOENCODING": "utf-8"})
    assert ran.returncode == 0, ran.stderr
    assert ConfigStore(home).load().model.name == "ok"  # type: ignore[union-attr]
    given = hermes("model", "--base-url", model.url, "--name", "x\udc80", home=home)
    assert given.returncode == 2 and "--name is not valid text" in given.stderr and "unexpected" not in given.stderr


def test_an_endpoint_that_is_not_there_is_one_sentence_and_nothing_is_written(home: Home) -> None:
    write_config(home, {"mcp_servers": {}})
    before = home.config.read_bytes()
    ran = hermes("model", "--base-url", f"http://127.0.0.1:{free_port()}/v1", home=home)
    assert ran.returncode != 0 and "Cannot reach the model endpoint" in ran.stderr and "Traceback" not in ran.stderr
    assert home.config.read_bytes() == before


def test_in_a_terminal_it_asks_for_the_server_and_the_model(home: Home, scripted_model: Any,
                                                            tmp_path: Path) -> None:
    model: ScriptedModel = scripted_model({"steps": [TOOL_CALL], "models": ["alpha", "beta"]})
    child = _setup(home, tmp_path)
    child.expect("Which server runs the model")
    child.send("\x1b[B" * 6 + "\r")  # the last choice: another URL
    child.expect("Base URL")
    child.send(model.url + "\r")
    child.expect("Which model")
    child.send("\x1b[B\r")  # beta
    _saved(child, home, model.url, "beta")
    assert json.loads(json.dumps(model.bodies()[-1]))["model"] == "beta"


def test_an_address_without_v1_is_tried_with_it(home: Home, scripted_model: Any) -> None:
    model: ScriptedModel = scripted_model({"steps": [TOOL_CALL], "models": ["m1"]})
    bare = model.url.removesuffix("/v1")
    ran = hermes("model", "--base-url", bare, home=home)
    assert ran.returncode == 0, ran.stderr
    assert f"{bare} lists no models but {model.url} does" in ran.stdout
    settings = ConfigStore(home).load().model
    assert settings is not None and settings.base_url == model.url


def test_in_a_terminal_a_failure_offers_to_try_again_or_go_back(home: Home, scripted_model: Any,
                                                                 tmp_path: Path) -> None:
    model: ScriptedModel = scripted_model({"steps": [TOOL_CALL], "models": ["alpha"]})
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    child = _setup(home, tmp_path)
    child.expect("Which server runs the model")
    child.send("\x1b[B" * 6 + "\r")  # another URL
    child.expect("Base URL")
    child.send(nowhere + "\r")
    child.expect("Cannot reach the model endpoint")
    child.expect("What now")
    child.send("\r")  # try again: the same address, the same answer
    child.expect("Cannot reach the model endpoint")
    child.expect("What now")
    child.send("\x1b[B\r")  # go back
    child.expect("Which server runs the model")
    child.send("\x1b[B" * 6 + "\r")
    child.expect("Base URL")
    child.send(model.url + "\r")
    _saved(child, home, model.url, "alpha")


def test_ctrl_c_while_the_server_is_asked_for_its_models_saves_nothing(home: Home) -> None:
    write_config(home, {"mcp_servers": {}})
    before = home.config.read_text()
    with socket.socket() as silent:  # accepts a connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        child = pexpect.spawn(PYTHON, ["-m", "hermes", "model", "--base-url", f"http://127.0.0.1:{port}/v1",
                                       "--name", "m", "--no-try"], encoding="utf-8", timeout=PATIENCE,
                              env={**os.environ, "HERMES_HOME": str(home.root), "NO_COLOR": "1"})
        silent.settimeout(PATIENCE)
        asked, _ = silent.accept()  # the listing request is on its way
        with asked:
            child.sendintr()
            child.expect(pexpect.EOF)
            child.wait()
            child.close()
    assert child.exitstatus == 130, child.before
    assert "Saved" not in (child.before or "")
    assert home.config.read_text() == before
