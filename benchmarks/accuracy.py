"""Accuracy of the C++/CUDA layer against oracles that do not use tree-sitter.

    python benchmarks/accuracy.py CHECKOUT [--db PATH] [--rebuild] [--misses PATH]

Oracles, per C++/CUDA file of the index (the same files, so discovery is not what is measured):
- regular expressions over the text with comments, string and character literals (raw strings too) blanked and
  #define lines (with their continuations) removed: DECLARE_DISPATCH, DEFINE_DISPATCH, the REGISTER_*DISPATCH
  family read from the checkout's own DispatchStub.h, `__global__` definitions (followed by a body, not `;`) and
  `<<<` launch sites;
- universal-ctags (`apt-get install universal-ctags`) for C++/CUDA function definitions under aten/src/ATen/native.
A site matches an index row of the same file (and the same stub name, where there is one) within a few lines, since
an oracle reports the line of a token and the index the line where the construct starts.
Facts expanded from same-file macros (from_macro) are invisible to every oracle: they are listed, not scored.
"""
from __future__ import annotations

import argparse
import bisect
import datetime
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

LINE_TOLERANCE = 3
_STRIP = re.compile(r'R"([^(\s"]{0,16})\((?:.|\n)*?\)\1"|"(?:\\.|\\\n|[^"\\\n])*"|\'(?:\\.|[^\'\\\n]){1,8}\''
                    r"|//[^\n]*|/\*(?:.|\n)*?\*/")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", re.M)


def blank(text: str) -> str:
    """Comments and literals (raw strings too) replaced by spaces; newlines kept, so lines stay true."""
    return _STRIP.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def without_defines(text: str) -> str:
    return _DEFINE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _args(text: str, open_paren: int) -> list[str]:
    depth, start, out = 0, open_paren + 1, []
    for i in range(open_paren, min(len(text), open_paren + 2000)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                out.append(text[start:i])
                break
        elif c == "," and depth == 1:
            out.append(text[start:i])
            start = i + 1
    return [" ".join(a.split()) for a in out]


def registration_family(root: Path) -> list[str]:
    """(ALSO_)?REGISTER_*DISPATCH names #defined in the checkout's DispatchStub.h files."""
    found: set[str] = set()
    for top in ("aten", "torch"):
        for path in (root / top).rglob("DispatchStub.h") if (root / top).is_dir() else ():
            found |= set(re.findall(r"#\s*define\s+((?:ALSO_)?REGISTER_\w*DISPATCH)\b", path.read_text(errors="replace")))
    return sorted(found)


def regex_oracle(root: Path, files: list[str], family: list[str]) -> dict[str, list[tuple]]:
    """kind -> [(file, line, key)] with key the stub name (or None)."""
    out: dict[str, list[tuple]] = defaultdict(list)
    reg = re.compile(r"\b(" + "|".join(map(re.escape, family)) + r")\s*\(") if family else None
    stubs = re.compile(r"\b(DECLARE_DISPATCH|DEFINE_DISPATCH)\s*\(")
    glob = re.compile(r"\b__global__\b")
    chevron = re.compile(r"<<<")
    for rel in files:
        try:
            text = without_defines(blank((root / rel).read_text(errors="replace")))
        except OSError:
            continue
        if "DISPATCH" not in text and "__global__" not in text and "<<<" not in text:
            continue
        nl = [m.start() for m in re.finditer("\n", text)]

        def line(pos: int) -> int:
            return bisect.bisect_left(nl, pos) + 1

        for m in stubs.finditer(text):
            args = _args(text, m.end() - 1)
            if args:
                out[m.group(1)].append((rel, line(m.start()), args[-1] if m.group(1) == "DECLARE_DISPATCH"
                                        else args[0]))
        if reg:
            for m in reg.finditer(text):
                args = _args(text, m.end() - 1)
                if args:
                    out["registrations"].append((rel, line(m.start()), args[0]))
        for m in glob.finditer(text):
            j = m.end()
            depth = 0
            while j < len(text):  # a definition reaches `{` before `;` (outside parentheses)
                c = text[j]
                if c in "([":
                    depth += 1
                elif c in ")]":
                    depth -= 1
                elif depth == 0 and c in ";{":
                    break
                j += 1
            if j < len(text) and text[j] == "{":
                out["__global__"].append((rel, line(m.start()), None))
        for m in chevron.finditer(text):
            out["<<<"].append((rel, line(m.start()), None))
    return out


def ctags_oracle(root: Path, folder: str) -> list[tuple]:
    """(file, line, name) of C++/CUDA function definitions by universal-ctags, or [] without ctags."""
    exe = shutil.which("ctags")
    if not exe or not (root / folder).is_dir():
        return []
    cmd = [exe, "-R", "-f", "-", "--languages=C,C++", "--langmap=C++:+.cu.cuh", "--kinds-C=f", "--kinds-C++=f",
           "--fields=+n", folder]
    res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, errors="replace")
    out = []
    for ln in res.stdout.splitlines():
        parts = ln.split("\t")
        m = re.search(r"\bline:(\d+)", ln)
        if len(parts) >= 2 and m and not parts[0].startswith("__anon"):  # __anon...: lambdas
            out.append((parts[1], int(m.group(1)), parts[0]))
    return out


def compare(oracle: list[tuple], index: list[tuple], keyed: bool, tolerance: int = LINE_TOLERANCE
            ) -> tuple[list, list, int]:
    """Greedy per-file matching within ``tolerance`` lines; returns (oracle misses, index extras, matched)."""
    pool: dict[tuple, list[int]] = defaultdict(list)
    for f, ln, key in index:
        pool[(f, key if keyed else None)].append(ln)
    for lines in pool.values():
        lines.sort()
    misses, matched = [], 0
    for f, ln, key in sorted(oracle):
        lines = pool.get((f, key if keyed else None))
        best = None
        if lines:
            i = bisect.bisect_left(lines, ln - tolerance)
            if i < len(lines) and lines[i] <= ln + tolerance:
                best = i
        if best is None:
            misses.append((f, ln, key))
        else:
            lines.pop(best)
            matched += 1
    extras = sorted((f, ln, k) for (f, k), lines in pool.items() for ln in lines)
    return misses, extras, matched


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("--db", default="/tmp/opindex-accuracy.sqlite")
    ap.add_argument("--rebuild", action="store_true", help="build even when --db exists")
    ap.add_argument("--misses", default=None, help="file for the full list of misses (default: next to --db)")
    ap.add_argument("--ctags-folder", default="aten/src/ATen/native")
    ns = ap.parse_args(argv)
    root = Path(ns.checkout).resolve()
    db = Path(ns.db)
    if ns.rebuild or not db.exists():
        from opindex.api import build
        t0 = time.time()
        build(str(root), db)
        print(f"built {db} in {time.time() - t0:.1f} s ({db.stat().st_size / 1e6:.1f} MB)")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    files = [r[0] for r in q("SELECT path FROM files WHERE language IN ('cpp', 'cuda') ORDER BY path")]
    family = registration_family(root)
    oracle = regex_oracle(root, files, family)
    plain = "from_macro IS NULL"
    index = {
        "DECLARE_DISPATCH": q(f"SELECT file, line, stub FROM dispatch_stubs WHERE action = 'declare' AND {plain}"),
        "DEFINE_DISPATCH": q(f"SELECT file, line, stub FROM dispatch_stubs WHERE action = 'define' AND {plain}"),
        "registrations": q(f"SELECT file, line, stub FROM dispatch_registrations WHERE {plain}"),
        "__global__": q(f"SELECT file, line, NULL FROM symbols WHERE kind = 'global_kernel' AND {plain}"),
        "<<<": q(f"SELECT file, line, NULL FROM kernel_launches WHERE kind = 'chevron' AND {plain}"),
    }
    keyed = {"DECLARE_DISPATCH": True, "DEFINE_DISPATCH": True, "registrations": True}
    folder = ns.ctags_folder.rstrip("/")
    tags = ctags_oracle(root, folder)
    if tags:
        oracle["functions (ctags)"] = tags
        # written definitions only: ctags cannot expand a macro, so what expansions define is listed, not scored
        index["functions (ctags)"] = q(
            "SELECT file, line, NULL FROM symbols WHERE kind NOT IN ('class', 'struct') AND from_macro IS NULL "
            f"AND language IN ('cpp', 'cuda') AND file LIKE '{folder}/%'")
        oracle["functions (ctags)"] = [(f, ln, None) for f, ln, _ in tags]

    misses_path = Path(ns.misses) if ns.misses else db.with_suffix(".misses.txt")
    lines_out = []
    print(f"accuracy of {root} ({datetime.date.today()}), registration family from DispatchStub.h: "
          f"{', '.join(family) or '(none found)'}")
    print(f"{'fact':<20} {'oracle':>7} {'index':>7} {'matched':>8} {'recall':>8} {'precision':>10}")
    for kind in ("DECLARE_DISPATCH", "DEFINE_DISPATCH", "registrations", "__global__", "<<<", "functions (ctags)"):
        if kind not in oracle and kind not in index:
            continue
        o, i = oracle.get(kind, []), index.get(kind, [])
        # a launch's row has the line where the call starts; `<<<` may come after a long template argument list
        misses, extras, matched = compare(o, i, keyed.get(kind, False), 8 if kind == "<<<" else LINE_TOLERANCE)
        recall = matched / len(o) if o else 1.0
        precision = matched / len(i) if i else 1.0
        print(f"{kind:<20} {len(o):>7} {len(i):>7} {matched:>8} {recall:>8.2%} {precision:>10.2%}")
        lines_out += [f"## {kind}: {len(misses)} oracle sites not in the index"]
        lines_out += [f"{f}:{ln} {k or ''}" for f, ln, k in misses]
        lines_out += [f"## {kind}: {len(extras)} index rows no oracle site matches"]
        lines_out += [f"{f}:{ln} {k or ''}" for f, ln, k in extras]
    generated = q("SELECT 'stub ' || action, file, line, stub, from_macro FROM dispatch_stubs WHERE from_macro "
                  "IS NOT NULL UNION ALL SELECT 'registration', file, line, stub, from_macro FROM "
                  "dispatch_registrations WHERE from_macro IS NOT NULL UNION ALL SELECT kind, file, line, name, "
                  "from_macro FROM symbols WHERE from_macro IS NOT NULL UNION ALL SELECT 'launch ' || kind, file, line, "
                  "kernel, from_macro FROM kernel_launches WHERE from_macro IS NOT NULL ORDER BY 2, 3")
    by_kind = defaultdict(int)
    for row in generated:
        by_kind[row[0]] += 1
    print(f"macro-generated facts no regex sees: {len(generated)} "
          f"({', '.join(f'{k} {n}' for k, n in sorted(by_kind.items()))})")
    lines_out += [f"## macro-generated facts: {len(generated)}"]
    lines_out += [f"{f}:{ln} {kind} {name} (from {macro})" for kind, f, ln, name, macro in generated]
    stub_calls = q("SELECT count(*), sum(stub IN (SELECT stub FROM dispatch_stubs)) FROM stub_calls")[0]
    print(f"stub_calls: {stub_calls[0]}, of which {stub_calls[1] or 0} name a DECLARE/DEFINE_DISPATCH stub")
    unresolved = q("SELECT file, line, stub, device_arg FROM stub_calls WHERE stub NOT IN "
                   "(SELECT stub FROM dispatch_stubs) ORDER BY file, line")
    lines_out += [f"## stub_calls naming no declared stub: {len(unresolved)}"]
    lines_out += [f"{f}:{ln} {s}({d})" for f, ln, s, d in unresolved]
    errors = q("SELECT count(*), sum(parse_errors > 0) FROM files WHERE language IN ('cpp', 'cuda')")[0]
    print(f"C++/CUDA files: {errors[0]}, with a parse error: {errors[1]}")
    if len(lines_out) > 40:
        misses_path.write_text("\n".join(lines_out) + "\n")
        print(f"misses and extras: {misses_path}")
    else:
        print("\n".join(lines_out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
