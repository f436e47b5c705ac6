"""targets: what a name people type refers to (Python surface, op, C++ function, stub, CUDA kernel)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from . import facts as q
from ..extract.cpp_names import device_from_path
from ..model import OpindexError
from .names import resolve


@dataclass(frozen=True)
class Target:
    kind: str  # native | python_class | python_function | python_binding | by_name | cpp | stub | global_kernel
    label: str
    obj: dict | tuple
    via: tuple[str, ...] = ()  # the names followed to reach it (a Python name's aliases and re-exports)
    dispatch: str | None = None  # a branch def of this boolean_dispatch object (F.max_pool2d), walked with the others


def lookup(con, name: str) -> list[Target]:
    """What `name` refers to. `NAME@FILE` keeps the definitions of NAME in a file whose path ends with FILE (the
    candidates of a kernel name defined in several files are written so)."""
    raw = name.strip()
    if not raw:
        raise OpindexError("empty name")
    if "@" in raw and not raw.startswith("@"):
        base, _, where = raw.rpartition("@")
        return [t for t in lookup(con, base) if isinstance(t.obj, dict) and str(t.obj.get("file") or "").endswith(
            where)]
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
    if not found and n.isidentifier():
        # a bare class or def name (LSTM): every Python definition of that name, by its qualified name
        found = _python_named(con, n)
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
            entry = q.native_by_full_name(con, r.qualified_name.removeprefix("aten::"))
            if entry:
                out.append(Target("python_binding", name, entry[0], r.via))
            continue
        sym = q.symbol_at(con, r.qualified_name, r.file, r.line)
        if sym:
            kind = "python_class" if sym["kind"] == "class" else "python_function"
            out.append(Target(kind, r.qualified_name, sym, r.via, r.dispatch))
    if any(t.kind == "python_binding" for t in out):  # a .pyi signature is the binding, not a wrapper
        out = [t for t in out if t.kind == "python_binding" or not t.obj["file"].endswith(".pyi")]
    return _dedupe(out)


def _python_named(con, name: str) -> list[Target]:
    """Module-level Python classes and defs named `name` (not methods), as targets labelled by qualified name."""
    syms = q.python_toplevel_named(con, name)
    return _dedupe([Target("python_class" if s["kind"] == "class" else "python_function", s["qualified_name"], s)
                    for s in syms if not s["file"].endswith(".pyi")])


def _cpp_label(sym: dict) -> str:
    """The name that selects this definition when typed back: its qualified name, `::name` in the global
    namespace (so a global __global__ kernel is told from at::native's kernel of the same name)."""
    qn = sym["qualified_name"]
    return qn if "::" in qn else f"::{qn}"


def _cpp(con, n: str) -> list[Target]:
    out: list[Target] = []
    if "::" in n:
        # `::name` is the global namespace's name only
        qn = n[2:] if n.startswith("::") else n
        syms = q.cpp_symbols(con, qn)
    else:
        stubs = q.stub_declarations(con, n)
        if stubs:
            return [Target("stub", n, stubs[0])]
        syms = [s for s in q.symbols_named(con, n) if s["kind"] in q.DEFINITION_KINDS]
    for s in syms[:6]:
        kind = "global_kernel" if s["kind"] == "global_kernel" else "cpp"
        out.append(Target(kind, _cpp_label(s), s))
    return out


def _dedupe(targets: list[Target]) -> list[Target]:
    seen, out = set(), []
    for t in targets:
        key = (t.kind, t.obj.get("qualified_name") or t.obj.get("full_name"), t.obj.get("file"))
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def for_device(targets: list[Target], option: str) -> tuple[list[Target], str, bool]:
    """One C++ name defined in files compiled for several devices (LayerNormKernelImpl in native/cpu/ and in a
    .cu file): (the definitions for the traced device, a note that says so, False), or, when there is none for it,
    (all of them, why, True: ambiguous). Anything else is returned as it is."""
    code = [t for t in targets if t.kind in ("cpp", "global_kernel")]
    if option == "all" or len(code) < 2 or len(code) != len(targets) or len({t.label for t in code}) > 1:
        return targets, "", False
    devices = [device_from_path(t.obj["file"]) for t in code]
    if len(set(devices)) < 2:
        return targets, "", False
    wanted = set(q.registration_devices(option))
    mine = [t for t, d in zip(code, devices) if d in wanted]
    others = ", ".join(f"{d} at {t.obj['file']}:{t.obj['line']}" for t, d in zip(code, devices) if d not in wanted)
    label, on = code[0].label, "/".join(sorted(set(devices)))
    if not mine:
        return targets, f"{label} is defined for {on}, not for --device {option}: name one of the candidates", True
    return mine, (f"{label} is defined for {on}: the {'/'.join(sorted(wanted))} definition is traced (the others: "
                  f"{others}; --device picks another)"), False


def same_kernel_in_files(targets: list[Target]) -> bool:
    """__global__ kernels of one name in several files (RowwiseMomentsCUDAKernel of group_norm_kernel.cu and of
    layer_norm_kernel.cu): different kernels, never walked as one."""
    kernels = [t for t in targets if t.kind == "global_kernel"]
    return len(kernels) == len(targets) and len({t.obj["file"] for t in kernels}) > 1


def ambiguous(targets: list[Target]) -> bool:
    """Several things of different names: the user must pick one (overloads of one op are walked together)."""
    kinds = {x.kind for x in targets}
    if kinds <= {"native", "python_binding"} or kinds == {"by_name"}:
        return False
    if len({x.dispatch for x in targets}) == 1 and targets[0].dispatch:
        return False  # F.max_pool2d: the branch defs of one boolean_dispatch object, walked together
    return len({x.label for x in targets}) > 1


def similar(con, name: str, what: str, limit: int = 5) -> list[str]:
    """Names of `what` (op, stub, find, callers, callees: facts.NAME_POOLS) close to `name`, closest first: a
    typo's neighbours (difflib, any case), then names that hold it."""
    stem = name.split("::")[-1].split(".")[-1] if what != "op" else name.removeprefix("aten::").split(".")[0]
    if not stem:
        return []
    pool = [n for n in q.names_near(con, what, stem) if n and n != stem]
    by_lower: dict[str, list[str]] = {}
    for n in pool:
        by_lower.setdefault(n.lower(), []).append(n)
    close = [n for low in difflib.get_close_matches(stem.lower(), list(by_lower), n=limit, cutoff=0.75)
             for n in by_lower[low]]
    holding = sorted((n for n in pool if stem.lower() in n.lower()), key=len)
    return list(dict.fromkeys(close + holding))[:limit]


def like_escape(text: str) -> str:
    """`text` as a literal inside a LIKE pattern written with ESCAPE '\\' (% and _ match only themselves)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def suggestions(con, name: str, limit: int = 8) -> list[str]:
    """Close matches among op names, Python classes/functions and stubs, each written so that it works when typed
    back: the user's own prefix when that resolves (nn.LSTMM -> nn.LSTM), else the bare name, else the qualified
    names of its definitions. A suggestion that would itself fail or be ambiguous is left out."""
    stem = name.split("::")[-1].split(".")[-1]
    if not stem:
        return []
    close = difflib.get_close_matches(stem, sorted(q.suggestion_pool(con)), n=limit, cutoff=0.7)
    like = q.native_names_like(con, f"%{like_escape(stem)}%", limit)
    prefix = name[: len(name) - len(stem)] if name.endswith(stem) else ""
    if prefix.count(".") + prefix.count("::") > 4:  # no real name has a longer prefix: skip resolving it per guess
        prefix = ""
    out: list[str] = []
    for found in dict.fromkeys(close + like):
        for spelling in dict.fromkeys(s for s in (prefix + found, found) if s != name):
            targets = lookup(con, spelling)
            if targets and not ambiguous(targets):
                out.append(spelling)
                break
        else:  # the name alone is ambiguous or unknown: its definitions' qualified names are not
            out += [t.label for t in _python_named(con, found) if t.label != name]
        if len(out) >= limit:
            break
    return list(dict.fromkeys(out))[:limit]
