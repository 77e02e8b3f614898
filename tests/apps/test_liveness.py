"""Runtime-file liveness against hostile files: nothing may leave loopback, no token may leak."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import LocalHost
from hermes.apps.liveness import Finding, LiveEndpointUnavailable, resolve_live_endpoint
from tests.support import CANARY

ALIVE = os.getpid()


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


HOSTILE: list[tuple[str, Any, str]] = [
    ("not json", "{not json", "not valid JSON"),
    ("json array", [1, 2], "does not hold a JSON object"),
    ("json string", "just text", "does not hold a JSON object"),
    ("pid missing", {"http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("pid bool", {"pid": True, "http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("pid zero", {"pid": 0, "http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("pid negative", {"pid": -5, "http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("pid huge", {"pid": 2**31, "http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("pid float", {"pid": 1.0, "http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("pid text", {"pid": str(ALIVE), "http": "http://127.0.0.1:8080"}, "'pid' must be a whole number"),
    ("no url", {"pid": ALIVE}, "'http' must be a URL"),
    ("url number", {"pid": ALIVE, "http": 8080}, "'http' must be a URL"),
    ("https", {"pid": ALIVE, "http": "https://127.0.0.1:8443"}, "must use plain http"),
    ("ftp", {"pid": ALIVE, "http": "ftp://127.0.0.1:21"}, "must use plain http"),
    ("userinfo", {"pid": ALIVE, "http": "http://user:pw@127.0.0.1:8080"}, "must not carry user information"),
    ("userinfo at loopback", {"pid": ALIVE, "http": "http://127.0.0.1:80@169.254.169.254:80"},
     "must not carry user information"),
    ("metadata host", {"pid": ALIVE, "http": "http://169.254.169.254:80"}, "must point at 127.0.0.1"),
    ("private host", {"pid": ALIVE, "http": "http://10.0.0.1:8080"}, "must point at 127.0.0.1"),
    ("lookalike host", {"pid": ALIVE, "http": "http://localhost.evil.example:8080"}, "must point at 127.0.0.1"),
    ("other loopback", {"pid": ALIVE, "http": "http://127.0.0.2:8080"}, "must point at 127.0.0.1"),
    ("mapped v6", {"pid": ALIVE, "http": "http://[::ffff:127.0.0.1]:8080"}, "must point at 127.0.0.1"),
    ("all zeros", {"pid": ALIVE, "http": "http://0.0.0.0:8080"}, "must point at 127.0.0.1"),
    ("no port", {"pid": ALIVE, "http": "http://127.0.0.1"}, "must name a port"),
    ("port zero", {"pid": ALIVE, "http": "http://127.0.0.1:0"}, "must name a port"),
    ("port too big", {"pid": ALIVE, "http": "http://127.0.0.1:70000"}, "is not a valid URL"),
    ("port text", {"pid": ALIVE, "http": "http://127.0.0.1:abc"}, "is not a valid URL"),
    ("token number", {"pid": ALIVE, "http": "http://127.0.0.1:8080", "token": 12345}, "'token' must be a non-empty"),
    ("token with a newline", {"pid": ALIVE, "http": "http://127.0.0.1:8080", "token": f"{CANARY}\nX-Evil: 1"},
     "'token' must be printable ASCII"),
    ("token with NUL", {"pid": ALIVE, "http": "http://127.0.0.1:8080", "token": f"{CANARY}\x00"},
     "'token' must be printable ASCII"),
    ("5000-digit pid", '{"pid": ' + "9" * 5000 + ', "http": "http://127.0.0.1:8080"}', "not valid JSON"),
    ("30000-deep value", '{"pid": 1, "x": ' + "[" * 30000 + "]" * 30000 + "}", "not valid JSON"),
]


@pytest.mark.parametrize(("label", "content", "reason"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_runtime_files_are_refused(tmp_path: Path, label: str, content: Any, reason: str) -> None:
    path = tmp_path / "server.json"
    if isinstance(content, dict):
        content = {**content, "token": content.get("token", f"tok-{CANARY}")}
    path.write_text(content if isinstance(content, str) and label != "json string" else json.dumps(content))
    with pytest.raises(LiveEndpointUnavailable) as info:
        resolve_live_endpoint("app", LivenessSpec("server_json", path=str(path)), LocalHost())
    assert info.value.facts.finding is Finding.FILE_INVALID
    assert reason in str(info.value)
    assert CANARY not in str(info.value) and CANARY not in repr(info.value)


def test_a_fifo_in_place_of_the_runtime_file_is_refused_at_once(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes; the reader must not wait for one."""
    os.mkfifo(tmp_path / "server.json")
    with pytest.raises(LiveEndpointUnavailable, match="not a regular file") as info:
        resolve_live_endpoint("app", LivenessSpec("server_json", path=str(tmp_path / "server.json")), LocalHost())
    assert info.value.facts.finding is Finding.FILE_INVALID


def test_missing_huge_symlinked_and_folder_files(tmp_path: Path) -> None:
    host = LocalHost()
    spec = LivenessSpec("server_json", path=str(tmp_path / "server.json"))
    with pytest.raises(LiveEndpointUnavailable, match="does not exist"):
        resolve_live_endpoint("app", spec, host)
    (tmp_path / "server.json").write_text(json.dumps({"pid": ALIVE, "http": "http://127.0.0.1:1", "pad": "x" * 70000}))
    with pytest.raises(LiveEndpointUnavailable, match="larger than 65536 bytes"):
        resolve_live_endpoint("app", spec, host)
    (tmp_path / "server.json").unlink()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"pid": ALIVE, "http": "http://127.0.0.1:8080", "token": CANARY}))
    (tmp_path / "server.json").symlink_to(elsewhere)
    with pytest.raises(LiveEndpointUnavailable, match="symbolic link") as info:
        resolve_live_endpoint("app", spec, host)
    assert CANARY not in str(info.value)
    (tmp_path / "server.json").unlink()
    (tmp_path / "server.json").mkdir()
    with pytest.raises(LiveEndpointUnavailable, match="not a regular file"):
        resolve_live_endpoint("app", spec, host)


def test_dead_pid_means_app_not_running(tmp_path: Path) -> None:
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"pid": _dead_pid(), "http": "http://127.0.0.1:8080", "token": CANARY}))
    with pytest.raises(LiveEndpointUnavailable) as info:
        resolve_live_endpoint("app", LivenessSpec("server_json", path=str(path)), LocalHost())
    assert info.value.facts.finding is Finding.PID_DEAD and CANARY not in str(info.value)


def test_missing_file_with_app_not_running_and_running(tmp_path: Path) -> None:
    spec = LivenessSpec("server_json", path=str(tmp_path / "server.json"))
    with pytest.raises(LiveEndpointUnavailable) as info:
        resolve_live_endpoint("app", spec, LocalHost(), app_path=str(tmp_path / "not-running-app"))
    assert info.value.facts.finding is Finding.FILE_MISSING and info.value.facts.app_running is False
    with pytest.raises(LiveEndpointUnavailable) as info:
        resolve_live_endpoint("app", spec, LocalHost(), app_path=sys.executable)
    assert info.value.facts.finding is Finding.FILE_MISSING and info.value.facts.app_running is True


def test_authority_rewriting_endpoint_path_is_refused_even_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"pid": ALIVE, "http": "http://127.0.0.1:8080"}))
    for bad in ("@169.254.169.254/x", "//169.254.169.254/x", "/../x", "/a?b=@c", "/#@evil"):
        with pytest.raises(LiveEndpointUnavailable):
            resolve_live_endpoint("app", LivenessSpec("server_json", path=str(path), endpoint_path=bad), LocalHost())


@pytest.mark.parametrize(("url", "endpoint"), [
    ("http://127.0.0.1:8080/ignored/path?q=1", "http://127.0.0.1:8080/mcp"),
    ("http://localhost:9", "http://localhost:9/mcp"),
    ("http://LOCALHOST:9", "http://localhost:9/mcp"),
    ("http://[::1]:8765", "http://[::1]:8765/mcp"),
])
def test_good_files_compose_the_endpoint(tmp_path: Path, url: str, endpoint: str) -> None:
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"pid": ALIVE, "http": url, "token": CANARY}))
    live = resolve_live_endpoint("app", LivenessSpec("server_json", path=str(path)), LocalHost())
    assert live.url == endpoint and live.token == CANARY and live.pid == ALIVE
    assert CANARY not in repr(live)


def test_custom_field_names(tmp_path: Path) -> None:
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"process": ALIVE, "address": "http://127.0.0.1:7000", "secret": "s3cret-value"}))
    spec = LivenessSpec("server_json", path=str(path), endpoint_path="/rpc/mcp", pid_key="process",
                        url_key="address", token_key="secret")
    live = resolve_live_endpoint("app", spec, LocalHost())
    assert live.url == "http://127.0.0.1:7000/rpc/mcp" and live.token == "s3cret-value"
