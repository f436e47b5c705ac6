"""Python layer accuracy: the index's classes and defs against Python's own `ast`, then the bridges of ten names.

    python benchmarks/python_accuracy.py CHECKOUT [--db PATH]
    python benchmarks/python_accuracy.py --installed [--db PATH]

Builds (or incrementally refreshes) the index, walks every indexed .py/.pyi file with `ast` (the independent
oracle: tree-sitter is not involved), and compares the sets of (name, qualified_name, file, line, kind).
Files `ast` cannot parse (another Python's syntax) are counted and left out of both sides.
"""
from __future__ import annotations

import argparse
import ast
import sqlite3
import sys
import tempfile
import time
import warnings
from pathlib import Path

NAMES = ["nn.LSTM", "nn.Linear", "nn.Conv2d", "nn.LayerNorm", "F.relu", "F.gelu", "F.cross_entropy", "F.layer_norm",
         "F.softmax", "F.scaled_dot_product_attention"]


def ast_symbols(source: bytes, file: str, module: str) -> set[tuple]:
    """(name, qualified_name, file, line, kind) of every class and def, walked without recursion."""
    tree = ast.parse(source, filename=file)
    out = set()
    todo: list[tuple[ast.AST, str, str]] = [(tree, "", "module")]  # (node, scope path, scope kind)
    while todo:
        node, path, kind = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                own = f"{path}.{child.name}" if path else child.name
                qn = f"{module}.{own}" if module else own
                if isinstance(child, ast.ClassDef):
                    ckind = "class"
                else:
                    ckind = "method" if kind == "class" else "function"
                out.add((child.name, qn, file, child.lineno, ckind))
                todo.append((child, own, ckind))
            else:
                todo.append((child, path, kind))
    return out


def compare(con: sqlite3.Connection, root: Path) -> tuple[set, set, list[str]]:
    expected, skipped = set(), []
    files = con.execute("SELECT path, module FROM files WHERE language = 'python' ORDER BY path").fetchall()
    for path, module in files:
        try:
            data = (root / path).read_bytes()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected |= ast_symbols(data, path, module or "")
        except (SyntaxError, ValueError, OSError) as exc:
            skipped.append(f"{path}: {type(exc).__name__}")
    skip = {s.split(":")[0] for s in skipped}
    got = {tuple(r) for r in con.execute(
        "SELECT name, qualified_name, file, line, kind FROM symbols WHERE language = 'python'") if r[2] not in skip}
    return expected, got, skipped


def bridges_report(con: sqlite3.Connection) -> None:
    """Where each of NAMES reaches C++, as `opindex trace` walks it: the Python hops and the bridges under them."""
    from opindex.trace import trace
    for name in NAMES:
        t = trace(con, name)
        shown = [h for h in t.hops if h.layer in ("python", "bridge")]
        if not shown:
            print(f"\n{name}: {t.message or 'no Python hop'}")
            continue
        print(f"\n{name}")
        depth = {}
        for h in t.hops:
            depth[h.id] = depth.get(h.parent, -1) + 1
        for h in shown:
            print(f"{'   ' * depth[h.id]}{h.layer:<6} {h.kind:<18} {h.name}  ({h.file}:{h.line})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="?")
    ap.add_argument("--installed", action="store_true", help="the torch package of this Python")
    ap.add_argument("--db", help="index path (default: a temporary file)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--max-misses", type=int, default=200)
    args = ap.parse_args(argv)
    if bool(args.checkout) == args.installed:
        ap.error("give CHECKOUT or --installed")
    from opindex.api import build
    db = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "python_accuracy.sqlite"
    start = time.monotonic()
    report = build(args.checkout, db, installed=args.installed, jobs=args.jobs)
    print(f"index {db}: built in {time.monotonic() - start:.1f} s ({report.parsed} files parsed, "
          f"{report.reused} reused), PyTorch {report.pytorch_version}")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    root = Path(con.execute("SELECT value FROM meta WHERE key = 'checkout_root'").fetchone()[0])
    t = time.monotonic()
    expected, got, skipped = compare(con, root)
    both = expected & got
    recall = len(both) / len(expected) if expected else 1.0
    precision = len(both) / len(got) if got else 1.0
    nfiles = con.execute("SELECT count(*) FROM files WHERE language = 'python'").fetchone()[0]
    errs = con.execute("SELECT count(*) FROM files WHERE language = 'python' AND parse_errors > 0").fetchone()[0]
    print(f"{nfiles} Python files ({len(skipped)} that ast cannot parse left out; {errs} with tree-sitter "
          f"ERROR nodes); ast compared in {time.monotonic() - t:.1f} s")
    print(f"classes+defs: ast {len(expected)}, index {len(got)}, both {len(both)}")
    print(f"recall {recall:.4%}  precision {precision:.4%}")
    for s in skipped:
        print(f"  ast skipped {s}")
    for label, miss in (("missed (in ast, not in index)", expected - got), ("extra (in index, not in ast)",
                                                                             got - expected)):
        if miss:
            print(f"{label}: {len(miss)}")
            for m in sorted(miss, key=lambda m: (m[2], m[3]))[:args.max_misses]:
                print(f"  {m[2]}:{m[3]} {m[4]} {m[1]}")
    counts = dict(con.execute("SELECT kind, count(*) FROM python_bridges GROUP BY kind"))
    print(f"python_bridges by kind: {counts}")
    bridges_report(con)
    return 0 if recall == 1.0 and precision == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
