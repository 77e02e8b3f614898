"""One plain sentence for why a connection attempt or a call failed."""

from __future__ import annotations

import errno
import socket
from urllib.parse import urlsplit

import httpx2
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from hermes.errors import HermesError, causes, leaf
from hermes.mcp.sdk import connection_closed
from hermes.security.invisible import visible


def _unresolved(exc: BaseException) -> bool:
    """Whether a connection failed at the name lookup (DNS), anywhere down its chain of causes."""
    return any(isinstance(current, socket.gaierror) or "Name or service not known" in str(current)
               or "nodename nor servname" in str(current) or "getaddrinfo failed" in str(current)
               for current in causes(exc))


def one_line(text: object, limit: int = 300) -> str:
    """A server's words as one line of readable length (a multi-line dump, a 200 KB message)."""
    flat = " ".join(visible(str(text)).split()) if text is not None else ""
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _first_problem(exc: ValidationError) -> str:
    count = exc.error_count()
    first = exc.errors()[0] if count else None
    if first is None:
        return "it could not be read"
    where = ".".join(str(part) for part in first.get("loc", ()))[:80]
    what = one_line(first.get("msg", ""), 120)
    more = f"; {count - 1} more" if count > 1 else ""
    return f"{where + ': ' if where else ''}{what}{more}"


def describe_failure(exc: BaseException, *, command: str | None = None, url: str | None = None,
                     returncode: int | None = None) -> str:
    exc = leaf(exc)
    if isinstance(exc, HermesError):
        return str(exc)
    if isinstance(exc, FileNotFoundError) and command is not None:
        return f"command '{command}' was not found"
    if isinstance(exc, PermissionError) and command is not None:
        return f"command '{command}' is not executable"
    if isinstance(exc, OSError) and exc.errno == errno.ENOEXEC and command is not None:
        return f"command '{command}' is not a program this system can run"
    if isinstance(exc, httpx2.ConnectError):
        if _unresolved(exc):
            host = urlsplit(url).hostname if url else None
            return f"could not resolve host {host}" if host else "could not resolve the server's host name"
        return f"nothing answered at {url}" if url else "the connection was refused"
    if isinstance(exc, httpx2.HTTPStatusError):
        return http_status_words(exc.response.status_code, exc.response.reason_phrase)
    if isinstance(exc, httpx2.TimeoutException):
        return "the HTTP request timed out"
    if isinstance(exc, MCPError):
        if returncode is not None and connection_closed(exc):
            return f"the server exited during the handshake (exit code {returncode})"
        return f"the server reported an error: {one_line(exc.error.message)}"
    if returncode is not None:
        return f"the server exited (exit code {returncode})"
    if isinstance(exc, ValidationError):
        return f"the server's answer does not follow the MCP protocol ({_first_problem(exc)})"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def http_status_words(code: int, phrase: str) -> str:
    """An HTTP server's refusal, with where to look when it is about credentials."""
    said = f"the server answered HTTP {code} {phrase}".rstrip()
    if code == 401:
        return (f"{said}: it wants credentials; set its Authorization header under `headers:` in config.yaml "
                f"(`Authorization: Bearer ${{TOKEN}}`, the token in HERMES_HOME/.env), or `auth: oauth` and "
                f"`hermes mcp login` when it signs in with OAuth")
    if code == 403:
        return f"{said}: the credentials were refused or lack a permission; check the token in its Authorization header"
    return said
