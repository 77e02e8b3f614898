"""Who gets in: the printed link's token, this port's Host and Origin; and the headers that keep
hostile text inert in every answer."""

from __future__ import annotations

import httpx2
import pytest

from hermes.home import Home
from tests.dashboard.conftest import dashboard

pytestmark = pytest.mark.anyio


async def test_only_the_printed_link_opens_the_dashboard_and_only_from_its_own_origin(home: Home) -> None:
    async with dashboard(home) as running, httpx2.AsyncClient(base_url=running.base, timeout=60) as stranger:
        assert (await stranger.get("/")).status_code == 401
        assert (await stranger.get("/?token=guessed")).status_code == 401
        assert (await stranger.get("/", headers={"Authorization": "Bearer guessed"})).status_code == 401
        # A rebound name reaches the socket, not the app; another site's page is refused.
        assert (await stranger.get(running.url, headers={"Host": "attacker.example:80"})).status_code == 421
        assert (await stranger.get(running.url, headers={"Origin": "http://attacker.example"})).status_code == 403

        opened = await stranger.get(running.url)
        assert opened.status_code == 303 and opened.headers["location"] == "/"
        cookie = opened.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        # Browsers send a 127.0.0.1 cookie to every port: it carries a session key, never the token.
        assert running.token not in cookie
        assert (await stranger.get("/")).status_code == 200  # the cookie, from now on
        # Another local app's malformed cookie on this address does not hide ours.
        session = cookie.split(";")[0]
        mixed = await stranger.get("/", headers={"Cookie": f'bad"cookie=x; {session}'})
        assert mixed.status_code == 200

        # A change with the cookie but without this dashboard's Origin is not from one of its pages.
        unmarked = await stranger.post("/servers/x/disable", data={"scope": "user"})
        assert unmarked.status_code == 403
        foreign = await stranger.post("/servers/x/disable", data={"scope": "user"},
                                      headers={"Origin": "http://127.0.0.1:1"})
        assert foreign.status_code == 403
        # A script with the bearer token needs no Origin.
        async with httpx2.AsyncClient(base_url=running.base, timeout=60) as script:
            scripted = await script.post("/servers/x/disable", data={"scope": "user"},
                                         headers={"Authorization": f"Bearer {running.token}"})
        assert scripted.status_code == 303
        assert not home.config.exists()  # no such server: nothing was written

        page = await running.client.get("/")
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "same-origin"
        assert running.token not in page.text


async def test_a_post_too_large_or_unreadable_is_refused_in_one_sentence(home: Home) -> None:
    async with dashboard(home) as running:
        huge = await running.client.post("/servers", content=b"name=" + b"x" * 70_000,
                                         headers={"Origin": running.base,
                                                  "Content-Type": "application/x-www-form-urlencoded"})
        assert huge.status_code == 413 and "at most" in huge.text
        assert not home.config.exists()


async def test_the_link_redirects_only_to_a_path_of_this_dashboard(home: Home) -> None:
    async with dashboard(home) as running, httpx2.AsyncClient(base_url=running.base, timeout=60) as browser:
        for path in ("//evil.example", "/%5Cevil.example", "/%2F%2Fevil.example/", "/x%0d%0aSet-Cookie:%20evil=1"):
            answer = await browser.get(f"{path}?token={running.token}")
            assert answer.status_code == 303, path
            location = answer.headers["location"]
            assert not location.startswith(("//", "/\\")) and "\r" not in location and "\n" not in location, path
            assert "evil=1" not in answer.headers.get("set-cookie", ""), path
        kept = await browser.get(f"/servers/fast?token={running.token}")
        assert kept.headers["location"] == "/servers/fast"
