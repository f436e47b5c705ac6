"""The registry diff of two trees computed independently (pyyaml alone, no opindex code) and checked against
`opindex diff`'s, entry for entry; and the diff's speed, side by side with that baseline.

    python benchmarks/registry_diff.py A.sqlite B.sqlite [--rounds 5] [--ops relu,add,...] [--out FILE.json]

A and B are indexes built by `opindex build`; the trees are the checkouts they record. The rules are docs/diff.md's,
written again here from the YAML: full names, renames (same schema after the name, names alike), fields changed
(schema arguments and returns, dispatch keys and kernels with 1.8's Math/DefaultBackend read as today's names,
structured, ufunc, composite, variants), derivatives (schema, output_differentiability, formulas per inputs).
Exit 0 when both agree on every entry, 1 with the differences listed otherwise.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import yaml

ALIASES = {"Math": "CompositeImplicitAutograd", "DefaultBackend": "CompositeExplicitAutograd"}
COMPOSITES = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
NATIVE = "aten/src/ATen/native/native_functions.yaml"
DERIVATIVES = "tools/autograd/derivatives.yaml"
OPS = ["relu", "add", "mm", "nn.LSTM", "F.layer_norm", "F.softmax", "F.cross_entropy", "F.conv2d", "nn.Linear",
       "F.gelu"]


def load(path: Path) -> list[dict]:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def collapse(text) -> str:
    return " ".join(str(text).split())


def split_args(text: str) -> list[str]:
    """Top-level commas of an argument list (brackets: (), [])."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def head_and_tail(schema: str) -> tuple[str, list[str], str]:
    """(name.overload, arguments with kwarg-only ones marked `* `, returns) of a schema."""
    text = collapse(schema)
    m = re.match(r"([\w.]+)\((.*)\) -> (.*)$", text) or re.match(r"([\w.]+)\((.*)\)()$", text)
    args, star = [], False
    for a in (x.strip() for x in split_args(m.group(2))):
        if a == "*":
            star = True
        elif a:
            args.append(("* " if star else "") + a)
    return m.group(1), args, m.group(3).strip()


def is_out(args: list[str]) -> bool:
    return any(a.startswith("* ") and "!" in a[2:].split(" ")[0] for a in args)


def native(path: Path) -> dict[str, dict]:
    out = {}
    for e in load(path):
        full, args, returns = head_and_tail(e["func"])
        base = full.split(".")[0]
        table = {}
        if e.get("dispatch") is not None:  # (`dispatch: {}` is no row at all, as in torchgen)
            for keys, kernel in e["dispatch"].items():
                for k in str(keys).split(","):
                    table[ALIASES.get(k.strip(), k.strip())] = str(kernel)
        elif not e.get("structured_delegate"):
            table["CompositeImplicitAutograd"] = base + ("_out" if is_out(args) else "")
        if e.get("ufunc_inner_loop"):
            table.update({k: f"ufunc_{base}_{k}" for k in ("CPU", "CUDA")})
        variants = e.get("variants", "function")
        out[full] = {"args": args, "returns": returns, "dispatch": table,
                     "structured": "structured" if e.get("structured") else
                     f"structured_delegate: {e['structured_delegate']}" if e.get("structured_delegate")
                     else "not structured",
                     "ufunc": "; ".join(f"{k}: {v}" for k, v in e["ufunc_inner_loop"].items())
                     if e.get("ufunc_inner_loop") else None,
                     "composite": next((k for k in COMPOSITES if k in table), None),
                     "variants": ", ".join(p.strip() for p in (variants if isinstance(variants, list)
                                                               else str(variants).split(",")))}
    return out


def arg_name(a: str) -> str:
    return a.split("=", 1)[0].split()[-1]


def native_changes(x: dict, y: dict) -> dict:
    out = {}
    if (x["args"], x["returns"]) != (y["args"], y["returns"]):
        ax, ay = {arg_name(a): a for a in x["args"]}, {arg_name(a): a for a in y["args"]}
        out["schema"] = {"added": sorted(ay[n] for n in ay if n not in ax),
                         "removed": sorted(ax[n] for n in ax if n not in ay),
                         "changed": sorted(n for n in ax if n in ay and ax[n] != ay[n]),
                         "returns": x["returns"] != y["returns"]}
    if x["dispatch"] != y["dispatch"]:
        dx, dy = x["dispatch"], y["dispatch"]
        out["dispatch"] = {"gained": sorted(set(dy) - set(dx)), "lost": sorted(set(dx) - set(dy)),
                           "kernels": sorted(k for k in set(dx) & set(dy) if dx[k] != dy[k])}
    for f in ("structured", "ufunc", "composite", "variants"):
        if x[f] != y[f]:
            out[f] = [x[f], y[f]]
    return out


def native_diff(a: dict, b: dict) -> dict:
    removed, added = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    options = []
    for r in removed:
        for n in added:
            if (a[r]["args"], a[r]["returns"]) == (b[n]["args"], b[n]["returns"]):
                ratio = difflib.SequenceMatcher(None, r, n).ratio()
                if ratio >= 0.6:
                    options.append((-ratio, r, n))
    pairs, used_a, used_b = [], set(), set()
    for _, r, n in sorted(options):
        if r not in used_a and n not in used_b:
            used_a.add(r)
            used_b.add(n)
            pairs.append((r, n))
    changed = {n: native_changes(a[n], b[n]) for n in set(a) & set(b)}
    return {"added": sorted(set(added) - used_b), "removed": sorted(set(removed) - used_a),
            "renamed": sorted(pairs), "changed": {n: c for n, c in changed.items() if c}}


def derivatives(path: Path) -> dict[str, dict]:
    out = {}
    for e in load(path):
        full, args, returns = head_and_tail(e["name"])
        formulas = {k: collapse(v) for k, v in e.items() if k not in ("name", "output_differentiability", "dispatch")}
        for key, section in (e.get("dispatch") or {}).items():
            if isinstance(section, dict):
                # a formula of the dispatch: section's Default is the entry's own (docs/diff.md)
                formulas.update({(k if key == "Default" else f"{key}: {k}"): collapse(v) for k, v in section.items()
                                 if k not in ("name", "output_differentiability", "dispatch")})
        od = e.get("output_differentiability")
        out[full] = {"schema": (args, returns), "od": od, "formulas": formulas}
    return out


def derivative_diff(a: dict, b: dict) -> dict:
    changed = {}
    for n in set(a) & set(b):
        x, y, c = a[n], b[n], {}
        if x["schema"] != y["schema"]:
            c["schema"] = True
        if x["od"] != y["od"]:
            c["output_differentiability"] = True
        fx, fy = x["formulas"], y["formulas"]
        if fx != fy:
            c["formulas"] = {"added": sorted(set(fy) - set(fx)), "removed": sorted(set(fx) - set(fy)),
                             "changed": sorted(k for k in set(fx) & set(fy) if fx[k] != fy[k])}
        if c:
            changed[n] = c
    return {"added": sorted(set(b) - set(a)), "removed": sorted(set(a) - set(b)), "changed": changed}


# -- opindex's answer, in the same shape ---------------------------------------------------------------------------
def opindex_native(ops: dict) -> dict:
    def fields(c):
        out = {}
        if "schema" in c:
            s = c["schema"]["arguments"]
            out["schema"] = {"added": sorted(s["added"]), "removed": sorted(s["removed"]),
                             "changed": sorted(x["name"] for x in s["changed"]), "returns": "returns" in c["schema"]}
        if "dispatch" in c:
            d = c["dispatch"]
            out["dispatch"] = {"gained": d["gained"], "lost": d["lost"], "kernels": sorted(d["kernels"])}
        out.update({f: [c[f]["a"], c[f]["b"]] for f in ("structured", "ufunc", "composite", "variants") if f in c})
        return out
    return {"added": sorted(ops["added"]), "removed": sorted(ops["removed"]),
            "renamed": sorted((r["from"], r["to"]) for r in ops["renamed"]),
            "changed": {n: fields(c) for n, c in ops["changed"].items()}}


def opindex_derivatives(d: dict) -> dict:
    def fields(c):
        out = {k: True for k in ("schema", "output_differentiability") if k in c}
        if "formulas" in c:
            f = c["formulas"]
            out["formulas"] = {"added": sorted(f["added"]), "removed": sorted(f["removed"]),
                               "changed": sorted(f["changed"])}
        return out
    return {"added": sorted(d["added"]), "removed": sorted(d["removed"]),
            "changed": {n: fields(c) for n, c in d["changed"].items()}}


def disagreements(mine: dict, theirs: dict, what: str) -> list[str]:
    out = []
    for key in ("added", "removed", "renamed"):
        if key in mine and mine[key] != theirs[key]:
            extra, missing = set(map(str, theirs[key])) - set(map(str, mine[key])), \
                set(map(str, mine[key])) - set(map(str, theirs[key]))
            out.append(f"{what} {key}: opindex only {sorted(extra)[:5]}, pyyaml only {sorted(missing)[:5]}")
    for n in sorted(set(mine["changed"]) | set(theirs["changed"])):
        if mine["changed"].get(n) != theirs["changed"].get(n):
            out.append(f"{what} changed {n}: pyyaml {mine['changed'].get(n)} != opindex {theirs['changed'].get(n)}")
    return out


def root_of(db: str) -> Path:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return Path(con.execute("SELECT value FROM meta WHERE key = 'checkout_root'").fetchone()[0])
    finally:
        con.close()


def timed(fn, rounds: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ops", default=",".join(OPS), help="ops timed one by one (comma-separated)")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import opindex
    ra, rb = root_of(args.a), root_of(args.b)

    def baseline():
        return (native_diff(native(ra / NATIVE), native(rb / NATIVE)),
                derivative_diff(derivatives(ra / DERIVATIVES), derivatives(rb / DERIVATIVES)))
    base_times, (mine_ops, mine_der) = timed(baseline, args.rounds)

    def whole():  # a fresh pair of indexes each round: what one `opindex diff A B` does, less the interpreter
        with opindex.Index(args.a) as ia:
            return ia.diff(args.b)
    diff_times, d = timed(whole, args.rounds)
    wrong = disagreements(mine_ops, opindex_native(d.ops), "ops") + \
        disagreements(mine_der, opindex_derivatives(d.derivatives), "derivatives")
    op_cold, op_warm, trace_pairs = [], [], []
    names = [n for n in args.ops.split(",") if n]
    with opindex.Index(args.a) as ia, opindex.Index(args.b) as ib:
        for name in names:  # the first diff of each op in this process, then again (its traces kept)
            op_cold.append(timed(lambda: ia.diff(ib, [name]), 1)[0][0])
            op_warm.append(statistics.median(timed(lambda: ia.diff(ib, [name]), args.rounds)[0]))
            trace_pairs.append(statistics.median(timed(lambda: (ia.trace(name), ib.trace(name)), args.rounds)[0]))
    report = {
        "a": str(ra), "b": str(rb),
        "ops": {k: len(v) for k, v in mine_ops.items()}, "derivatives": {k: len(v) for k, v in mine_der.items()},
        "agree": not wrong, "disagreements": wrong[:50],
        "baseline_pyyaml_s": statistics.median(base_times),
        "opindex_whole_diff_s": statistics.median(diff_times), "opindex_whole_diff_max_s": max(diff_times),
        "ratio_to_baseline": statistics.median(diff_times) / statistics.median(base_times),
        "op_diff_first_s": dict(zip(names, op_cold)), "op_diff_again_s": dict(zip(names, op_warm)),
        "op_diff_first_p50_s": statistics.median(op_cold), "op_diff_first_max_s": max(op_cold),
        "op_diff_again_p50_s": statistics.median(op_warm),
        "op_diff_to_two_traces": statistics.median(op_warm) / statistics.median(trace_pairs),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0 if not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
