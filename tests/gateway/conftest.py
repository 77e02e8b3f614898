"""The gateway over in-memory platforms (`hermes.gateway.fake`), in the test's own event loop.

The model is the suite's scripted stand-in on loopback; the servers are real processes; each room
is a real chat with its own session. Only the messaging platform is in memory: its rules need no
network (the real platforms have their own tests against Synapse and the libraries' seams).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from hermes.gateway.fake import FakePlatform, Sent
from hermes.gateway.rooms import Rooms
from hermes.gateway.run import run_gateway
from hermes.home import Home
from tests.support import PATIENCE


@asynccontextmanager
async def gateway(home: Home, *platforms: FakePlatform) -> AsyncIterator[Rooms]:
    async with anyio.create_task_group() as tasks:
        rooms = await tasks.start(run_gateway, home, list(platforms))
        yield rooms
        tasks.cancel_scope.cancel()


async def said(platform: FakePlatform, room: str, sender: str, text: str, *, containing: str = "",
               direct: bool = False) -> Sent:
    """Say `text` in `room` and return the first message sent back there that contains `containing`."""
    mark = len(platform.sent)
    await platform.say(room, sender, text, direct=direct)
    return await answer(platform, room, after=mark, containing=containing)


async def answer(platform: FakePlatform, room: str, *, after: int, containing: str = "") -> Sent:
    with anyio.fail_after(PATIENCE):
        return await platform.reply(room, after=after, containing=containing)
