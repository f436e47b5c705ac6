"""facts: every SELECT a diff makes, over one index at a time (the diff compares what these return).

Each function takes an sqlite3 connection and returns plain dicts; names reach SQL only as bound parameters. A
layout test keeps the diff's SQL here, as the trace's is in trace/facts.py.
"""
from __future__ import annotations

import json
from ..trace.facts import rows as _rows  # the query side's one row reader


def meta(con) -> dict[str, str]:
    return {r["key"]: r["value"] for r in _rows(con, "SELECT key, value FROM meta")}


# -- registries -------------------------------------------------------------------------------------------------
def native_entries(con, names: set[str] | None = None) -> list[dict]:
    """native_functions.yaml entries (all, or those whose base name is one of `names`), with their dispatch rows
    as (key, kernel, implicit) tuples."""
    where, params = _only("name", names)
    entries = _rows(con, "SELECT id, name, overload, full_name, schema, variants, structured, structured_delegate, "
                         f"structured_inherits, ufunc_inner_loop, file, line FROM native_functions {where} "
                         "ORDER BY line", params)
    by_id = {e["id"]: {**e, "dispatch": []} for e in entries}
    where, params = _only("function", None if names is None else {e["full_name"] for e in entries})
    for r in _rows(con, "SELECT native_function_id, dispatch_key, kernel, implicit FROM native_dispatch "
                        f"{where} ORDER BY line, dispatch_key", params):
        by_id[r["native_function_id"]]["dispatch"].append((r["dispatch_key"], r["kernel"], bool(r["implicit"])))
    return list(by_id.values())


def derivative_entries(con, full_names: set[str] | None = None) -> list[dict]:
    """derivatives.yaml entries (all, or those of `full_names`), with their formulas as (dispatch_key, inputs,
    formula, line) tuples."""
    where, params = _only("full_name", full_names)
    entries = _rows(con, "SELECT id, name, overload, full_name, schema, output_differentiability, file, line "
                         f"FROM derivatives {where} ORDER BY line", params)
    by_id = {e["id"]: {**e, "formulas": []} for e in entries}
    where, params = _only("function", full_names)
    for r in _rows(con, "SELECT derivative_id, dispatch_key, inputs, formula, line FROM derivative_formulas "
                        f"{where} ORDER BY line", params):
        by_id[r["derivative_id"]]["formulas"].append((r["dispatch_key"], r["inputs"], r["formula"], r["line"]))
    return list(by_id.values())


def _only(column: str, values: set[str] | None) -> tuple[str, tuple]:
    """A WHERE clause keeping rows whose `column` is one of `values` (a JSON array bound as one parameter)."""
    if values is None:
        return "", ()
    return f"WHERE {column} IN (SELECT value FROM json_each(?))", (json.dumps(sorted(values)),)


# -- C++/CUDA -----------------------------------------------------------------------------------------------------
def declared_stubs(con) -> list[dict]:
    """DECLARE_DISPATCH sites: stub, file, line (the first declaration of each stub)."""
    return _rows(con, "SELECT stub, min(file) AS file, min(line) AS line FROM dispatch_stubs "
                      "WHERE action = 'declare' GROUP BY stub ORDER BY stub")


def registrations(con) -> list[dict]:
    """REGISTER_*DISPATCH sites with the registered function's bare name (stub_kernels' kernel)."""
    return _rows(con, "SELECT stub, device, kernel, registered_in AS file, registered_line AS line "
                      "FROM stub_kernels ORDER BY stub, device, registered_in, registered_line")


def global_kernels(con) -> list[dict]:
    """__global__ definitions: name, qualified name, file, line, end_line."""
    return _rows(con, "SELECT name, qualified_name, file, line, end_line FROM symbols WHERE kind = 'global_kernel' "
                      "ORDER BY qualified_name, file, line")


def launch_callers(con) -> dict[str, set[str]]:
    """__global__ qualified name -> the functions that launch it (kernel_launch_sites' callers): where it is
    called from, which a renamed kernel keeps."""
    out: dict[str, set[str]] = {}
    for r in _rows(con, "SELECT definition, caller FROM kernel_launch_sites WHERE definition IS NOT NULL"):
        out.setdefault(r["definition"], set()).add(r["caller"])
    return out


def library_calls(con) -> list[dict]:
    return _rows(con, "SELECT library, function, caller, file, line FROM library_calls "
                      "ORDER BY library, function, file, line")


# -- a fork's own platform --------------------------------------------------------------------------------------
def conditions_naming(con, macro: str) -> list[dict]:
    """#if branches whose test names `macro` (a word of the condition text; filtered by the caller)."""
    return _rows(con, "SELECT file, line, end_line, condition, caller FROM conditions "
                      "WHERE kind = '#if' AND condition LIKE '%' || ? || '%' ESCAPE '\\' ORDER BY file, line",
                 (macro.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"),))


def cpp_files(con) -> list[str]:
    return [r["path"] for r in _rows(con, "SELECT path FROM files WHERE language IN ('cpp', 'cuda') ORDER BY path")]


def code_sites(con) -> list[dict]:
    """What a platform's code can add, each with file and line: registrations, __global__ definitions, launches
    and library calls (`what`: registration, kernel, launch, library)."""
    return _rows(con, """
        SELECT 'registration' AS what, stub || ' -> ' || coalesce(kernel, '') || ' (' || device || ')' AS name,
               file, line, '' AS caller FROM dispatch_registrations
        UNION ALL SELECT 'kernel', qualified_name, file, line, '' FROM symbols WHERE kind = 'global_kernel'
        UNION ALL SELECT 'launch', kernel, file, line, caller FROM kernel_launches
        UNION ALL SELECT 'library', library || ' ' || function, file, line, caller FROM library_calls
        ORDER BY 3, 4""")
