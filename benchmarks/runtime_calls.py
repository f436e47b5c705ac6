#!/usr/bin/env python3
"""Runtime truth per call (issue 28): does a traced call's main chain end at a kernel the GPU really ran?

benchmarks/runtime_calls.txt lists calls (`F.nll_loss(torch.randn(64, 1000), ..., reduction='none')`);
benchmarks/runtime_record.py ran each on an H200 under torch.profiler and wrote the kernels it launched
(benchmarks/runtime_h200_torch2.11.json: torch 2.11, cuDNN 9.19).  For each call this script traces the call string
(`Index.trace(call)`; where the library cannot read a call it traces the callee's name with the first
`dtype=torch.X` as --dtype, and says so) and scores the main chain's last hop:

  hit      the end names a kernel that ran: a `__global__` of the same name (the hop's name or the kernel a launch
           hop names), or a library hop of the library a ran kernel belongs to (cuBLAS, cuDNN, CUB, ...)
  functor  of the hits, those whose main chain also names the function the kernel's functor comes from
           (`vectorized_elementwise_kernel<4, at::native::exp_kernel_cuda(...)::{lambda}>`: exp_kernel_cuda): a
           shared launcher reached through the right body
  wrapper  of the hits whose kernel runs a binary op's functor wrapper (AUnaryFunctor: the first operand a CPU
           scalar, BUnaryFunctor: the second, BinaryFunctor: neither; Loops.cuh), those whose main chain's
           TensorIterator launch passes that wrapper (read from the checkout at the launch's line); counted apart
           where no launch of the chain names one
  open     a miss whose trace states an open decision (the JSON's `choices` with `settled` false) and names a ran
           kernel somewhere: the inputs could not settle it, and the trace says so
  absent   every kernel that ran is missing from the checkout (a 2.11 kernel the tree's version lacks: the
           version difference is listed, not scored)
  differs  the main chain ends at a `__global__` the profiled build does not contain at all
           (benchmarks/kernels_torch2.11.json: every kernel of torch 2.11's CUDA libraries, listed by
           benchmarks/kernel_names.py): the tree's code takes a path 2.11 has no code for (a fork's own kernel,
           one upstream removed), so 2.11's run cannot confirm or refute it: the other version difference, listed
           and not scored; the figure that counts these as misses is printed beside the target's

Memset/Memcpy entries are not kernels and are ignored.  Target (issue 28): hit >= 90% of the scored calls, the rest
open decisions or stated version differences.

usage:
  python benchmarks/runtime_calls.py --db /tmp/pt24.sqlite [-U USE_MACA] [-v] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from trace_truth import classify, LIBRARY_ALIASES, main_chain_end, norm_name, unbuildable  # noqa: E402

RECORD = HERE / "runtime_h200_torch2.11.json"
KERNELS = HERE / "kernels_torch2.11.json"  # the bare names of every kernel in the profiled build's libraries
NOT_KERNELS = re.compile(r"^(Memset|Memcpy)\b")
_FUNCTOR_FN = re.compile(r"(?:^|[\s,<(:])((?:[A-Za-z_]\w*::)*(?:\(anonymous namespace\)::)?([A-Za-z_]\w*))\("
                         r"[^()]*\)::\{lambda")


def ran_kernels(call: dict) -> list[dict]:
    """The kernels a call launched: {'name', 'kind' (library|source), 'target' (library or __global__ name),
    'functor' (the function its lambda functor is defined in, or None)}."""
    out = []
    for k in call.get("kernels", []):
        if NOT_KERNELS.match(k["name"]):
            continue
        kind, target = classify(k["name"])
        m = _FUNCTOR_FN.search(k["name"])
        w = _WRAPPER.search(k["name"])
        out.append({"name": k["name"], "kind": kind, "target": target, "functor": m.group(2) if m else None,
                    "wrapper": w.group(1) if w else None})
    return out


# The functor wrapper a TensorIterator launch of a binary op runs (Loops.cuh): a CPU scalar first operand
# (AUnaryFunctor), second (BUnaryFunctor), or two device tensors (BinaryFunctor)
_WRAPPER = re.compile(r"\b(AUnaryFunctor|BUnaryFunctor|BinaryFunctor)<")
_WRAPPER_LOCAL = re.compile(r"\b(AUnaryFunctor|BUnaryFunctor|BinaryFunctor)<.*>\s*([A-Za-z_]\w*)\s*[({]")


def chain_wrappers(tr: dict) -> set[str]:
    """The functor wrappers the main chain's TensorIterator launches pass (Loops.cuh:269's `gpu_kernel(iter,
    BinaryFunctor<...>(f))`; `gpu_kernel(iter, bf)` with `BUnaryFunctor<...> bf(...)` declared in the lines just
    above), read from the checkout's source."""
    root = (tr.get("index") or {}).get("checkout")
    by_id = {h.get("id"): h for h in tr.get("hops", [])}
    found: set[str] = set()
    for i in tr.get("main_chain") or []:
        h = by_id.get(i) or {}
        if str(h.get("kind")) not in ("tensor_iterator", "Kind.TENSOR_ITERATOR") or not root or not h.get("line"):
            continue
        try:
            lines = open(Path(root) / h["file"], encoding="utf-8", errors="replace").read().splitlines()
        except OSError:
            continue
        at = h["line"] - 1
        end = next((j for j in range(at, min(at + 6, len(lines))) if ";" in lines[j]), at)
        call = " ".join(lines[at:end + 1])
        named = set(_WRAPPER.findall(call))
        if not named:
            names = set(re.findall(r"[A-Za-z_]\w*", call))
            for line in reversed(lines[max(0, at - 8):at]):
                m = _WRAPPER_LOCAL.search(line)
                if m and m.group(2) in names:
                    named.add(m.group(1))
                    break
        found |= named
    return found


def callee_name(call: str) -> str:
    """`F.gelu(x, ...)` -> 'F.gelu'; `nn.LSTM(64, 128)(x)` -> 'nn.LSTM'."""
    return re.match(r"\s*([A-Za-z_][\w.]*)", call).group(1)


def first_dtype(call: str) -> str:
    m = re.search(r"dtype=torch\.(\w+)", call)
    return m.group(1) if m else "float32"


class CallTracer:
    """Traces a call string with the library; where the library cannot read calls, the callee's name."""

    def __init__(self, db: str, build: dict):
        import opindex  # noqa: PLC0415
        self.ix, self.build = opindex.Index(db), build

    def trace(self, call: str) -> tuple[dict, str]:
        try:
            d = self.ix.trace(call, device="cuda", **self.build).to_dict()
            if d.get("hops"):
                return d, "call"
        except Exception:  # noqa: BLE001 - this opindex cannot read calls: trace the name
            pass
        try:
            return (self.ix.trace(callee_name(call), device="cuda", dtype=first_dtype(call), **self.build).to_dict(),
                    "name")
        except Exception as e:  # noqa: BLE001 - an unknown name is a result
            return {"hops": [], "error": f"{type(e).__name__}: {e}"}, "name"


def end_hits(end: dict | None, kernels: list[dict]) -> dict | None:
    """The ran kernel the main chain's end names, or None."""
    if not end or end.get("absent"):
        return None
    if end.get("layer") == "library":
        lib = (end.get("kind") or "").lower()
        return next((k for k in kernels if k["kind"] == "library" and lib in LIBRARY_ALIASES.get(k["target"],
                                                                                              {k["target"]})), None)
    names = {norm_name(end.get("name") or ""), norm_name(end.get("kernel") or "")} - {""}
    found = next((k for k in kernels if k["kind"] == "source" and k["target"] in names), None)
    if found is None and "<N>" in (end.get("kernel") or ""):  # a jitted kernel of the run's vector size
        from opindex.pytorch.jiterator import matches  # noqa: PLC0415
        found = next((k for k in kernels if k["kind"] == "source" and matches(end["kernel"], k["target"])), None)
    return found


def chain_names(tr: dict) -> set[str]:
    by_id = {h.get("id"): h for h in tr.get("hops", [])}
    return {norm_name(by_id[i].get("name") or "") for i in tr.get("main_chain") or [] if i in by_id}


def open_names_it(tr: dict, kernels: list[dict]) -> bool:
    """An unsettled choice on the trace, and a ran kernel named somewhere in it."""
    if not any(not c.get("settled", True) for c in tr.get("choices") or []):
        return False
    return any(end_hits(h, kernels) for h in tr.get("hops", []))


def end_kernel(end: dict | None) -> str | None:
    """The bare name of the `__global__` a main chain ends at (a kernel hop, or the kernel a launch names), else
    None (a library call, a launcher, no end)."""
    if not end or end.get("layer") == "library":
        return None
    if (end.get("name") or "").startswith("__global__") or end.get("kind") in ("global_kernel", "launch"):
        return norm_name(end.get("kernel") or end.get("name") or "") or None
    return None


def score(tracer: CallTracer, calls: list[dict], con, built: set[str] | None = None) -> list[dict]:
    def in_index(name: str) -> bool:
        return con.execute("SELECT 1 FROM symbols WHERE kind = 'global_kernel' AND name = ? LIMIT 1",
                           (name,)).fetchone() is not None

    rows = []
    for c in calls:
        kernels = ran_kernels(c)
        row = {"call": c["call"], "chooses": c.get("chooses"), "ran": [k["target"] for k in kernels]}
        if c.get("error") or not kernels:
            row["status"] = "not-run"
            rows.append(row)
            continue
        t0 = time.perf_counter()
        tr, how = tracer.trace(c["call"])
        row.update(traced=how, seconds=round(time.perf_counter() - t0, 3))
        end = main_chain_end(tr)
        row["end"] = None if end is None else f"{end.get('name')} {end.get('file')}:{end.get('line')}"
        hit = end_hits(end, kernels)
        if hit:
            row["status"] = "hit"
            row["functor"] = hit["functor"] is None or hit["functor"] in chain_names(tr)
            if hit["wrapper"]:  # the chain's launch passes the wrapper that ran (None: it names none)
                wrappers = chain_wrappers(tr)
                row["wrapper"] = (hit["wrapper"] in wrappers) if wrappers else None
        elif all(k["kind"] == "source" and not in_index(k["target"]) for k in kernels):
            row["status"] = "absent"
        elif built and end_kernel(end) and end_kernel(end) not in built:
            row["status"] = "differs"  # the tree's own kernel: the profiled build has no such kernel
            row["open"] = open_names_it(tr, kernels)
        elif open_names_it(tr, kernels):
            row["status"] = "open"
        elif unbuildable(tr):
            row["status"] = "miss"
            row["unbuildable"] = True  # the trace says this build lacks the code the call takes
        else:
            row["status"] = "miss"
        rows.append(row)
    return rows


def report(rows: list[dict], verbose: bool) -> dict:
    scored = [r for r in rows if r["status"] in ("hit", "open", "miss")]
    hits = [r for r in scored if r["status"] == "hit"]
    chooses = [r for r in scored if r["chooses"] in ("argument", "dtype")]
    pct = lambda a, b: round(100.0 * a / b, 1) if b else 0.0  # noqa: E731
    for r in rows:
        if verbose or r["status"] != "hit" or not r.get("functor", True) or r.get("wrapper") is False:
            mark = r["status"] + ("" if r.get("functor", True) else " (functor not on the chain)") + (
                " (another functor wrapper)" if r.get("wrapper") is False else "") + (
                " (build lacks it)" if r.get("unbuildable") else "")
            print(f"{mark:<34} {r['call'][:70]}\n{'':34} ended at {r.get('end')}; ran {', '.join(r['ran'][:4])}")
    differs = [r for r in rows if r["status"] == "differs"]
    out = {"calls": len(rows), "scored": len(scored), "hit": len(hits), "percent": pct(len(hits), len(scored)),
           "differs": [r["call"] for r in differs],
           "percent_with_differs": pct(len(hits), len(scored) + len(differs)),
           "functor": sum(1 for r in hits if r.get("functor")),
           "wrapper": {"ran": sum(1 for r in hits if "wrapper" in r),
                       "named": sum(1 for r in hits if r.get("wrapper") is not None),
                       "right": sum(1 for r in hits if r.get("wrapper"))},
           "open": sum(1 for r in scored if r["status"] == "open"),
           "unbuildable": sum(1 for r in scored if r.get("unbuildable")),
           "absent": [r["call"] for r in rows if r["status"] == "absent"],
           "chooses": {"scored": len(chooses), "hit": sum(1 for r in chooses if r["status"] == "hit")},
           "traced_as_name": sum(1 for r in rows if r.get("traced") == "name")}
    print(f"\nmain chain ends at a kernel that ran: {out['hit']}/{out['scored']} = {out['percent']}% "
          f"(target >= 90%); through the functor's function: {out['functor']}; open decisions naming one: "
          f"{out['open']}; misses where the trace says this build lacks the code the call takes: "
          f"{out['unbuildable']}; version differences (not scored): {len(out['absent'])} where the tree lacks "
          f"every kernel that ran, {len(differs)} where the chain ends at a kernel the profiled build does not "
          f"contain ({sum(1 for r in differs if r['open'])} of them with an open decision naming a ran kernel); "
          f"counted as misses: {out['hit']}/{len(scored) + len(differs)} = {out['percent_with_differs']}%")
    w = out["wrapper"]
    print(f"binary functor wrappers (AUnary/BUnary/BinaryFunctor) of the hits: {w['ran']} ran one, the chain's "
          f"launch names one for {w['named']}, the one that ran for {w['right']}")
    print(f"calls where an argument or the dtype chooses: {out['chooses']['hit']}/{out['chooses']['scored']}; "
          f"traced by name only (the call not read): {out['traced_as_name']}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--record", type=Path, default=RECORD)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("-U", dest="undefines", action="append", default=[])
    ap.add_argument("--kernels", type=Path, default=KERNELS,
                    help="the profiled build's kernel names (benchmarks/kernel_names.py); 'none' to not read one")
    ap.add_argument("--json", type=Path)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    record = json.loads(a.record.read_text())
    print(f"{a.record.name}: {record['meta']}")
    build = {k: v for k, v in (("defines", a.defines), ("undefines", a.undefines)) if v}
    con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    built = None
    if str(a.kernels) != "none" and a.kernels.exists():
        listed = json.loads(a.kernels.read_text())
        built = set(listed["bare_names"])
        print(f"{a.kernels.name}: torch {listed['torch']}, {listed['kernels']} kernels, {len(built)} names")
    rows = score(CallTracer(a.db, build), record["calls"], con, built)
    out = report(rows, a.verbose)
    if a.json:
        a.json.write_text(json.dumps({"meta": record["meta"], "summary": out, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
