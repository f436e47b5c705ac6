"""Trace speed before/after, side by side in one run: the same ops traced in-process by two opindex source trees
(each on the index it built), alternating rounds so a drift of the machine moves both sides alike.

    python benchmarks/trace_ab.py --old SRC --old-db DB --new SRC --new-db DB [--rounds 5]
    python benchmarks/trace_ab.py --old SRC --new SRC --db DB --same [--experts 2_4,2_4_more] [--ops 200]

SRC is a folder holding an `opindex` package (e.g. `git worktree add /tmp/old <commit>`). Prints per side the p50
and p95 of the in-process trace time (Index.trace, then its main_chain) and the hops per op (a trace that shows more costs more: read both), and
each op's new/old ratio with their geometric mean. By default each op is traced once untimed first (the timed trace
then finds what the process keeps between traces of one index); `--first OP` times each op's first trace instead,
in a process that one trace of OP warmed.

--same compares what the two trees' traces hold instead of their speed: for every query of the named expert sets
(benchmarks/expert_traces_<set>.json, each at its device), `--ops` native functions of the index (every k-th by
name, deterministic) and a quarter as many stubs and __global__ kernels each (walked bottom-up), the hops as the JSON shape of the old code had them (id, parent, layer, kind, name, file,
line, detail, absent, called_at), the main chain's hop ids, the build settings the header states and the
open decisions. Prints each difference and exits 1 when any."""
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
warm = sys.argv[4] if len(sys.argv) > 4 else None
if warm:  # --first: one other op warms the process; each op's timed trace is its first
    ix.trace(warm).main_chain()
for name in json.loads(sys.argv[3]):
    if not warm:
        ix.trace(name).main_chain()  # warm: the first trace of a process opens and caches
    # a trace with its main chain, as every rendering and the JSON have it (code before 2026-12-04 chose the main
    # chain when rendering; since, when the walk ends): the same work on both sides
    start = time.perf_counter(); t = ix.trace(name); t.main_chain(); out[name] = (time.perf_counter() - start,
                                                                                 len(t.hops))
print(json.dumps(out))
"""


_SAME_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from opindex.api import Index
ix = Index(sys.argv[2])
out = {}
KEYS = ("id", "parent", "layer", "kind", "name", "file", "line", "detail", "absent", "called_at")
for query, device in json.loads(sys.argv[3]):
    try:
        t = ix.trace(query, device=device)
    except Exception as e:  # an error is a result too: both sides must give the same one
        out[query + "@" + device] = {"error": type(e).__name__ + ": " + str(e)}
        continue
    d = t.to_dict()
    out[query + "@" + device] = {"hops": [[h.get(k) for k in KEYS] for h in d["hops"]],
                                 "main": [h.id for h in t.main_chain()], "message": d.get("message", ""),
                                 "build": d.get("build"), "open": d.get("open")}
print(json.dumps(out))
"""


def same_queries(db: str, experts: list[str], n_ops: int) -> list[tuple[str, str]]:
    """(query, device) of the expert sets, then every k-th native function of the index (n_ops of them)."""
    import sqlite3
    from pathlib import Path
    here = Path(__file__).resolve().parent
    out = []
    for name in experts:
        for t in json.loads((here / f"expert_traces_{name}.json").read_text())["traces"]:
            out.append((t["query"], t.get("device", "cuda")))
    if n_ops:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        names = [r[0] for r in con.execute("SELECT DISTINCT name FROM native_functions ORDER BY name")]
        step = max(1, len(names) // n_ops)
        out += [(f"aten::{n}", "cuda") for n in names[::step][:n_ops]]
        # bottom-up walks: stubs and __global__ kernels (a trace of either walks up by default)
        for sql in ("SELECT DISTINCT stub FROM dispatch_stubs ORDER BY stub",
                    "SELECT DISTINCT name FROM symbols WHERE kind = 'global_kernel' ORDER BY name"):
            up = [r[0] for r in con.execute(sql)]
            out += [(n, "cuda") for n in up[::max(1, len(up) // (n_ops // 4 or 1))][:n_ops // 4]]
    return out


def same(args) -> int:
    queries = same_queries(args.db, [e for e in args.experts.split(",") if e], args.ops)
    got = {}
    for label, src in (("old", args.old), ("new", args.new)):
        res = subprocess.run([sys.executable, "-c", _SAME_CHILD, src, args.db, json.dumps(queries)],
                             capture_output=True, text=True, check=True)
        got[label] = json.loads(res.stdout.strip().splitlines()[-1])
    differ = 0
    for key, old in got["old"].items():
        new = got["new"].get(key)
        if new == old:
            continue
        differ += 1
        print(f"DIFFERS {key}")
        if "hops" in old and new and "hops" in new:
            o, n = {tuple(map(str, h)) for h in old["hops"]}, {tuple(map(str, h)) for h in new["hops"]}
            for h in sorted(o - n)[:5]:
                print("  old only:", h)
            for h in sorted(n - o)[:5]:
                print("  new only:", h)
            if old["main"] != new["main"]:
                print(f"  main chain: old {old['main']} new {new['main']}")
        else:
            print(f"  old: {str(old)[:200]}\n  new: {str(new)[:200]}")
    hops = sum(len(v.get("hops", [])) for v in got["old"].values())
    print(f"{len(queries)} traces ({hops} hops of the old code): {differ} differ")
    return 1 if differ else 0


def side(src: str, db: str, ops: list[str], first: str | None = None) -> dict:
    res = subprocess.run([sys.executable, "-c", _CHILD, src, db, json.dumps(ops), *([first] if first else [])],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--old-db")
    ap.add_argument("--new", required=True)
    ap.add_argument("--new-db")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--first", metavar="OP", help="time each op's first trace in its process, after one trace of OP "
                    "(not the op itself) warmed it: what a notebook's or a server's first question about an op costs")
    ap.add_argument("--same", action="store_true", help="compare the hops, not the speed")
    ap.add_argument("--db", help="--same: the index both sides trace")
    ap.add_argument("--experts", default="2_4,2_4_more,2_4_third,2_4_fourth",
                    help="--same: expert sets (benchmarks/expert_traces_<set>.json), comma-separated")
    ap.add_argument("--ops", type=int, default=200, help="--same: native functions of the index also traced")
    args = ap.parse_args()
    if args.same:
        if not args.db:
            ap.error("--same needs --db")
        sys.exit(same(args))
    if not (args.old_db and args.new_db):
        ap.error("--old-db and --new-db are needed to time")
    times = {"old": [], "new": []}
    per_op = {"old": {}, "new": {}}  # op -> its times
    hops = {"old": {}, "new": {}}
    for r in range(args.rounds):
        order = [("old", args.old, args.old_db), ("new", args.new, args.new_db)]
        for label, src, db in (order if r % 2 == 0 else order[::-1]):
            for name, (seconds, n) in side(src, db, OPS, args.first).items():
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
