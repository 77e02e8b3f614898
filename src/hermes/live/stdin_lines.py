"""Reading our own stdin line by line in a way that a cancellation can interrupt.

The SDK's stdio server reads stdin in a worker thread that cannot be abandoned, so a host whose
client keeps stdin open (every MCP client does) could never stop on SIGTERM. A non-blocking pipe
reader on the event loop can. Regular files and /dev/null can't be watched by epoll; they reach EOF
anyway, so they keep the SDK's reader.
"""

from __future__ import annotations

import asyncio
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


async def stdin_lines(fd: int = 0) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_MAX_LINE)
    pipe = os.fdopen(os.dup(fd), "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        while line := await reader.readline():
            yield line.decode("utf-8", errors="replace")
    finally:
        transport.close()
