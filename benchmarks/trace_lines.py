"""How long the text of a trace is: the default view against every hop, per op (issue 15: the default text of
nn.LSTM, F.scaled_dot_product_attention and nn.MultiheadAttention fits in 60 lines with nothing silently dropped).

    python benchmarks/trace_lines.py [--db INDEX] [--width 120] [NAME ...]

Prints per name: the hops of the trace, the lines of the default text, of --tree and of --full, how many branch
lines were folded into a count ("… and N more branches"), whether a cap cut the walk, and where the main chain ends.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opindex.api import Index  # noqa: E402

NAMES = ["nn.LSTM", "F.scaled_dot_product_attention", "nn.MultiheadAttention", "F.layer_norm", "F.interpolate",
         "F.conv2d", "torch.mm", "relu", "vectorized_elementwise_kernel"]
SCREEN = 60


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None, help="index (default: opindex's default)")
    ap.add_argument("--width", type=int, default=None, help="a terminal width to cut names at (default: none)")
    ap.add_argument("names", nargs="*", default=NAMES)
    args = ap.parse_args()
    over = 0
    with Index(args.db) as ix:
        print(f"{'name':<34} {'hops':>5} {'default':>7} {'tree':>6} {'full':>6} {'folded':>6}  cut  chain ends in")
        for name in args.names:
            t = ix.trace(name)
            default = t.to_text(width=args.width).splitlines()
            tree = t.to_text(tree=True, width=args.width).splitlines()
            full = t.to_text(full=True, width=args.width).splitlines()
            folded = sum(int(m.group(1)) for line in default if (m := re.match(r"  … and (\d+) more branches", line)))
            end = t.main_chain()[-1] if t.hops else None
            where = f"{end.name[:60]} ({end.file}:{end.line})" if end else t.message
            print(f"{name:<34} {len(t.hops):>5} {len(default):>7} {len(tree):>6} {len(full):>6} {folded:>6}  "
                  f"{'yes' if t.truncated else 'no ':<3}  {where}")
            over += len(default) > SCREEN
    print(f"\n{over} default text(s) over {SCREEN} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
