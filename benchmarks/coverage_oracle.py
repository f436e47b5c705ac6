"""`opindex coverage` against the dispatcher of a real torch build, per (operator overload, dispatch key).

    # 1. in a venv holding the torch wheel of the checkout's version (no opindex needed there):
    /work/venv-torch240/bin/python benchmarks/coverage_oracle.py dump --out /tmp/dispatcher-2.4.json
    # 2. with opindex, against an index of that checkout:
    python benchmarks/coverage_oracle.py compare /tmp/dispatcher-2.4.json --db pt24.sqlite [--out result.json]

The dump reads, for every op the dispatcher knows (torch._C._dispatch_get_all_op_names()), the computed table
(torch._C._dispatch_dump_table: per runtime key the kind of kernel it runs and the file:line that registered it)
and the registrations of the alias keys (torch._C._dispatch_dump: `CompositeImplicitAutograd[alias]: ...`).

The comparison maps both sides onto one vocabulary per (op, key): kernel (the key's own kernel; opindex's
`inherited` through a structured delegate is one too, since codegen registers the functional op's kernel for every
key its .out has), composite_explicit (the dispatcher's "default backend kernel"), composite_implicit ("math
kernel"), fallback ("backend fallback"), missing (no entry). For the alias keys CompositeImplicitAutograd and
CompositeExplicitAutograd: registered or not. Every disagreement is listed with the reason the script can tell
(a Python registration the source holds in torch/*.py, an op opindex does not know, ...). The results go to --out
(benchmarks/results/ is not committed: docs/coverage.md and benchmarks/results/HISTORY.md keep the figures).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

# the keys the targets are measured on; the rest are reported too
TARGET_KEYS = ("CPU", "CUDA", "Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd", "QuantizedCPU",
               "SparseCPU", "SparseCUDA", "NestedTensorCUDA")
ALIAS_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
              "CompositeImplicitAutogradNestedTensor")
KIND = {"kernel": "kernel", "default backend kernel": "composite_explicit", "math kernel": "composite_implicit",
        "nested kernel": "composite_implicit", "backend fallback": "fallback", "autograd kernel": "kernel"}
_TABLE_LINE = re.compile(r"^(\w+): (fallthrough )?registered at (.*?):(\d+) \[(.+)\]$")
_DUMP_LINE = re.compile(r"^(\w+)(\[alias\])?( \(inactive\))?: registered at (.*?):(\d+) ::")


# -- dump (runs where torch is installed) --------------------------------------------------------------------------
def dump(out: Path) -> None:
    import torch
    started = time.perf_counter()
    ops = {}
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        table, alias, inactive = {}, {}, {}
        for line in torch._C._dispatch_dump_table(name).splitlines():
            m = _TABLE_LINE.match(line.strip())
            if m:
                key, fallthrough, path, lineno, kind = m.groups()
                table[key] = {"kind": kind, "file": path, "line": int(lineno), "fallthrough": bool(fallthrough)}
        for line in torch._C._dispatch_dump(name).splitlines():
            m = _DUMP_LINE.match(line.strip())
            if m:
                key, is_alias, is_inactive, path, lineno = m.groups()
                if is_inactive:
                    inactive[key] = {"file": path, "line": int(lineno)}
                elif is_alias:
                    alias[key] = {"file": path, "line": int(lineno)}
        ops[name] = {"table": table, "alias": alias, "inactive": inactive}
    packaged = Path(torch.__file__).parent.parent / "torchgen/packaged/ATen/native/native_functions.yaml"
    out.write_text(json.dumps({"torch": torch.__version__, "ops": ops,
                               "seconds": round(time.perf_counter() - started, 1),
                               "native_functions": packaged.read_text() if packaged.is_file() else None}))
    print(f"{len(ops)} ops of torch {torch.__version__} -> {out}")


# -- compare (runs with opindex) -------------------------------------------------------------------------------------
def truth_of(entry: dict | None, key: str) -> str:
    """The dispatcher's status of one (op, key) in opindex's words."""
    if entry is None:
        return "unknown"
    if key in ALIAS_KEYS:
        if key not in entry["alias"]:
            return "missing"
        return "composite_implicit" if "Implicit" in key else "composite_explicit"
    found = entry["table"].get(key)
    return KIND.get(found["kind"], found["kind"]) if found else "missing"


def mine_of(status: str) -> str:
    # codegen registers a structured delegate's kernel for each key of its .out: the dispatcher files it as the key's
    return "kernel" if status == "inherited" else status


def reason(op: str, key: str, mine: str, truth: str, entry: dict | None, row: dict | None) -> str:
    """Why opindex and the dispatcher differ on one (op, key), as far as the two sides tell."""
    where = (entry or {}).get("table", {}).get(key) or (entry or {}).get("alias", {}).get(key) or {}
    if row is None:
        ns = op.partition("::")[0]
        if ns == "prims":
            return "op defined in Python (torch/_prims: torch.library at import), not in the index"
        return f"op unknown to the index ({ns}: its TORCH_LIBRARY block was not read, or it is defined in Python)"
    if where.get("file") == "/dev/null":
        return "a Python registration at import time (torch.library / activate_meta) opindex does not model"
    if mine == "kernel" and row.get("via") == "registration" and truth in ("missing", "composite_explicit",
                                                                        "composite_implicit", "fallback"):
        return f"registered in {row['file']}, which this build does not compile (or under a macro it leaves out)"
    if mine == "kernel" and row.get("via") == "python" and truth != "kernel":
        return "a Python Meta function opindex counts that activate_meta skips (its exclusion list, or a view)"
    if truth == "kernel" and mine == "fallback" and str(where.get("file", "")).endswith("RegisterMeta.cpp"):
        return "a Meta kernel torchgen generates for an entry that names no Meta key, which neither the structured " \
               "nor the in-place rule gives (docs/coverage.md, The Meta key)"
    if truth == "kernel" and str(where.get("file", "")).startswith("../"):
        return f"a registration in {where['file'].removeprefix('../')}:{where['line']} the index does not hold " \
               f"(a macro-generated or token-pasted TORCH_LIBRARY_IMPL)"
    return f"opindex {mine}, dispatcher {truth} ({where.get('kind', 'no entry')} at " \
           f"{where.get('file', '-')}:{where.get('line', '-')})"


def compare(dump_path: Path, db: str, keys=TARGET_KEYS + ("MPS", "XPU", "QuantizedCUDA", "SparseCsrCPU",
                                                         "SparseCsrCUDA", "NestedTensorCPU", "PrivateUse1")) -> dict:
    from opindex.api import Index
    dump_data = json.loads(dump_path.read_text())
    truth = dump_data["ops"]
    with Index(db) as ix:
        started = time.perf_counter()
        cov = ix.coverage(keys)
        seconds = time.perf_counter() - started
        version = ix.meta.get("pytorch_version")
    mine = {(r["op"], r["key"]): r for r in cov.rows}
    per_key, disagreements = {}, defaultdict(list)
    known = {op for op in truth if (op, keys[0]) in mine}
    for key in keys:
        agree = agree_known = 0
        for op in sorted(truth):
            row = mine.get((op, key))
            m = mine_of(row["status"]) if row else "unknown"
            t = truth_of(truth[op], key)
            if m == t:
                agree += 1
                agree_known += op in known
            else:
                disagreements[key].append({"op": op, "opindex": row["status"] if row else "unknown",
                                           "dispatcher": t, "reason": reason(op, key, m, t, truth[op], row)})
        per_key[key] = {"agree": agree, "total": len(truth), "percent": round(100 * agree / len(truth), 2),
                        "agree_known": agree_known, "known": len(known),
                        "percent_known": round(100 * agree_known / max(len(known), 1), 2)}
    ours = {r["op"] for r in cov.rows}
    extra = sorted(ours - set(truth))
    return {"torch": dump_data["torch"], "index": db, "index_version": version, "ops": len(truth),
            "opindex_ops": cov.ops, "coverage_seconds": round(seconds, 2), "per_key": per_key,
            "opindex_only": [{"op": op, "defined_at": next((f"{r['file']}:{r['line']}" for r in cov.rows
                                                            if r["op"] == op and r["file"]
                                                            and r["via"] != "m.fallback"), None)} for op in extra],
            "fork_yaml": fork_yaml(dump_data.get("native_functions"), db),
            "registrations": registration_lines(truth, db),
            "registrations_every_key": {k: v for k, v in registration_lines(truth, db, False).items()
                                        if k != "differ"}, "reasons": {
                k: Counter(_family(d["reason"]) for d in v).most_common() for k, v in disagreements.items()},
            "disagreements": disagreements}


def fork_yaml(packaged: str | None, db: str) -> dict | None:
    """Where the checkout's native_functions.yaml differs from the one the wheel was built from (torchgen/packaged):
    entries added, removed, or with other dispatch rows. None when the dump has no packaged YAML."""
    if not packaged:
        return None
    import sqlite3

    import yaml
    wheel = {}
    for e in yaml.safe_load(packaged):
        name = e["func"].split("(", 1)[0]
        wheel[name] = sorted(f"{k.strip()}: {v}" for keys, v in (e.get("dispatch") or {}).items()
                             for k in str(keys).split(","))
    con = sqlite3.connect(db)
    mine = defaultdict(list)
    for name, key, kernel, implicit in con.execute(
            "SELECT n.full_name, d.dispatch_key, d.kernel, d.implicit FROM native_functions n "
            "LEFT JOIN native_dispatch d ON d.native_function_id = n.id"):
        if key is not None and not implicit:
            mine[name].append(f"{key}: {kernel}")
        else:
            mine.setdefault(name, [])
    mine = {k: sorted(v) for k, v in mine.items()}
    return {"added": sorted(set(mine) - set(wheel)), "removed": sorted(set(wheel) - set(mine)),
            "dispatch_changed": sorted(n for n in set(mine) & set(wheel) if mine[n] != wheel[n])}


def _family(text: str) -> str:
    """A reason without its file:line, for counting."""
    return re.sub(r"\S+\.(cpp|cu|mm|h|py):\d+|\S+/\S+", "FILE", text)


def registration_lines(truth: dict, db: str, backend_only: bool = True) -> dict:
    """The dispatcher's manual registrations against opindex's, each counted once: a kernel (or alias kernel)
    registered for an (op, key) from a source file (not generated code, not Python), and a backend fallback per
    (key, file:line). Equal: same file and the line of the TORCH_LIBRARY block (where the dispatcher records it).
    `backend_only`: the keys coverage reports (backend keys and the composite alias keys), not the functionality
    keys (Tracer, Autocast, FuncTorchBatched, ...), and no file the build generates (torch/csrc/autograd/generated)."""
    from opindex.pytorch.dispatch_keys import is_runtime_backend
    import sqlite3

    from opindex.coverage import facts, registrations
    con = sqlite3.connect(db)
    calls, _ = registrations.library_calls(facts.library_blocks(con), facts.library_calls(con))
    mine, fallbacks = defaultdict(set), defaultdict(set)
    for c in calls:
        (fallbacks[c.key] if c.method == "fallback" else mine[(c.op, c.key)]).add((c.file, c.block_line))
    wanted = {}
    for op, entry in truth.items():
        for key, e in list(entry["table"].items()) + list(entry["alias"].items()):
            if not str(e["file"]).startswith("../") or e.get("kind") not in (None, "kernel", "backend fallback"):
                continue
            if backend_only and ("/generated/" in e["file"] or not (is_runtime_backend(key) or key in ALIAS_KEYS)):
                continue
            where = (e["file"].removeprefix("../"), e["line"])
            if e.get("kind") == "backend fallback":
                wanted[("fallback", key, where)] = where in fallbacks[key]
            else:
                wanted[(op, key, where)] = where in mine.get((op, key), set())
    differ = [{"op": op, "key": key, "dispatcher": f"{w[0]}:{w[1]}",
               "opindex": sorted(f"{f}:{n}" for f, n in (fallbacks[key] if op == "fallback" else
                                                         mine.get((op, key), set())))}
              for (op, key, w), same in sorted(wanted.items()) if not same]
    same = sum(wanted.values())
    return {"same": same, "total": len(wanted), "percent": round(100 * same / max(len(wanted), 1), 2),
            "differ": differ}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="dump the dispatcher of the torch in this Python")
    d.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare", help="compare a dump with `opindex coverage` of an index")
    c.add_argument("dump", type=Path)
    c.add_argument("--db", required=True)
    c.add_argument("--out", type=Path, default=None, help="write the whole result (every disagreement) as JSON")
    args = p.parse_args(argv)
    if args.cmd == "dump":
        dump(args.out)
        return 0
    result = compare(args.dump, args.db)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"torch {result['torch']} vs index {result['index']} (PyTorch {result['index_version']}): "
          f"{result['ops']} dispatcher ops, {result['opindex_ops']} opindex ops, coverage in "
          f"{result['coverage_seconds']} s")
    for key, r in result["per_key"].items():
        mark = "" if key not in TARGET_KEYS else ("  target >= 99%: met" if r["percent"] >= 99 else
                                                  "  target >= 99%: NOT met")
        print(f"  {key:28} {r['agree']:5}/{r['total']}  {r['percent']:6.2f}%   over the ops opindex knows: "
              f"{r['agree_known']:5}/{r['known']}  {r['percent_known']:6.2f}%{mark}")
        for family, n in result["reasons"].get(key, [])[:6]:
            print(f"      {n:5}  {family}")
    print(f"  ops opindex lists that the dispatcher does not know: {len(result['opindex_only'])}")
    for e in result["opindex_only"][:40]:
        print(f"      {e['op']}  ({e['defined_at']})")
    if result["fork_yaml"] is not None:
        f = result["fork_yaml"]
        print(f"  the checkout's native_functions.yaml against the wheel's: added {f['added']}, removed "
              f"{f['removed']}, other dispatch rows {f['dispatch_changed']}")
    if "+cpu" in result["torch"]:
        print("  note: a CPU-only wheel registers no CUDA kernels: its CUDA keys show what a CPU build dispatches")
    reg = result["registrations"]
    print(f"  manual registrations of backend and composite keys, file:line equal to the dispatcher's: "
          f"{reg['same']}/{reg['total']} ({reg['percent']}%)")
    for d in reg["differ"][:20]:
        print(f"      {d['op']} {d['key']}: dispatcher {d['dispatcher']}, opindex {', '.join(d['opindex']) or '-'}")
    every = result["registrations_every_key"]
    print(f"  (every key, functionality keys and generated files too: {every['same']}/{every['total']}, "
          f"{every['percent']}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
