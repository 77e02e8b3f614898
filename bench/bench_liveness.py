"""App-bound servers: the cost of one runtime-file resolution, and app restart -> reconnected.

1. Resolution = read the file afresh + check the pid is alive + check and rebuild the endpoint.
   Baseline in the same run: just opening and parsing the same JSON file. Goal: < 1 ms.
2. Restart: the demo app is stopped and started again (new pid, port and token); measured from
   the moment its new runtime file exists until the session's connection reaches the new process,
   for the default watch interval and a short one. Baseline: how long the app itself took to start.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import anyio

from bench.common import median, report
from hermes.apps.declaration import LivenessSpec
from hermes.apps.host import LocalHost
from hermes.apps.liveness import resolve_live_endpoint
from hermes.demo import setup as demo_setup
from hermes.home import Home
from hermes.session.core import Session, SessionSettings


def resolution(runs: int = 2000) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "server.json"
        path.write_text(json.dumps({"pid": os.getpid(), "http": "http://127.0.0.1:8765", "token": "t" * 43}))
        spec, host = LivenessSpec("server_json", path=str(path)), LocalHost()

        def bare() -> None:
            with path.open("rb") as handle:
                json.loads(handle.read())

        def full() -> None:
            resolve_live_endpoint("bench", spec, host)

        samples: dict[str, list[float]] = {"bare": [], "full": []}
        for _ in range(runs):
            for name, fn in (("bare", bare), ("full", full)):
                started = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - started)
    a, b = median(samples["bare"]), median(samples["full"])
    report("one runtime-file resolution (median of 2,000)", [
        ("open + json.loads only (baseline)", f"{a * 1e6:7.1f} µs"),
        ("read + pid check + endpoint checks", f"{b * 1e6:7.1f} µs   ({b / a:.1f}x the bare read; goal < 1 ms)"),
    ])


async def restart(interval: float, rounds: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as scratch:
        home = Home(Path(scratch))
        os.environ["HERMES_HOME"] = scratch
        demo_setup.install_plugin_folder(home)
        demo_setup.install_app(home)
        apps = demo_setup.DemoApps(home)
        app = await anyio.to_thread.run_sync(apps.start)
        reconnect: list[float] = []
        app_start: list[float] = []
        try:
            async with Session(home, SessionSettings(watch_interval=interval)) as session:
                for _ in range(rounds):
                    apps.stop(app)
                    started = time.perf_counter()
                    app = await anyio.to_thread.run_sync(apps.start)
                    published = time.perf_counter()
                    while session.snapshots()["demo-app"].live_pid != app.pid:
                        await anyio.sleep(0.002)
                    reconnect.append(time.perf_counter() - published)
                    app_start.append(published - started)
        finally:
            apps.stop(app)
    return median(reconnect), median(app_start)


def main() -> None:
    resolution()
    rows = []
    for interval in (0.5, 0.1):
        took, app_start = anyio.run(restart, interval, 5)
        rows.append((f"watch every {interval:g} s: app restart -> reconnected", f"{took * 1000:6.0f} ms median of 5"))
    rows.append(("the app's own start (baseline)", f"{app_start * 1000:6.0f} ms"))
    report("app restart (new pid, port, token) -> session reconnected", rows)


if __name__ == "__main__":
    main()
