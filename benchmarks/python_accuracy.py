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
    from opindex.trace.names import resolve
    for name in NAMES:
        res = resolve(con, name)
        python = [r for r in res if r.kind != "native_function" and not r.stub]
        if not res:
            print(f"\n{name}: not found")
            continue
        if not python:  # a module-level alias straight to C++ (gelu = _add_docstr(torch._C._nn.gelu, ...))
            print(f"\n{name} -> {' -> '.join(res[0].via[1:])}: {', '.join(r.qualified_name for r in res)}")
            _show(con, res[0].via[1] if len(res[0].via) > 1 else name, "   ")
            continue
        target = python[0]
        print(f"\n{name} -> {target.qualified_name} ({target.file}:{target.line})")
        entry = target.qualified_name
        if target.kind == "python_class":
            fwd = [r for r in resolve(con, f"{entry}.forward") if r.kind == "python_function"]
            if not fwd:
                print("   no forward")
                continue
            entry = fwd[0].qualified_name
            print(f"   forward: {entry} ({fwd[0].file}:{fwd[0].line})")
        _show(con, entry, "   ")
        for qualifier, callee in _python_calls(con, entry):  # one level: F.x(...) and self.x(...)
            if qualifier == "self" and target.kind == "python_class":
                nxt = [r for r in resolve(con, f"{target.qualified_name}.{callee}") if r.kind == "python_function"]
                if nxt and nxt[0].qualified_name != entry and not nxt[0].stub:
                    print(f"   -> self.{callee}: {nxt[0].qualified_name}")
                    _show(con, nxt[0].qualified_name, "      ")
                    for q2, c2 in _python_calls(con, nxt[0].qualified_name):  # Conv2d: self._conv_forward -> F.conv2d
                        if q2 != "self":
                            _functional(con, c2, "      ")
            elif qualifier != "self":
                _functional(con, callee, "   ")


def _python_calls(con, caller: str) -> list[tuple[str, str]]:
    rows = con.execute("SELECT qualifier, callee, min(line) FROM calls WHERE caller = ? AND qualifier IN "
                       "('self', 'F', 'torch.nn.functional', 'nn.functional') GROUP BY 1, 2 ORDER BY 3", (caller,))
    return [(q, c) for q, c, _ in rows]


def _functional(con, callee: str, indent: str) -> None:
    from opindex.trace.names import resolve
    res = resolve(con, f"F.{callee}")
    if not res:
        print(f"{indent}-> F.{callee}: not found")
        return
    print(f"{indent}-> F.{callee}: {', '.join(r.qualified_name for r in res)}")
    python = [r for r in res if r.kind == "python_function" and not r.stub]
    _show(con, python[0].qualified_name if python else f"torch.nn.functional.{callee}", indent + "   ")


def _show(con, qualified_name: str, indent: str) -> None:
    from opindex.trace.names import bridges_of
    rows = bridges_of(con, qualified_name)
    if not rows:
        print(f"{indent}(no bridges)")
    for b in rows:
        ov = f".{b.overload}" if b.overload else ""
        print(f"{indent}{b.file}:{b.line}  {b.kind:<18} {b.namespace}:{b.op}{ov}   ({b.text})")


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
