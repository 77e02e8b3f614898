"""Who hears that an upstream server turned a call into a task.

`serve` offers the Tasks extension to its own clients: a call becomes a task downstream at the
moment its upstream made it one (a call that first asks its questions as input-required rounds,
and only then goes on as a task, keeps those rounds, as the upstream sent them). Both task flows
(`task_extension` for 2026-07-28, `tasks` for 2025-11-25) say so here; whoever runs the call
listens for it in the call's own context.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

_LISTENER: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "hermes_upstream_task_listener", default=None)


@contextlib.contextmanager
def listening(heard: Callable[[], None]) -> Iterator[None]:
    """`heard` is called when the upstream of a call made within this block creates a task."""
    token = _LISTENER.set(heard)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def task_created() -> None:
    listener = _LISTENER.get()
    if listener is not None:
        listener()
