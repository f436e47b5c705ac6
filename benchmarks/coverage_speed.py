"""How long `opindex coverage` of a whole index takes, side by side with a baseline command on the same index.

    python benchmarks/coverage_speed.py --db pt24.sqlite [--rounds 5] [--out result.json]

Each round runs, one after the other, the baseline (`opindex sql "SELECT count(*) FROM native_functions"`: the
start-up and index-opening cost every command pays) and `opindex coverage --json` (every operator overload x the
default keys), both to /dev/null; the medians and their ratio are reported, and the in-process time of
Index.coverage() (the library twin, no start-up, no JSON). The issue's target: the whole 2.4 index in <= 2 s.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--db", required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    exe = [sys.executable, "-m", "opindex"]
    baseline = exe + ["sql", "SELECT count(*) FROM native_functions", "--db", args.db, "--json"]
    command = exe + ["coverage", "--db", args.db, "--json"]
    base, cov, lib = [], [], []
    for _ in range(args.rounds):
        base.append(timed(baseline))
        cov.append(timed(command))
    from opindex.api import Index
    for _ in range(args.rounds):
        with Index(args.db) as ix:
            start = time.perf_counter()
            rows = ix.coverage().rows
            lib.append(time.perf_counter() - start)
    result = {"db": args.db, "rounds": args.rounds, "rows": len(rows),
              "baseline_s": round(statistics.median(base), 3), "coverage_s": round(statistics.median(cov), 3),
              "ratio": round(statistics.median(cov) / statistics.median(base), 2),
              "library_s": round(statistics.median(lib), 3)}
    print(f"{result['rows']} rows; median of {args.rounds}: coverage command {result['coverage_s']} s, baseline "
          f"{result['baseline_s']} s (ratio {result['ratio']}), Index.coverage() {result['library_s']} s; "
          f"target <= 2 s: {'met' if result['coverage_s'] <= 2 else 'NOT met'}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
