"""Run every benchmark in turn: `python -m bench.run_all`."""

from __future__ import annotations

import subprocess
import sys

for module in ("bench.bench_list", "bench.bench_startup", "bench.bench_rss", "bench.bench_calls",
               "bench.bench_liveness", "bench.bench_lifecycle", "bench.bench_results", "bench.bench_chat",
               "bench.bench_search", "bench.bench_recall", "bench.bench_cache", "bench.bench_eras",
               "bench.bench_sandbox", "bench.bench_team"):
    subprocess.run([sys.executable, "-m", module], check=True)
