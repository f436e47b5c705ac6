"""Trace speed before/after, side by side in one run: the same ops traced in-process by two opindex source trees
(each on the index it built), alternating rounds so a drift of the machine moves both sides alike.

    python benchmarks/trace_ab.py --old SRC --old-db DB --new SRC --new-db DB [--rounds 5]

SRC is a folder holding an `opindex` package (e.g. `git worktree add /tmp/old <commit>`). Prints per side the p50
and p95 of the in-process trace time and the hops per op (a trace that shows more costs more: read both), and
each op's new/old ratio with their geometric mean."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

OPS = ["relu", "add", "mm", "nn.LSTM", "F.layer_norm", "F.softmax", "F.cross_entropy", "F.conv2d", "nn.Linear",
       "F.gelu"]
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from opindex.api import Index
ix = Index(sys.argv[2])
out = {}
for name in json.loads(sys.argv[3]):
    ix.trace(name)  # warm: the first trace of a process opens and caches
    start = time.perf_counter(); t = ix.trace(name); out[name] = (time.perf_counter() - start, len(t.hops))
print(json.dumps(out))
"""


def side(src: str, db: str, ops: list[str]) -> dict:
    res = subprocess.run([sys.executable, "-c", _CHILD, src, db, json.dumps(ops)], capture_output=True, text=True,
                         check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--old-db", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--new-db", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    times = {"old": [], "new": []}
    per_op = {"old": {}, "new": {}}  # op -> its times
    hops = {"old": {}, "new": {}}
    for r in range(args.rounds):
        order = [("old", args.old, args.old_db), ("new", args.new, args.new_db)]
        for label, src, db in (order if r % 2 == 0 else order[::-1]):
            for name, (seconds, n) in side(src, db, OPS).items():
                times[label].append(seconds)
                per_op[label].setdefault(name, []).append(seconds)
                hops[label][name] = n
    for label in ("old", "new"):
        ts = sorted(times[label])
        print(f"{label}: p50 {1000 * statistics.median(ts):.0f} ms, p95 {1000 * ts[int(0.95 * (len(ts) - 1))]:.0f} "
              f"ms over {len(ts)} traces; hops {sum(hops[label].values())} "
              f"({', '.join(f'{k} {v}' for k, v in hops[label].items())})")
    ratio = statistics.median(times["new"]) / statistics.median(times["old"])
    print(f"new/old p50: {ratio:.2f}x")
    # the p50 of ten ops falls between two of them and jumps with either: the ops one by one say more
    ratios = {op: statistics.median(per_op["new"][op]) / statistics.median(per_op["old"][op]) for op in OPS}
    geo = statistics.geometric_mean(ratios.values())
    print(f"new/old per op (median of each): {', '.join(f'{op} {r:.2f}' for op, r in ratios.items())}; "
          f"geometric mean {geo:.2f}x")


if __name__ == "__main__":
    main()
