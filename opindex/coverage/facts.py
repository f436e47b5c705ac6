"""facts: every lookup `opindex coverage` makes, one query per kind of fact, read whole (the command reads every op
of the index at once: a few bulk queries beat thousands of small ones). Parameters are bound, never formatted in.
Results are plain dicts (column -> value)."""
from __future__ import annotations

from ..trace.facts import rows as _rows  # the query side's one row reader

# the macros that open a block of registrations (torch/library.h); TORCH_LIBRARY_IMPL(ns, key, m) names the key
LIBRARY_MACROS = ("TORCH_LIBRARY", "TORCH_LIBRARY_FRAGMENT", "TORCH_LIBRARY_IMPL")
# the methods of torch::Library a block calls: def (a schema), impl (a kernel), fallback (a backend fallback)
LIBRARY_METHODS = ("def", "impl", "fallback")


def native_functions(con) -> list[dict]:
    return _rows(con, "SELECT id, name, overload, full_name, schema, structured, structured_delegate, autogen, "
                      "file, line FROM native_functions ORDER BY id")


def dispatch_rows(con) -> list[dict]:
    return _rows(con, "SELECT id, native_function_id, dispatch_key, kernel, implicit, file, line "
                      "FROM native_dispatch ORDER BY id")


def library_blocks(con) -> list[dict]:
    """TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT / TORCH_LIBRARY_IMPL blocks: the build reads each as a function
    definition whose name is the macro and whose parameter list is the macro's arguments."""
    marks = ",".join("?" * len(LIBRARY_MACROS))
    return _rows(con, f"SELECT name AS macro, signature, file, line, end_line FROM symbols WHERE name IN ({marks}) "
                      f"AND language IN ('cpp', 'cuda') ORDER BY file, line", LIBRARY_MACROS)


def library_calls(con) -> list[dict]:
    """m.def / m.impl / m.fallback method calls with their arguments as written (the block is matched by file and
    line range, in Python: one query, no join over 500k calls)."""
    marks = ",".join("?" * len(LIBRARY_METHODS))
    return _rows(con, f"SELECT file, line, callee, qualifier, arguments FROM calls WHERE callee IN ({marks}) "
                      f"AND is_method AND language IN ('cpp', 'cuda') ORDER BY file, line", LIBRARY_METHODS)


def kernel_dtypes(con) -> list[dict]:
    """The AT_DISPATCH sites in a dispatch row's kernel definition (op_kernel_links.chosen): dispatch_id, dtypes
    (the macro's family, FLOATING_TYPES_AND2), file, line."""
    return _rows(con, "SELECT l.dispatch_id, t.dtypes, t.file, t.line FROM op_kernel_links l "
                      "JOIN type_dispatches t ON t.caller = l.definition AND t.file = l.def_file "
                      "WHERE l.chosen ORDER BY l.dispatch_id, t.file, t.line")


def stub_dtypes(con) -> list[dict]:
    """The AT_DISPATCH sites in the functions a dispatch row's kernel reaches through a dispatch stub, per device
    (the kernel calls add_stub; CPU registers add_kernel there, whose body holds the AT_DISPATCH)."""
    return _rows(con, "SELECT l.dispatch_id, r.device, t.dtypes, t.file, t.line FROM op_kernel_links l "
                      "JOIN stub_calls s ON s.caller = l.definition AND s.file = l.def_file "
                      "JOIN dispatch_registrations r ON r.stub = s.stub "
                      "JOIN registration_links k ON k.registration_id = r.id "
                      "JOIN type_dispatches t ON t.caller = k.definition AND t.file = k.def_file "
                      "WHERE l.chosen ORDER BY l.dispatch_id, t.file, t.line")


def composite_calls(con, keys: tuple[str, ...]) -> list[dict]:
    """Calls made by the kernel definitions of the dispatch rows of `keys` (the composite ones): native_function_id,
    callee, qualifier, is_method. The caller is matched by qualified name in the definition's own file."""
    marks = ",".join("?" * len(keys))
    return _rows(con, f"SELECT DISTINCT l.native_function_id, c.callee, c.qualifier, c.is_method "
                      f"FROM op_kernel_links l JOIN calls c ON c.caller = l.definition AND c.file = l.def_file "
                      f"WHERE l.chosen AND l.dispatch_key IN ({marks})", keys)


def python_api_counts(con) -> dict[str, int]:
    """op name -> how many Python defs (and module-level aliases) call into it (python_bridges)."""
    return {r["op"]: r["n"] for r in _rows(
        con, "SELECT op, count(DISTINCT file || ':' || caller) AS n FROM python_bridges GROUP BY op")}


# calls that register a Python function in the global decomposition table: decorators above a def
# (torch/_decomp/__init__.py's register_decomposition, torch/_refs' factories that call it for the function's own op),
# and the module-level helpers the build reads as registrations (extract/python.py _registering_helpers), on the line
# of their row
REGISTERING_DECORATORS = ("register_decomposition", "register_meta", "_make_elementwise_unary_reference",
                          "_make_elementwise_binary_reference")
REGISTERING_HELPERS = ("register_inplace", "_create_binary_float_meta_func", "_make_inplace", "_make_copy_from_view")


def python_registrations(con) -> list[dict]:
    """Python meta functions, decompositions and references with the ops they cover (decompositions), and which
    registering decorators sit above the def, or that the row is a registering helper's call (`registered_by`:
    their names; empty: neither, a reference torch/_refs only lists in __all__ (softmax: "CompositeImplicitAutograd
    - don't register decomp"))."""
    found = _rows(con, "SELECT op, overload, kind, function, file, line FROM decompositions ORDER BY file, line")
    files = sorted({r["file"] for r in found})
    if not files:
        return found
    callees = REGISTERING_DECORATORS + REGISTERING_HELPERS
    marks, names = ",".join("?" * len(files)), ",".join("?" * len(callees))
    decorators: dict[str, list[tuple[int, str]]] = {}
    helpers: dict[tuple[str, int], str] = {}
    for r in _rows(con, f"SELECT file, line, callee FROM calls WHERE callee IN ({names}) AND caller = '' "
                        f"AND file IN ({marks})", (*callees, *files)):
        if r["callee"] in REGISTERING_HELPERS:
            helpers[(r["file"], r["line"])] = r["callee"]
        else:
            decorators.setdefault(r["file"], []).append((r["line"], r["callee"]))
    ends: dict[str, list[int]] = {}
    for r in _rows(con, f"SELECT file, end_line FROM symbols WHERE file IN ({marks})", files):
        ends.setdefault(r["file"], []).append(r["end_line"])
    for r in found:  # a decorator call between the end of the definition above and the def line
        above = max((e for e in ends.get(r["file"], ()) if e < r["line"]), default=0)
        helper = helpers.get((r["file"], r["line"]))
        r["registered_by"] = (helper,) if helper else tuple(
            callee for line, callee in decorators.get(r["file"], ()) if above < line < r["line"])
    return found


def checkout_meta(con) -> dict[str, str]:
    return {r["key"]: r["value"] for r in _rows(con, "SELECT key, value FROM meta")}


def python_defined_ops(con, module: str) -> list[dict]:
    """The names a Python module exports (__all__) that it binds by a call: neither a def, a class nor an import of
    its own (torch._prims: `abs = _make_elementwise_unary_prim("abs", ...)` defines prims::abs via torch.library).
    name, file, line (the __all__ entry)."""
    exported = _rows(con, "SELECT name, file, line FROM python_imports WHERE module = ? AND kind = 'all' "
                          "ORDER BY line", (module,))
    if not exported:
        return []
    imported = {r["name"] for r in _rows(con, "SELECT name FROM python_imports WHERE module = ? "
                                              "AND kind IN ('import', 'from', 'alias')", (module,))}
    defined = {r["name"] for r in _rows(con, "SELECT name FROM symbols WHERE file = ? AND scope = ''",
                                        (exported[0]["file"],))}
    return [r for r in exported if r["name"] not in imported and r["name"] not in defined]
