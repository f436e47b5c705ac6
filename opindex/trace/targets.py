"""targets: what a name people type refers to (Python surface, op, C++ function, stub, CUDA kernel)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from . import facts as q
from ..model import OpindexError
from .names import resolve


@dataclass(frozen=True)
class Target:
    kind: str  # native | python_class | python_function | python_binding | by_name | cpp | stub | global_kernel
    label: str
    obj: dict | tuple
    via: tuple[str, ...] = ()  # the names followed to reach it (a Python name's aliases and re-exports)


def lookup(con, name: str) -> list[Target]:
    raw = name.strip()
    if not raw:
        raise OpindexError("empty name")
    n = raw[len("aten::"):] if raw.startswith("aten::") else raw
    if "." in n and "::" not in n:
        found = q.native_by_full_name(con, n)
        if found:
            return [Target("native", f"aten::{e['full_name']}", e) for e in found]
    if n.isidentifier():
        entries = q.native_by_name(con, n)
        if entries:
            primary = [e for e in entries if not e["is_out"]] or entries
            return [Target("native", f"aten::{e['full_name']}", e) for e in primary]
    if raw.startswith("aten::"):
        return []
    python = _python(con, raw)
    if python:
        return python
    found = _cpp(con, n)
    if not found and "." in raw and "::" not in raw:
        # F.max_pool2d is a boolean_dispatch object, not a def or an alias: fall back to the op of that name
        op = raw.rsplit(".", 1)[1]
        entries = [e for e in q.native_by_name(con, op) if not e["is_out"]] if op.isidentifier() else []
        return [Target("by_name", raw, e) for e in entries]
    return found


def _python(con, name: str) -> list[Target]:
    out: list[Target] = []
    for r in resolve(con, name):
        if r.kind == "native_function":
            entry = q.rows(con, "SELECT * FROM native_functions WHERE full_name = ? LIMIT 1",
                           (r.qualified_name.removeprefix("aten::"),))
            if entry:
                out.append(Target("python_binding", name, entry[0], r.via))
            continue
        sym = q.rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND file = ? AND line = ? LIMIT 1",
                     (r.qualified_name, r.file, r.line))
        if sym:
            kind = "python_class" if sym[0]["kind"] == "class" else "python_function"
            out.append(Target(kind, r.qualified_name, sym[0]))
    if any(t.kind == "python_binding" for t in out):  # a .pyi signature is the binding, not a wrapper
        out = [t for t in out if t.kind == "python_binding" or not t.obj["file"].endswith(".pyi")]
    return _dedupe(out)


def _cpp(con, n: str) -> list[Target]:
    out: list[Target] = []
    if "::" in n:
        syms = q.rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND language IN ('cpp', 'cuda') "
                           "ORDER BY kind = 'impl_func' DESC, file, line", (n,))
    else:
        stubs = q.stub_declarations(con, n)
        if stubs:
            return [Target("stub", n, stubs[0])]
        syms = [s for s in q.symbols_named(con, n) if s["kind"] in q.DEFINITION_KINDS]
    for s in syms[:6]:
        kind = "global_kernel" if s["kind"] == "global_kernel" else "cpp"
        out.append(Target(kind, s["qualified_name"], s))
    return out


def _dedupe(targets: list[Target]) -> list[Target]:
    seen, out = set(), []
    for t in targets:
        key = (t.kind, t.obj.get("qualified_name") or t.obj.get("full_name"), t.obj.get("file"))
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def suggestions(con, name: str, limit: int = 8) -> list[str]:
    """Close matches among op names, Python classes/functions and stubs."""
    stem = name.split("::")[-1].split(".")[-1]
    pool = {r["n"] for r in q.rows(con, "SELECT DISTINCT name AS n FROM native_functions")}
    pool |= {r["n"] for r in q.rows(con, "SELECT DISTINCT stub AS n FROM dispatch_stubs")}
    pool |= {r["n"] for r in q.rows(con, "SELECT DISTINCT name AS n FROM symbols WHERE language = 'python' "
                                         "AND kind = 'class' AND file LIKE 'torch/nn/%'")}
    close = difflib.get_close_matches(stem, sorted(pool), n=limit, cutoff=0.7)
    like = [r["n"] for r in q.rows(con, "SELECT DISTINCT name AS n FROM native_functions WHERE name LIKE ? "
                                        "ORDER BY length(name) LIMIT ?", (f"%{stem}%", limit))]
    return list(dict.fromkeys(close + like))[:limit]
