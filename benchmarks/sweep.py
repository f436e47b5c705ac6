"""The crash sweep: trace every name of a real index down and up, render each trace in every output format, and
report exceptions, slow calls and the time per name.

    python benchmarks/sweep.py --db INDEX [--sample N] [--seed S] [--cli N] [--slow 5] [--json OUT]

Names, per kind: every native function (aten::name.overload), every public def of torch/nn/functional.py (F.x),
every nn.Module class under torch/nn/ (by its qualified name), every __global__ kernel (its qualified name,
`::name` in the global namespace) and every dispatch stub. Each is traced in its automatic direction and the other
one (--up, or down from a kernel or stub) in-process through the library, and each trace is rendered as text
(default, --tree, --full --snippets), JSON, Markdown, dot, Mermaid, HTML and notebook Markdown. The listing
command of its kind runs too (op, stub, find, callers).
`--cli N` also runs N names through the `opindex trace` command (a fresh process each, --json and text), checking
the exit code (0 found, 1 nothing found, 2 ambiguous) and that no traceback is printed.

`--sample N` takes N names per kind (seeded, stated in the output) when the whole sweep is too slow for the machine;
without it every name is swept. An exception is any error escaping the library (OpindexError included: every swept
name comes from the index, so it must trace); a call over `--slow` seconds (5) counts as a timeout, and one over
`--abort` seconds (60) is stopped. Exits 1 when there is an exception or a timeout."""
from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opindex.api import Index  # noqa: E402

KINDS = ("native", "functional", "module", "global_kernel", "stub")


class Abort(Exception):
    pass


def names(ix: Index) -> dict[str, list[str]]:
    rows = ix.rows
    out = {"native": [f"aten::{r['n']}" for r in rows("SELECT DISTINCT full_name AS n FROM native_functions "
                                                     "ORDER BY full_name")]}
    out["functional"] = [f"F.{r['n']}" for r in rows(
        "SELECT DISTINCT name AS n FROM symbols WHERE file = 'torch/nn/functional.py' AND language = 'python' "
        "AND kind = 'function' AND qualified_name = 'torch.nn.functional.' || name AND name NOT LIKE '\\_%' "
        "ESCAPE '\\' ORDER BY name")]
    classes = [r["q"] for r in rows("SELECT DISTINCT qualified_name AS q FROM symbols WHERE language = 'python' "
                                    "AND kind = 'class' AND file LIKE 'torch/nn/%' ORDER BY q")]
    out["module"] = [c for c in classes if _is_module(c, _bases(ix))]
    out["global_kernel"] = [r["q"] if "::" in r["q"] else f"::{r['q']}" for r in rows(
        "SELECT DISTINCT qualified_name AS q FROM symbols WHERE kind = 'global_kernel' ORDER BY q")]
    out["stub"] = [r["n"] for r in rows("SELECT DISTINCT stub AS n FROM dispatch_stubs ORDER BY stub")]
    return out


def _bases(ix: Index, cache: dict = {}) -> dict[str, list[str]]:
    """Class (bare name) -> its bases' bare names, over every Python file (a name-level approximation)."""
    if ix.path not in cache:
        found: dict[str, list[str]] = {}
        for r in ix.rows("SELECT class_name, base FROM class_bases"):
            found.setdefault(r["class_name"].split(".")[-1], []).append(r["base"].split(".")[-1])
        cache[ix.path] = found
    return cache[ix.path]


def _is_module(qualified: str, bases: dict[str, list[str]]) -> bool:
    todo, seen = [qualified.split(".")[-1]], set()
    while todo:
        name = todo.pop()
        if name == "Module":
            return True
        if name not in seen:
            seen.add(name)
            todo += bases.get(name, [])
    return False


def renderings(t) -> list[tuple[str, object]]:
    from opindex.render.notebook import notebook_markdown
    return [("text", lambda: t.to_text()), ("tree", lambda: t.to_text(tree=True)),
            ("full", lambda: t.to_text(full=True, tree=True, snippets=True, context=3)),
            ("json", t.to_json), ("markdown", t.to_markdown), ("dot", t.to_dot), ("mermaid", t.to_mermaid),
            ("html", t._repr_html_), ("notebook", lambda: notebook_markdown(t))]


def listing(ix: Index, kind: str, name: str):
    bare = name.split("::")[-1].split(".")[-1]
    calls = [("find", lambda: ix.find(name.removeprefix("aten::") if kind != "global_kernel" else bare))]
    if kind == "native":
        calls.append(("op", lambda: ix.op(name)))
    if kind == "stub":
        calls.append(("stub", lambda: ix.stub(name)))
    if kind == "global_kernel":
        calls.append(("callers", lambda: ix.callers(bare)))
    return calls


def timed(fn, abort: float):
    signal.setitimer(signal.ITIMER_REAL, abort)
    start = time.perf_counter()
    try:
        return fn(), time.perf_counter() - start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def sweep(ix: Index, picked: dict[str, list[str]], slow: float, abort: float, progress: bool) -> dict:
    def on_alarm(signum, frame):
        raise Abort(f"stopped after {abort:g} s")
    signal.signal(signal.SIGALRM, on_alarm)
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    errors, timeouts, empty = [], [], []
    total = sum(len(v) for v in picked.values())
    done = 0

    def check(what: str, call) -> None:
        """Run one rendering or listing: an escape is an error, a slow or stopped call a timeout."""
        try:
            _, took = timed(call, abort)
            if took > slow:
                timeouts.append((what, took))
        except Abort:
            timeouts.append((what, abort))
        except Exception as exc:  # noqa: BLE001 - the sweep reports every escape
            errors.append((what, _short(exc)))

    for kind, todo in picked.items():
        for name in todo:
            done += 1
            if progress and done % 50 == 0:
                print(f"  {done}/{total} names", file=sys.stderr, flush=True)
            # the automatic direction (down from an op or Python name, up from a kernel or stub) and the other one
            for up in ((None, True) if kind in ("native", "functional", "module") else (None, False)):
                what = f"trace {name}{'' if up is None else ' --up' if up else ' (forced down)'}"
                try:
                    t, took = timed(lambda: ix.trace(name, up=up), abort)
                except Abort:
                    timeouts.append((what, abort))
                    continue
                except Exception as exc:  # noqa: BLE001 - the sweep reports every escape
                    errors.append((what, _short(exc)))
                    continue
                times[kind].append(took)
                if took > slow:
                    timeouts.append((what, took))
                if up is None and not t.hops:
                    empty.append((name, (t.message or "no message").splitlines()[0][:160]))
                for fmt, render in renderings(t):
                    check(f"{what} | {fmt}", render)
            for label, call in listing(ix, kind, name):
                check(f"{label} {name}", call)
    return {"times": times, "errors": errors, "timeouts": timeouts, "empty": empty}


def _short(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(exc).__name__}: {str(exc)[:200]}{where}"


def cli_runs(db: str, picked: dict[str, list[str]], n: int, seed: int, slow: float) -> dict:
    pool = [name for todo in picked.values() for name in todo]
    chosen = random.Random(seed).sample(pool, min(n, len(pool)))
    bad, times = [], []
    for name in chosen:
        for extra in (["--json"], []):
            args = [sys.executable, "-m", "opindex", "trace", name, "--db", db, "--no-pager", *extra]
            start = time.perf_counter()
            proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
            took = time.perf_counter() - start
            times.append(took)
            if proc.returncode not in (0, 1, 2) or "Traceback" in proc.stderr or took > slow:
                bad.append((" ".join(["opindex trace", name, *extra]), proc.returncode, round(took, 2),
                            proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else []))
    return {"runs": len(times), "bad": bad, "times": times}


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="the index of a real tree")
    ap.add_argument("--sample", type=int, default=0, help="names per kind (0: every name)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cli", type=int, default=20, help="names also run through `opindex trace` (0: none)")
    ap.add_argument("--slow", type=float, default=5.0, help="a call over this many seconds is a timeout")
    ap.add_argument("--abort", type=float, default=60.0, help="stop a call after this many seconds")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the results here")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    ix = Index(args.db)
    every = names(ix)
    rng = random.Random(args.seed)
    picked = {k: (sorted(rng.sample(v, args.sample)) if args.sample and len(v) > args.sample else v)
              for k, v in every.items()}
    version = ix.meta.get("pytorch_version", "?")
    print(f"index: {args.db} (PyTorch {version})")
    scope = (f"a sample of {args.sample} names per kind (seed {args.seed}), not every name" if args.sample
             else "every name")
    print(f"swept: {scope}: " + ", ".join(f"{k} {len(picked[k])} of {len(every[k])}" for k in KINDS))
    ix.trace("relu")  # warm: caches that the first trace of a process fills
    started = time.perf_counter()
    res = sweep(ix, picked, args.slow, args.abort, not args.quiet)
    wall = time.perf_counter() - started
    all_times = [t for ts in res["times"].values() for t in ts]
    print(f"traces: {len(all_times)} in-process (down and up) in {wall:.0f} s, each rendered in 9 formats; "
          f"p50 {pct(all_times, .5) * 1000:.0f} ms, p95 {pct(all_times, .95) * 1000:.0f} ms, "
          f"max {max(all_times, default=0):.2f} s")
    for kind in KINDS:
        ts = res["times"][kind]
        if ts:
            print(f"  {kind:14s} {len(ts):5d} traces  p50 {pct(ts, .5) * 1000:6.0f} ms  p95 "
                  f"{pct(ts, .95) * 1000:6.0f} ms  max {max(ts):6.2f} s")
    print(f"exceptions: {len(res['errors'])}")
    for what, err in res["errors"][:50]:
        print(f"  {what}: {err}")
    print(f"timeouts (> {args.slow:g} s): {len(res['timeouts'])}")
    for what, took in sorted(res["timeouts"], key=lambda x: -x[1])[:30]:
        print(f"  {what}: {took:.1f} s")
    print(f"names with no trace (automatic direction): {len(res['empty'])}")
    for name, why in res["empty"][:15]:
        print(f"  {name}: {why}")
    cli = {"runs": 0, "bad": [], "times": []}
    if args.cli:
        cli = cli_runs(args.db, picked, args.cli, args.seed, args.slow)
        print(f"CLI: {cli['runs']} runs of `opindex trace` (fresh processes, --json and text): p50 "
              f"{pct(cli['times'], .5):.2f} s, max {max(cli['times'], default=0):.2f} s; failures {len(cli['bad'])}")
        for row in cli["bad"][:20]:
            print(f"  {row}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({
            "db": args.db, "pytorch_version": version, "sample": args.sample, "seed": args.seed,
            "names": {k: len(v) for k, v in picked.items()}, "names_in_index": {k: len(v) for k, v in every.items()},
            "wall_s": wall, "p50_s": pct(all_times, .5), "p95_s": pct(all_times, .95),
            "max_s": max(all_times, default=0), "errors": res["errors"], "timeouts": res["timeouts"],
            "empty": res["empty"], "cli": {k: v for k, v in cli.items() if k != "times"}}, indent=1))
    sys.exit(1 if res["errors"] or res["timeouts"] or cli["bad"] else 0)


if __name__ == "__main__":
    main()
