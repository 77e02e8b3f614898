"""A real dashboard on a loopback port, over a real session, in the test's own event loop."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2

from hermes.dashboard.serve import DashboardOptions, run_dashboard
from hermes.home import Home

FAST = Path(__file__).parent.parent / "servers" / "fast.py"


def fast_server(*options: str) -> str:
    """A config.yaml entry's body for the SDK-free test server."""
    args = ", ".join(f'"{a}"' for a in (str(FAST), *options))
    return f"    command: {sys.executable}\n    args: [{args}]\n"


@dataclass
class Running:
    url: str  # the printed link, with the token
    base: str
    token: str
    port: int
    client: httpx2.AsyncClient  # signed in with the cookie, as a browser that opened the link

    async def post(self, path: str, data: dict[str, str | list[str]]) -> httpx2.Response:
        """A form post from a page of this dashboard; answers with the page the redirect names."""
        answer = await self.client.post(path, data=data, headers={"Origin": self.base}, follow_redirects=False)
        assert answer.status_code == 303, answer.text
        return await self.client.get(answer.headers["location"])


@asynccontextmanager
async def dashboard(home: Home) -> AsyncIterator[Running]:
    async with anyio.create_task_group() as tasks:
        url = await tasks.start(run_dashboard, home, DashboardOptions(open_browser=False, start_wait=30))
        base, _, token = url.partition("/?token=")
        port = int(base.rsplit(":", 1)[1])
        async with httpx2.AsyncClient(base_url=base, timeout=60, follow_redirects=True) as client:
            signed_in = await client.get(url)  # the link trades its token for the cookie
            assert signed_in.status_code == 200, signed_in.text
            yield Running(url, base, token, port, client)
        tasks.cancel_scope.cancel()
