"""The bridge kit: how a desktop app publishes its MCP endpoint for hermes, correctly.

An app that serves MCP on a loopback port calls `publish_endpoint` once it listens. The kit
writes the runtime file atomically with mode 0600 (`pid`, `http`, `token`), never leaves a
half-written file for a reader, and removes the file when the app exits cleanly. A fresh token
per start is the app's job; `new_token()` makes one.

    with publish_endpoint(path, port=port, token=token):
        serve_forever()
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from hermes.apps.runtimefile import remove_runtime_file, write_runtime_file


def new_token() -> str:
    return secrets.token_urlsafe(32)


@contextlib.contextmanager
def publish_endpoint(path: Path | str, *, port: int, token: str | None, host: str = "127.0.0.1",
                     pid: int | None = None) -> Iterator[Path]:
    """Write the runtime file for the life of the block; remove it on exit, SIGTERM included."""
    target = Path(path)
    shown_host = f"[{host}]" if ":" in host else host
    write_runtime_file(target, pid=pid or os.getpid(), url=f"http://{shown_host}:{port}", token=token)
    def remove() -> None:
        remove_runtime_file(target)

    atexit.register(remove)
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: FrameType | None) -> None:
        # The file goes first; then whatever handled SIGTERM before (a server's graceful shutdown),
        # or the default: the process ends at once, without a traceback from inside its event loop.
        remove()
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    with contextlib.suppress(ValueError):  # not in the main thread: atexit still covers clean exits
        signal.signal(signal.SIGTERM, on_term)
    try:
        yield target
    finally:
        remove()
        atexit.unregister(remove)
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, previous)
