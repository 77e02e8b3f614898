"""Runtime files: a live process publishes where it listens (pid, loopback URL, token), 0600.

The same pattern serves two purposes: a running hermes session publishes its control endpoint
under HERMES_HOME/run/ so `hermes mcp reload` can reach it, and a desktop app publishes its MCP
endpoint for app-bound servers. Reading is strict: a runtime file is input from another process,
so nothing in it may move a request off this machine or smuggle credentials into a URL.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hermes.errors import HermesError
from hermes.files import TooLarge, UnreadableFile, atomic_write, read_bounded

MAX_RUNTIME_FILE_BYTES = 64 * 1024
MAX_PID = 2**31 - 1
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_PLAIN_PATH = re.compile(r"^/[A-Za-z0-9._~/-]*$")
_TOKEN = re.compile(r"[\x21-\x7e]{1,4096}")


class RuntimeFileError(HermesError):
    """A runtime file is missing or unusable; `reason` says which rule it broke."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"Runtime file {path}: {reason}.")


class RuntimeFileMissing(RuntimeFileError):
    """No runtime file at all: the process that would write it has not (or has gone)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "the file does not exist")


@dataclass(frozen=True)
class RuntimeEndpoint:
    pid: int
    host: str
    port: int
    token: str | None
    started: float | None = None  # when the writer says it started (hermes's own session files)

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, endpoint_path: str = "/mcp") -> str:
        """`base_url` + a plain path, parsed again so no path can move the request elsewhere."""
        if not plain_endpoint_path(endpoint_path):
            raise ValueError(f"endpoint path {endpoint_path!r} is not a plain path")
        composed = self.base_url + endpoint_path
        parts = urlsplit(composed)
        if parts.scheme != "http" or parts.username or parts.password or parts.hostname != self.host.lower() \
                or parts.port != self.port:
            raise ValueError(f"endpoint path {endpoint_path!r} changes the URL's authority")
        return composed

    def __repr__(self) -> str:
        return f"RuntimeEndpoint(pid={self.pid}, url={self.base_url!r}, token={'<hidden>' if self.token else None})"


def plain_endpoint_path(text: str) -> bool:
    """`/mcp`-like: letters, digits, `._~-/`, no `..` segment and no `//` (which reads as an authority)."""
    return bool(_PLAIN_PATH.match(text)) and ".." not in text.split("/") and "//" not in text


def _read_object(path: Path) -> dict[str, Any]:
    try:
        raw = read_bounded(path, MAX_RUNTIME_FILE_BYTES, follow_symlinks=False)
    except FileNotFoundError:
        raise RuntimeFileMissing(path) from None
    except TooLarge:
        raise RuntimeFileError(path, f"the file is larger than {MAX_RUNTIME_FILE_BYTES} bytes") from None
    except UnreadableFile as exc:
        raise RuntimeFileError(path, exc.reason.replace("it is", "the file is", 1)) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        # ValueError covers invalid JSON and integers too long to convert; RecursionError deep nesting.
        raise RuntimeFileError(path, "the file is not valid JSON") from None
    if not isinstance(data, dict):
        raise RuntimeFileError(path, "the file does not hold a JSON object")
    return data


def _loopback_host(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return str(address) in ("127.0.0.1", "::1")


def read_runtime_file(path: Path, *, pid_key: str = "pid", url_key: str = "http",
                      token_key: str = "token") -> RuntimeEndpoint:
    data = _read_object(path)
    pid = data.get(pid_key)
    if type(pid) is not int or not 0 < pid <= MAX_PID:
        raise RuntimeFileError(path, f"'{pid_key}' must be a whole number between 1 and {MAX_PID}")
    url = data.get(url_key)
    if not isinstance(url, str) or not url:
        raise RuntimeFileError(path, f"'{url_key}' must be a URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise RuntimeFileError(path, f"'{url_key}' is not a valid URL") from None
    if parts.scheme != "http":
        raise RuntimeFileError(path, f"'{url_key}' must use plain http on loopback")
    if "@" in parts.netloc:
        raise RuntimeFileError(path, f"'{url_key}' must not carry user information")
    host = parts.hostname or ""
    if not _loopback_host(host) or host.lower() not in LOOPBACK_HOSTS:
        raise RuntimeFileError(path, f"'{url_key}' must point at 127.0.0.1, localhost or ::1")
    if port is None or not 1 <= port <= 65535:
        raise RuntimeFileError(path, f"'{url_key}' must name a port between 1 and 65535")
    token = data.get(token_key)
    if token is not None and (not isinstance(token, str) or not token):
        raise RuntimeFileError(path, f"'{token_key}' must be a non-empty string")
    if token is not None and not _TOKEN.fullmatch(token):
        # A header value with a line break or NUL would be refused by the HTTP library with an
        # error that quotes it; a token is printable ASCII without spaces.
        raise RuntimeFileError(path, f"'{token_key}' must be printable ASCII without spaces or control characters")
    return RuntimeEndpoint(pid, host.lower(), port, token, _start_time(data.get("started")))


def _start_time(value: Any) -> float | None:
    """A process start time, when the file gives one; anything else is none (never an error)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except OverflowError:  # a 400-digit "start time" is not one
        return None


def write_runtime_file(path: Path, *, pid: int, url: str, token: str | None, **extra: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data: dict[str, Any] = {"pid": pid, "http": url, **extra}
    if token is not None:
        data["token"] = token
    atomic_write(path, json.dumps(data) + "\n", mode=0o600)


def remove_runtime_file(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
