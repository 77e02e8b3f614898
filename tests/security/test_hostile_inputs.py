"""Hostile inputs found by a second attack: each one reproduces the attack, then checks the answer.

YAML alias bombs and type tags in config.yaml; a skill's frontmatter bomb, a FIFO for a SKILL.md
or for a cache file; a session port that answers garbage, endless bodies, or belongs to a
suspended process; a server whose answers cannot be read. Every one ends in a sentence (or a
clean result), never a hang, a traceback or unbounded memory.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from hermes.apps.runtimefile import write_runtime_file
from hermes.home import Home
from tests.support import PATIENCE, PYTHON, fast_entry, hermes, write_config


def _alias_bomb() -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_or_a_python_tag_in_config_is_refused_not_expanded(home: Home) -> None:
    home.config.write_text(_alias_bomb())
    bomb = hermes("mcp", "list", home=home)
    assert bomb.returncode == 2 and "expands to more than 200000 values" in bomb.stderr
    home.config.write_text("mcp_servers:\n  x: !!python/object/apply:os.system [echo]\n")
    tagged = hermes("mcp", "add", "y", "--", "z", home=home)
    assert tagged.returncode == 2 and "uses the YAML tag" in tagged.stderr and "Traceback" not in tagged.stderr


def _plugin_with_skill(home: Home, frontmatter: str | None) -> Path:
    root = home.plugins / "skilled"
    (root / "skills" / "bomb").mkdir(parents=True)
    (root / "plugin.json").write_text(json.dumps({"name": "skilled", "version": "1.0.0"}))
    (root / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    skill = root / "skills" / "bomb" / "SKILL.md"
    if frontmatter is None:
        os.mkfifo(skill)
    else:
        skill.write_text(f"---\n{frontmatter}---\nbody\n")
    write_config(home, {"plugins": {"enabled": ["skilled"]}})
    return skill


@pytest.mark.parametrize(("frontmatter", "reason"), [
    (_alias_bomb() + "name: *i\n", "its frontmatter expands to more than"),
    (None, "its SKILL.md cannot be read"),
])
def test_a_skill_that_is_a_bomb_or_a_fifo_is_left_out_with_the_reason(home: Home, frontmatter: str | None,
                                                                      reason: str) -> None:
    _plugin_with_skill(home, frontmatter)
    listed = hermes("skills", "list", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    [skill] = json.loads(listed.stdout)["skills"]
    assert not skill["loaded"] and reason in skill["why_not"]


def test_a_cache_file_that_is_a_fifo_does_not_hang_a_listing(home: Home) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    home.cache.mkdir(parents=True)
    os.mkfifo(home.known_tools)
    listed = hermes("tools", "list", "--json", home=home)
    assert listed.returncode == 0 and any(t["server"] == "box" for t in json.loads(listed.stdout)["tools"])


@pytest.fixture
def fake_session(home: Home) -> Iterator[tuple[Home, list[bytes]]]:
    """A session file naming this very process (so it looks alive) and a port that answers `answers`."""
    answers: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                body = answers[0] if answers else b"{}"
                head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                try:
                    if body == b"endless":
                        connection.sendall(head + b"transfer-encoding: chunked\r\n\r\n")
                        while True:
                            connection.sendall(b"10000\r\n" + b"[" * 0x10000 + b"\r\n")
                    connection.sendall(head + f"content-length: {len(body)}\r\n\r\n".encode() + body)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    started = psutil.Process(os.getpid()).create_time()
    write_runtime_file(home.run / f"session-{os.getpid()}.json", pid=os.getpid(),
                       url=f"http://127.0.0.1:{server.getsockname()[1]}", token="t" * 32, kind="session",
                       started=started)
    yield home, answers
    server.close()


@pytest.mark.parametrize("answer", [b'{"report": 5}', b"[" * 50_000 + b"]" * 50_000, b"not json", b"endless"],
                         ids=["wrong shape", "deep", "not json", "endless"])
def test_a_session_port_that_answers_garbage_gets_one_sentence(fake_session: tuple[Home, list[bytes]],
                                                               answer: bytes) -> None:
    home, answers = fake_session
    answers.append(answer)
    reload = hermes("mcp", "reload", home=home)
    assert reload.returncode == 1 and "reload failed" in reload.stderr and "Traceback" not in reload.stderr
    status = hermes("mcp", "status", "--json", home=home)
    assert status.returncode == 0 and "Traceback" not in status.stderr


def test_a_suspended_session_is_named_not_waited_for(home: Home, tmp_path: Path) -> None:
    write_config(home, {"mcp_servers": {"box": fast_entry()}})
    serve = subprocess.Popen([PYTHON, "-m", "hermes", "mcp", "serve"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "HERMES_HOME": str(home.root)})
    try:
        from tests.support import wait_for

        assert wait_for(lambda: any(home.run.glob("session-*.json")) if home.run.exists() else False)
        serve.send_signal(signal.SIGSTOP)
        reload = hermes("mcp", "reload", home=home)
        assert reload.returncode == 1 and "is suspended" in reload.stderr and f"kill -CONT {serve.pid}" in reload.stderr
    finally:
        serve.send_signal(signal.SIGCONT)
        serve.terminate()
        serve.wait(timeout=PATIENCE)
