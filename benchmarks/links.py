"""The link step on a real tree: how long each link takes (recomputed on a copy of an index), and whether SQL and
trace agree (the op_kernels view against the kernel definitions `opindex trace` walks) on a sample of ops.

    python benchmarks/links.py --db INDEX --root CHECKOUT [--ops 200]
"""
from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--root", required=True, help="the checkout the index was built from")
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    from opindex.api import Index
    from opindex.indexer import link
    from agreement import disagreements

    with tempfile.TemporaryDirectory() as tmp:  # the index itself is never written
        copy = Path(tmp) / "links.sqlite"
        shutil.copyfile(args.db, copy)
        con = sqlite3.connect(copy, isolation_level=None)
        con.execute("BEGIN")
        start = time.perf_counter()
        counts = link.derive(con, args.root)
        seconds = time.perf_counter() - start
        con.execute("ROLLBACK")
        con.close()
    print(f"link step: {seconds:.2f} s  ({', '.join(f'{t} {n}' for t, n in counts.items())})")
    with Index(args.db) as ix:
        names = [r["full_name"] for r in ix.rows("SELECT full_name FROM native_functions ORDER BY id")]
        sample = random.Random(args.seed).sample(names, min(args.ops, len(names)))
        start = time.perf_counter()
        wrong = disagreements(ix, sample)
        took = time.perf_counter() - start
    print(f"SQL and trace agree on {len(sample) - len(wrong)}/{len(sample)} ops ({took:.1f} s)")
    for name, trace_side, sql_side in wrong[:10]:
        print(f"  {name}: trace {sorted(map(str, trace_side))} / SQL {sorted(map(str, sql_side))}")


if __name__ == "__main__":
    main()
