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
(a Python registration the source holds in torch/*.py, an op opindex does not know, ...).
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
    out.write_text(json.dumps({"torch": torch.__version__, "ops": ops,
                               "seconds": round(time.perf_counter() - started, 1)}))
    print(f"{len(ops)} ops of torch {torch.__version__} -> {out}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="dump the dispatcher of the torch in this Python")
    d.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if args.cmd == "dump":
        dump(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
