"""Telling open dashboard pages that something changed, so they refresh without a reload.

Three sources: the session's servers (a state, a crash, a restart, an app starting or stopping,
tools listed), the surface (a reload, a permission), and the config files themselves (an edit by
hand or by a CLI command while no reload followed). A page's event stream waits on `changed()`
and sends the new version number; it never polls the session.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from hermes.dashboard.streams import Pulse
from hermes.home import Home

# How often the config files are looked at: a stat of three files, cheap enough to do every second.
WATCH_INTERVAL = 1.0


class Changes:
    def __init__(self, echo: Callable[[int], None] | None = None) -> None:
        """`echo` hears each new version too: the pages' one event stream carries it (a browser
        allows a handful of connections to a host, so each page keeps one stream, not one per kind)."""
        self.version = 0
        self.pulse = Pulse()
        self._echo = echo

    def bump(self, _server: str | None = None) -> None:
        """A listener of the session's lifecycle and surface (their argument is not needed here)."""
        self.version += 1
        self.pulse.fire()
        if self._echo is not None:
            self._echo(self.version)

    async def after(self, version: int) -> int | None:
        """The version once it is newer than `version`; None once the dashboard is stopping."""
        return self.version if await self.pulse.until(lambda: self.version > version) else None

    async def watch_files(self, home: Home) -> None:
        """Bump whenever config.yaml, .env or the plugins' list changes on disk; runs until cancelled."""
        paths = (home.config, home.dotenv, home.plugins)
        seen = await anyio.to_thread.run_sync(_stamps, paths)
        while True:
            await anyio.sleep(WATCH_INTERVAL)
            now = await anyio.to_thread.run_sync(_stamps, paths)
            if now != seen:
                seen = now
                self.bump()


def _stamps(paths: tuple[object, ...]) -> tuple[tuple[int, int] | None, ...]:
    import os

    stamps: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            stat = os.stat(str(path))
        except OSError:
            stamps.append(None)
            continue
        stamps.append((stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)
