"""When Python's cyclic garbage collector runs, for a command's start.

A command starts by creating tens of thousands of objects that live until it ends: modules,
classes, functions, click's commands. At Python's default pace (a collection every 700 new
objects) the collector walked them 26 times during `hermes mcp list` with 20 servers (about 3 ms
of 50) and freed nothing. While a command starts, collection waits for many more new objects;
long work (`interrupts.run`, under which every session, server and loop runs) returns to the
default pace. A command that never reaches long work still collects, only less often.
"""

from __future__ import annotations

import gc

# New objects allowed before a collection while a command starts. A listing creates fewer than this in
# all, so it is never collected; a cycle's garbage is at most this many objects late.
STARTING_THRESHOLD = 100_000
_DEFAULT_THRESHOLDS = gc.get_threshold()


def starting() -> None:
    gc.set_threshold(STARTING_THRESHOLD, *_DEFAULT_THRESHOLDS[1:])


def long_work() -> None:
    """Python's own pace again, for work that runs long enough to make garbage worth collecting."""
    gc.set_threshold(*_DEFAULT_THRESHOLDS)


def leaving() -> None:
    """The interpreter's exit ends with a full collection that walks every object still alive: all
    the modules, classes and functions the command loaded (about 5 ms of a listing). Everything is
    about to go, and frozen objects are not walked. Exit handlers still run and the standard
    streams are still flushed; what is skipped is finalizing garbage caught in a reference cycle,
    and hermes closes its files, processes and loops with `with` blocks and task groups, never by
    finalizers."""
    gc.freeze()
