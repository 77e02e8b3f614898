"""A spinner on stderr for work that can take a while, shown only to a person at a terminal."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def progress(message: str) -> Iterator[None]:
    if not sys.stderr.isatty() or os.environ.get("CI"):
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield
