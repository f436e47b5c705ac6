#!/usr/bin/env python3
"""Profile attribution truth (issue 28, point 7): is each kernel tied to the op that really launched it?

A torch.profiler trace says, for every kernel launch, which aten ops were open on the launching thread (the
innermost and the outermost).  `opindex profile` answers each kernel name with a chain that ends at a dispatch row
or native function.  A row is:

  right      the chain's op is the profile's innermost or outermost op, or an in-place/out twin of it
             (add_ / add / add.out)
  wrong      the chain names an op the profile does not: a wrong attribution
  no op      the kernel is in the checkout but the chain reaches no op (a function-pointer launch with no caller)
  unscored   memcpy/memset (no source), kernels the checkout does not have (another version), triton kernels

Targets: 0 wrong; right >= 98% of the scored GPU time.

usage:
  python benchmarks/profile_truth.py --db /tmp/pt24.sqlite [PROFILE] [-v]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

DEFAULT_PROFILE = Path(os.environ.get("OPINDEX_SHARED", "/work/shared")) / \
    "fixtures/profiles/train_step_h200_torch2.11.json.gz"


def op_base(name: str | None) -> str:
    """aten::add_.Tensor -> add; add.out -> add."""
    return re.sub(r"^aten::", "", name or "").split(".")[0].rstrip("_")


def chain_ops(chain: list[dict]) -> list[str]:
    return [h["name"] for h in chain if h["layer"] in ("native", "dispatch")]


def verdict(row: dict) -> str:
    if row["status"] in ("runtime", "not in this checkout", "generated at run time") or not row.get("chain"):
        return "unscored" if row["status"] != "attributed" and row["status"] != "library" else "no op"
    ops = chain_ops(row["chain"])
    if not ops:
        return "no op"
    profile = {op_base(row.get("op")), op_base(row.get("outer_op"))} - {""}
    return "right" if op_base(ops[-1]) in profile else "wrong"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile", nargs="?", type=Path, default=DEFAULT_PROFILE)
    ap.add_argument("--db", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    import opindex  # noqa: PLC0415
    from opindex.profile.report import row_dict  # noqa: PLC0415 - the JSON shape of a row (docs/json.md)
    rows = [row_dict(r) for r in opindex.Index(a.db).profile(str(a.profile))]
    time: dict[str, float] = {}
    for r in rows:
        v = verdict(r)
        time[v] = time.get(v, 0.0) + r["gpu_us"]
        if v in ("wrong", "no op") or a.verbose:
            print(f"{v:<9} {r['gpu_us']:8.1f} us  {r['short'][:60]:<60} profile {r.get('op')} -> "
                  f"{(chain_ops(r.get('chain') or []) or ['-'])[-1]}")
    scored = sum(time.get(k, 0.0) for k in ("right", "wrong", "no op"))
    pct = 100.0 * time.get("right", 0.0) / scored if scored else 0.0
    print(f"\n{a.profile.name}: {len(rows)} kernel names, {sum(time.values()):.1f} us of GPU time; scored "
          f"{scored:.1f} us: right {time.get('right', 0.0):.1f} us = {pct:.1f}% (target >= 98%), wrong "
          f"{time.get('wrong', 0.0):.1f} us (target 0), no op {time.get('no op', 0.0):.1f} us; unscored "
          f"{time.get('unscored', 0.0):.1f} us (memcpy/memset, kernels not in this checkout)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
