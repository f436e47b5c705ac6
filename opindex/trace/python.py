"""How a walk follows Python code: calls through a module's imports and aliases, self.x()
through a class's bases, and which native_functions.yaml entries a bridge reaches."""
from __future__ import annotations

from . import facts as q


def bridged_entries(con, b: dict) -> list[dict]:
    """The native_functions.yaml entries a Python bridge reaches."""
    op, kind = b["op"], b["kind"]
    if kind == "torch_ops":
        overload = b.get("overload")
        if overload and overload != "default":
            return q.native_by_full_name(con, f"{op}.{overload}")
        found = q.native_by_full_name(con, op)
        return found or q.native_by_name(con, op)
    entries = q.native_by_name(con, op)
    if kind == "tensor_method":
        entries = [e for e in entries if "method" in e["variants"]]
    elif kind == "c_namespace":
        ns = b["namespace"].lstrip("_")
        entries = [e for e in entries if (e["python_module"] or "") == ns] or entries
    else:
        entries = [e for e in entries if "function" in e["variants"]] or entries
    non_out = [e for e in entries if not e["is_out"]]
    return non_out or entries


def follow_python(con, module: str | None, qualifier: str, callee: str, limit: int = 6):
    """Resolve a call written in `module` (F.relu, torch._C._nn.linear, helper) to ("def", symbol) or
    ("bridge", {kind, namespace, op, text}), through the module's imports and aliases. A binding reached through
    an assignment that names it (`vector_norm = _add_docstr(_linalg.linalg_vector_norm, ...)` in
    torch/linalg/__init__.py) carries that line: alias_file, alias_line."""
    dotted = f"{qualifier}.{callee}" if qualifier else callee
    if qualifier in ("self", "cls") or module is None:
        return None
    head, _, rest = dotted.partition(".")
    imp = q.import_target(con, module, head)
    full = (imp["target"] + ("." + rest if rest else "")) if imp else (
        dotted if head in ("torch",) else f"{module}.{dotted}")
    via = None  # the last python_imports row followed
    for _ in range(limit):
        binding = _c_binding(full)  # before defs: a .pyi signature of a C binding is not Python code
        if binding:
            if via is not None and via["kind"] == "alias":
                binding = {**binding, "alias_file": via["file"], "alias_line": via["line"]}
            return "bridge", binding
        found = q.python_def(con, full)
        if found:
            return "def", found
        parent, _, last = full.rpartition(".")
        alias = q.import_target(con, parent, last)
        if not alias or alias["target"] == full:
            if parent == "torch" and q.native_by_name(con, last):  # torch.conv2d: bound from the YAML entry
                return "bridge", {"kind": "torch", "namespace": "torch", "op": last, "overload": None,
                                  "text": full}
            return None
        full, via = alias["target"], alias
    return None


_C_NAMESPACES = {"_nn", "_fft", "_linalg", "_special", "_nested", "_sparse"}


def _c_binding(full: str) -> dict | None:
    parts = full.split(".")
    if parts[:2] == ["torch", "_VF"] and len(parts) == 3:
        return {"kind": "VF", "namespace": "_VF", "op": parts[2], "overload": None, "text": full}
    if parts[:3] == ["torch", "_C", "_VariableFunctions"] and len(parts) == 4:
        return {"kind": "variable_functions", "namespace": "_VariableFunctions", "op": parts[3], "overload": None,
                "text": full}
    if parts[:2] == ["torch", "_C"] and len(parts) == 4 and parts[2] in _C_NAMESPACES:
        return {"kind": "c_namespace", "namespace": parts[2], "op": parts[3], "overload": None, "text": full}
    return None


def self_method(con, fn: dict, name: str):
    """self.x(...) inside a method: x on the method's class or its bases (RNNBase._conv_forward and the like)."""
    owner = q.python_class(con, fn["qualified_name"].rsplit(".", 1)[0])
    if not owner:
        return None
    method = find_method(con, owner, name)
    return ("def", method) if method else None


def module_of(con, fn: dict) -> str | None:
    return q.resident(con).module_of_file.get(fn["file"])


def find_method(con, cls: dict, name: str, limit: int = 8) -> dict | None:
    """`name` defined on the class or, first found, on its bases (resolved by name across files)."""
    todo, seen = [cls], set()
    while todo and limit > 0:
        limit -= 1
        c = todo.pop(0)
        if c["qualified_name"] in seen:
            continue
        seen.add(c["qualified_name"])
        # the last def of a name is the one that runs: @overload stubs come first, the implementation last
        found = q.python_member(con, f"{c['qualified_name']}.{name}")
        if found:
            return found
        todo += _base_classes(con, c)
    return None


def _base_classes(con, cls: dict) -> list[dict]:
    out = []
    for b in q.class_bases(con, cls["qualified_name"]):
        last = b["base"].split("[")[0].split(".")[-1]
        cands = q.python_classes_named(con, last, cls["file"])
        if cands:
            out.append(cands[0])
    return out


def bases_text(con, cls: dict) -> str:
    bases = [b["base"] for b in q.class_bases(con, cls["qualified_name"])]
    return f"({', '.join(bases)})" if bases else ""
