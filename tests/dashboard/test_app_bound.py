"""A plugin's app-bound server in the dashboard: a closed app says what to do, and the app
starting reaches an open page without a reload (the demo's real app and plugin)."""

from __future__ import annotations

import anyio
import pytest

from hermes.demo import setup as demo_setup
from hermes.home import Home
from tests.dashboard.conftest import dashboard
from tests.dashboard.test_menu import _menu_once_changed, _state

pytestmark = pytest.mark.anyio


async def test_a_closed_app_says_start_it_and_its_start_reaches_the_open_page(home: Home) -> None:
    demo_setup.install_plugin_folder(home)
    demo_setup.install_app(home)
    apps = demo_setup.DemoApps(home)
    try:
        async with dashboard(home) as running, running.client.stream("GET", "/events") as events:
            lines = events.aiter_lines()
            assert await anext(lines) == "retry: 2000"
            menu = (await running.client.get("/fragment/menu")).text
            card = menu[menu.index('data-server="demo-app"'):]
            assert _state(menu, "demo-app") == "app_not_running"
            assert "Start Demo Scene App, then try again." in card
            plugins = menu[menu.index("<h2>Plugins</h2>"):]
            assert "hermes-demo" in plugins and "demo-app: app_not_running" in plugins
            await anyio.to_thread.run_sync(apps.start)
            assert await _menu_once_changed(running, lines, lambda page: _state(page, "demo-app") == "connected"
                                            and "demo-app: connected" in page)
    finally:
        apps.stop_all()
