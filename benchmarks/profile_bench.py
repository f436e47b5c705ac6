"""How long annotating a profile takes against the index, next to reading the same file with json.load alone, and
how much of the profile's GPU time is attributed to a source location.

    python benchmarks/profile_bench.py [PROFILE] [--db PATH] [--rounds N]

PROFILE defaults to tests/data/train_step_h200_torch2.11.json.gz (one training step on an H200, torch 2.11). The
index is the usual one (--db, $OPINDEX_DB, else the checkout's own or the last built: `opindex list`): build it first
(`opindex build /path/to/pytorch`). Each round opens the index afresh (no cache carries over between rounds),
reads and annotates the whole profile; the baseline round only decompresses and json.loads the file. The median of
the rounds is reported for both, and their ratio. Times are wall-clock on this machine; no assertion is made on
them (the tests never time anything).
"""
from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "tests" / "data" / "train_step_h200_torch2.11.json.gz"


def load_only(path: Path) -> float:
    t = time.perf_counter()
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    json.loads(raw)
    return time.perf_counter() - t


def annotate(path: Path, db) -> tuple[float, object]:
    from opindex.api import Index
    t = time.perf_counter()
    with Index(db) as ix:
        rows = ix.profile(path)
    return time.perf_counter() - t, rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", nargs="?", default=str(DEFAULT))
    ap.add_argument("--db", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    path = Path(args.profile)
    import opindex.profile.report  # noqa: F401  (imports are not what is measured)

    base, full, rows = [], [], None
    for _ in range(args.rounds):
        base.append(load_only(path))
        dt, rows = annotate(path, args.db)
        full.append(dt)
    b, f = statistics.median(base), statistics.median(full)
    print(f"profile: {path} ({rows.kernels_total} kernel names, {rows.total_us:,.1f} us of GPU time)")
    print(f"index:   PyTorch {rows.index_version} at {rows.checkout_root}")
    print(f"{'':24}{'median s':>10}{'min s':>10}")
    print(f"{'json.load alone':24}{b:10.3f}{min(base):10.3f}")
    print(f"{'opindex profile':24}{f:10.3f}{min(full):10.3f}")
    print(f"ratio (annotate / json.load): {f / b:.1f}x over {args.rounds} rounds")
    by_status: dict[str, float] = {}
    for r in rows:
        key = "attributed" if r["attributed"] else r["status"]
        by_status[key] = by_status.get(key, 0.0) + r["gpu_us"]
    share = rows.attributed_share
    print(f"GPU time attributed to a source location: {100 * share:.1f}% (target >= 95%)")
    for k, v in sorted(by_status.items(), key=lambda kv: -kv[1]):
        print(f"  {k:24} {v:10.1f} us  {100 * v / rows.total_us:5.1f}%")
    for r in rows:
        if not r["attributed"]:
            print(f"  not attributed: {r['short']} ({100 * r['share']:.2f}%): {r['status']}; {r['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
