"""`hermes dashboard` as a user starts it: the printed link, and a clean stop with pages open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx2

from hermes.home import Home
from tests.dashboard.conftest import fast_server


def test_the_command_prints_its_link_and_stops_cleanly_with_a_page_following_it(home: Home) -> None:
    home.root.mkdir(exist_ok=True)
    home.config.write_text("mcp_servers:\n  fast:\n" + fast_server())
    process = subprocess.Popen([sys.executable, "-m", "hermes", "dashboard", "--no-browser"],
                               env={**os.environ, "HERMES_HOME": str(home.root)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=home.root)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("hermes dashboard: http://127.0.0.1:") and "/?token=" in line
        url = line.split(": ", 1)[1].strip()
        base = url.partition("/?token=")[0]
        with httpx2.Client(base_url=base, timeout=60, follow_redirects=True) as browser:
            assert browser.get(url).status_code == 200
            with browser.stream("GET", "/events") as events:
                lines = events.iter_lines()
                assert next(lines) == "retry: 2000"
                process.send_signal(signal.SIGTERM)
                rest = list(lines)  # the stream ends when the dashboard stops
        assert [line for line in rest if line.startswith("event:")] == []
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr and "Exception" not in stderr, stderr
