"""Reading our own stdin line by line in a way that a cancellation can interrupt.

A blocking read in a worker thread cannot be abandoned: the SDK's stdio server (whose client
keeps stdin open, as every MCP client does) could never stop on SIGTERM, and `hermes mcp login`
(which also accepts a pasted redirect URL) would wait at exit for a line nobody types. A
non-blocking reader on the event loop stops when it is cancelled. Regular files and /dev/null
can't be watched by epoll; they reach EOF anyway, so callers read those as they are. The file's
blocking mode (shared with every other reader of the terminal) is put back afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import stat
from collections.abc import AsyncIterator

_MAX_LINE = 1 << 27


def stdin_is_pollable(fd: int = 0) -> bool:
    """Whether the event loop's selector accepts `fd` (pipes and sockets do; regular files and
    /dev/null do not, though the latter is a character device)."""
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


def pollable_stdin() -> int | None:
    """The file descriptor of `sys.stdin` when the event loop can watch it; else None (closed, no
    descriptor at all as under a test runner, a regular file, /dev/null)."""
    import sys

    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return None
    return fd if stdin_is_pollable(fd) else None


async def stdin_lines(fd: int = 0) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_MAX_LINE)
    blocking = os.get_blocking(fd)
    pipe = os.fdopen(os.dup(fd), "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        while line := await reader.readline():
            yield line.decode("utf-8", errors="replace")
    finally:
        transport.close()
        with contextlib.suppress(OSError):
            os.set_blocking(fd, blocking)
