"""Library log lines (the SDK's and ours) go to HERMES_HOME/logs/hermes.log, redacted.

Without this, the SDK's warnings (for example about a server that vanished before its session
could be closed) would land on the terminal of whoever runs hermes, unredacted.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from hermes.debugging import debugging
from hermes.files import open_private_append
from hermes.security.redact import Redactor

_LOGGERS = ("mcp", "hermes", "httpx2", "uvicorn", "asyncio")  # asyncio: "Task exception was never retrieved"
# httpx2 says every request it makes at INFO ("HTTP Request: POST …"): a line and a write for every
# call to an HTTP server, which says nothing the server's own state does not. Its warnings stay.
_LEVELS = {"httpx2": logging.WARNING}


class _RedactingFilter(logging.Filter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.redactor(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


@contextlib.contextmanager
def redacted_file_logging(path: Path, redactor: Redactor, extra: Mapping[str, int] | None = None) -> Iterator[None]:
    """`extra`: more libraries' loggers to take in, with the level each is kept from."""
    open_private_append(path).close()  # created 0600 before the handler appends to it
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_RedactingFilter(redactor))
    handler.setLevel(logging.INFO)
    handlers: list[logging.Handler] = [handler]
    debug = debugging()
    if debug:
        shown = logging.StreamHandler(sys.stderr)
        shown.setFormatter(logging.Formatter("debug: %(name)s %(levelname)s: %(message)s"))
        shown.addFilter(_RedactingFilter(redactor))
        shown.setLevel(logging.DEBUG)
        handlers.append(shown)
    levels = {**_LEVELS, **(extra or {})}
    loggers = [logging.getLogger(name) for name in (*_LOGGERS, *(extra or {}))]
    saved = [(lg.propagate, lg.level) for lg in loggers]
    for logger in loggers:
        for added in handlers:
            logger.addHandler(added)
        logger.propagate = False
        wanted = logging.DEBUG if debug else levels.get(logger.name, logging.INFO)
        if logger.level == logging.NOTSET or logger.level > wanted:
            logger.setLevel(wanted)
    try:
        yield
    finally:
        for logger, (propagate, level) in zip(loggers, saved, strict=True):
            for added in handlers:
                logger.removeHandler(added)
            logger.propagate = propagate
            logger.setLevel(level)
        handler.close()
