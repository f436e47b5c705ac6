"""lookup: what a name people type refers to (Python surface, op, C++ function, stub, CUDA kernel), and the trace
that starts there."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from . import query as q
from .model import OpindexError
from .trace import Trace


@dataclass(frozen=True)
class Target:
    kind: str  # native | python_class | python_function | python_binding | by_name | cpp | stub | global_kernel
    label: str
    obj: dict | tuple


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
    try:
        from .resolve import resolve
    except ImportError:  # pragma: no cover - the Python layer ships with opindex
        return []
    out: list[Target] = []
    for r in resolve(con, name):
        if r.kind == "native_function":
            entry = q.rows(con, "SELECT * FROM native_functions WHERE full_name = ? LIMIT 1",
                           (r.qualified_name.removeprefix("aten::"),))
            if entry:
                out.append(Target("python_binding", name, entry[0]))
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


def trace(con, name: str, device: str = "cuda", depth: int = 1, up: bool | None = None, backward: bool = False,
          root: str | None = None) -> Trace:
    with q.memoized(con):  # about half of a large trace's lookups repeat
        return _trace(con, name, device, depth, up, backward, root)


def _trace(con, name: str, device: str, depth: int, up: bool | None, backward: bool, root: str | None) -> Trace:
    from .walk import Walker
    from .walk_up import UpWalker
    if device not in q.DEVICES:
        raise OpindexError(f"unknown device {device!r}: choose from {', '.join(q.DEVICES)}")
    targets = lookup(con, name)
    bottom_up = up if up is not None else bool(targets) and all(t.kind in ("stub", "global_kernel") or (
        t.kind == "cpp" and _is_registered_kernel(con, t.obj)) for t in targets)
    t = Trace(query=name, direction="up" if bottom_up else "down", device=device, depth=depth, root=root)
    if not targets:
        t.candidates = suggestions(con, name)
        t.message = f"{name!r} is not a Python name, op, C++ function, stub or kernel in this index" + (
            "; did you mean: " + ", ".join(t.candidates) if t.candidates else "")
        return t
    if _ambiguous(targets):
        t.candidates = [f"{x.label} ({x.kind}, {x.obj.get('file')}:{x.obj.get('line')})" for x in targets]
        t.message = f"{name!r} is ambiguous; name one of the candidates"
        return t
    python = [x.kind for x in targets if x.kind in ("python_class", "python_function")]
    if bottom_up and python:  # Python code is the top: there is nothing above it to walk to
        t.message = (f"{name!r} is a {python[0].replace('python_', 'Python ')}: --up walks from an op, a C++ "
                     f"function, a stub or a kernel to what reaches it; trace {name} without --up")
        return t
    walker = (UpWalker if bottom_up else Walker)(con, t, backward=backward)
    if bottom_up:
        for target in targets:
            _walk_up(walker, target)
        return t
    if all(x.kind == "python_binding" for x in targets):
        _walk_binding(walker, name, [x.obj for x in targets])
        return t
    if all(x.kind == "by_name" for x in targets):
        hop = walker.add(None, "python", "by_name", name, detail=f"no Python definition or binding of {name} found; "
                         f"traced as the op {targets[0].obj['name']} by name")
        for target in targets[:4]:
            _tail(walker, target.obj, walker.native(target.obj, hop))
        return t
    for target in targets:
        _walk_down(walker, target, name)
    return t


def _ambiguous(targets: list[Target]) -> bool:
    kinds = {x.kind for x in targets}
    if kinds <= {"native", "python_binding"} or kinds == {"by_name"}:
        return False  # overloads of one op are walked together
    return len({x.label for x in targets}) > 1


def _is_registered_kernel(con, sym: dict) -> bool:
    if sym["kind"] == "global_kernel":
        return True
    return bool(q.kernels_registered_as(con, sym["name"])) and not q.dispatch_rows_with_kernel(con, sym["name"])


def _walk_down(w, target: Target, name: str) -> None:
    if target.kind == "native":
        hop = w.native(target.obj, None)
        _tail(w, target.obj, hop)
        w.surfaces(target.obj, hop)
    elif target.kind == "python_class":
        hop = w.python_class(target.obj, None, target.label)
        _tails_below(w, hop)
    elif target.kind == "python_function":
        hop = w.python_function(target.obj, None, target.label)
        _tails_below(w, hop)
    elif target.kind in ("cpp", "global_kernel"):
        hop = w.cpp(target.obj, None, w.depth, 4)
        for r in q.dispatch_rows_with_kernel(w.con, target.obj["name"])[:2]:
            entry = q.rows(w.con, "SELECT * FROM native_functions WHERE id = ?", (r["native_function_id"],))[0]
            w.add(hop, "native", "kernel_of", f"aten::{entry['full_name']}", entry["file"], entry["line"],
                  f"{r['dispatch_key']} kernel of {entry['full_name']}")


def _walk_binding(w, name: str, entries: list[dict]) -> None:
    """torch.add / Tensor.add_: no Python def; every non-out overload the variants bind is walked."""
    entries = [e for e in entries if not e["is_out"]] or entries
    first = entries[0]
    variants = sorted({v.strip() for e in entries for v in e["variants"].split(",")})
    hop = w.add(None, "python", "binding", name, first["file"], first["line"],
                f"no Python wrapper: bound from variants: {', '.join(variants)} of "
                f"{', '.join(e['full_name'] for e in entries)}")
    for e in entries[:4]:
        nh = w.native(e, hop)
        _tail(w, e, nh)


def _tails_below(w, hop) -> None:
    """Backward, decompositions and codegen of the ops a Python surface reaches directly."""
    for h in list(w.trace.hops):
        if h.layer == "native" and h.kind == "entry" and _bridge_parent(w, h) and h.detail != "(shown above)":
            entry = q.native_by_full_name(w.con, h.name.removeprefix("aten::"))
            if entry:
                _tail(w, entry[0], h)


def _bridge_parent(w, hop) -> bool:
    parent = w.trace.hops[hop.parent] if hop.parent is not None else None
    return parent is not None and parent.layer == "bridge"


def _tail(w, entry: dict, hop) -> None:
    w.backward_of(entry, hop)
    w.decompositions(entry, hop)
    w.codegen(entry, hop)


def _walk_up(w, target: Target) -> None:
    if target.kind == "global_kernel":
        w.global_kernel(target.obj)
    elif target.kind == "stub":
        w.stub_up(target.label, None, 4)
    elif target.kind in ("native", "python_binding", "by_name"):  # an op: its Python surfaces and callers
        if not target.obj["is_out"] or target.kind == "native":
            w.native_up(target.obj["id"], None)
    else:
        w.function(target.obj)
