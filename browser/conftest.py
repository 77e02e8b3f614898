"""The dashboard in a real browser: Debian's Chromium driven by Playwright, against real servers.

Run by `.ci/run` after the README suite, with the environment `.ci/browser.sh` prints:

    eval "$(bash .ci/browser.sh)" && .venv/bin/python -m pytest -q browser -n 0

Without that environment these tests fail, on purpose: a skipped browser test would count as
passing without having run. Screenshots go to browser/screenshots/ (kept out of git).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from hermes.home import Home
from tests.conftest import home  # noqa: F401  (the suite's own fixture, shared)
from tests.npm_tools import NpmTools, install

expect.set_options(timeout=60_000)  # a loaded two-core machine: wait for the state, however long it takes
SHOTS = Path(__file__).parent / "screenshots"
# What the machine's closed network needs: no background connections Chromium would try at start.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                  "--disable-background-networking", "--disable-component-update"]


@dataclass
class Dashboard:
    url: str
    base: str
    process: subprocess.Popen[str]


@pytest.fixture(scope="session")
def npm() -> NpmTools:
    return install()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    chromium = os.environ.get("HERMES_CHROMIUM")
    if not chromium:
        pytest.fail("no browser: HERMES_CHROMIUM unset; run `eval \"$(bash .ci/browser.sh)\"` first")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture
def dashboard(home: Home) -> Iterator[Callable[[], Dashboard]]:  # noqa: F811
    started: list[Dashboard] = []

    def start() -> Dashboard:
        process = subprocess.Popen([sys.executable, "-m", "hermes", "dashboard", "--no-browser"],
                                   env={**os.environ, "HERMES_HOME": str(home.root), "NO_COLOR": "1"},
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   cwd=home.root)
        assert process.stdout is not None
        line = process.stdout.readline()  # the dashboard prints its link once it serves
        assert line.startswith("hermes dashboard: "), line
        url = line.split(": ", 1)[1].strip()
        running = Dashboard(url, url.partition("/?token=")[0], process)
        started.append(running)
        return running

    yield start
    for running in started:
        running.process.send_signal(signal.SIGTERM)
        running.process.wait(timeout=60)


def screenshot(page: Any, name: str) -> Path:
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
