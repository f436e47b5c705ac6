"""What JSON rows cost: `opindex sql --json/--ndjson` of many rows and `opindex coverage --json`, this tree's code
against a baseline tree's (another checkout of opindex, e.g. main before the rows named their index), side by side.

    python benchmarks/json_rows.py --db pt24.sqlite --baseline /path/to/other/opindex/checkout [--rounds 3]

Each round runs every command once with each tree's code (PYTHONPATH, the same Python and index), stdout to
/dev/null; the medians and their ratio (this / baseline) are reported, with the bytes each writes.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ROWS = "SELECT name, qualified_name, file, line FROM symbols"
COMMANDS = {"sql --json": ["sql", ROWS, "--json"], "sql --ndjson": ["sql", ROWS, "--ndjson"],
            "coverage --json": ["coverage", "--json"]}


def run(tree: Path, args: list[str], db: str) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "opindex", *args, "--db", db], env=env, capture_output=True,
                          cwd=tree)  # `-m` puts the working folder first on sys.path
    return time.perf_counter() - start, len(done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--baseline", required=True, help="the root of another opindex checkout")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    times: dict[tuple[str, str], list[float]] = {}
    size: dict[tuple[str, str], int] = {}
    for _ in range(args.rounds):
        for what, cmd in COMMANDS.items():
            for side, tree in (("baseline", Path(args.baseline)), ("this", HERE)):
                seconds, n = run(tree, cmd, args.db)
                times.setdefault((what, side), []).append(seconds)
                size[(what, side)] = n
    print(f"{'command':<18} {'baseline s':>10} {'this s':>8} {'ratio':>6} {'baseline MB':>11} {'this MB':>8}")
    for what in COMMANDS:
        b, t = (statistics.median(times[(what, s)]) for s in ("baseline", "this"))
        print(f"{what:<18} {b:>10.2f} {t:>8.2f} {t / b:>6.2f} {size[(what, 'baseline')] / 1e6:>11.1f} "
              f"{size[(what, 'this')] / 1e6:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
