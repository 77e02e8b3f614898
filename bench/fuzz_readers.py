"""Seeded fuzzing of every reader (config, declarations, plugin manifests, catalog manifests).

Prints, per reader, how many inputs it was fed and how many exceptions escaped outside the
`HermesError` tree (the goal: zero). `python -m bench.fuzz_readers [--count 20000] [--seed 1]`.
"""

from __future__ import annotations

import argparse
import time

from bench.common import report
from tests.fuzzing import READERS, run


def main(count: int, seed: int) -> None:
    rows = []
    for name in sorted(READERS):
        started = time.perf_counter()
        escapes = run(name, count, seed)
        rows.append((name, f"{count} inputs, {len(escapes)} escapes, {time.perf_counter() - started:5.1f} s"))
        for line in sorted(set(escapes))[:10]:
            rows.append(("", f"  escape: {line}"))
    report(f"fuzzing the readers (seed {seed})", rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    main(args.count, args.seed)
