"""link: derived facts (Glean's derived predicates), computed from the per-file facts once per build.

Each link answers "which definition does this name denote" by one rule, here, so that the trace (opindex.trace)
and the SQL views (schema/views.py) read the same answer. All links are recomputed on every build, incremental
ones too: it is cheaper than tracking which files a link depends on (about 1 s on the PyTorch 2.4 tree; README,
"Speed").
"""
from __future__ import annotations

import os
import re
import sqlite3
from collections import defaultdict

from ..sqlite_ddl import LINK_TABLES

CHECKOUT_ID = 1
_KERNEL_KINDS = ("function", "impl_func")  # what a dispatch row can name: free functions, TORCH_IMPL_FUNC
_REGISTERED_KINDS = ("function", "method")
_HELPER_KINDS = ("function", "method", "impl_func", "global_kernel")
# Qualifiers of calls that are not helpers of the kernel: the standard library, c10 utilities, macros.
_NOT_HELPERS = ("c10", "std", "TORCH", "at::_ops")
_STUB_WORD = re.compile(r"\b(\w+_stub)\b")


def derive(con: sqlite3.Connection, root: str | None) -> dict[str, int]:
    """Recompute every link table; returns rows per table."""
    for table in LINK_TABLES:
        con.execute(f"DELETE FROM {table}")  # our own table names
    symbols = _Symbols(con)
    _op_kernels(con, symbols)
    _registrations(con, symbols)
    _launches(con, symbols)
    _calls(con, symbols)
    _stub_arguments(con, root)
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in LINK_TABLES}


class _Symbols:
    """C++/CUDA definitions by unqualified name, with the layer of their file."""

    def __init__(self, con):
        self.by_name: dict[str, list[tuple]] = defaultdict(list)
        for row in con.execute(
                "SELECT s.id, s.name, s.qualified_name, s.kind, s.file, s.line, s.scope, f.layer FROM symbols s "
                "JOIN files f ON f.path = s.file WHERE s.language IN ('cpp', 'cuda') AND s.kind IN "
                "('function', 'method', 'impl_func', 'global_kernel') ORDER BY s.file, s.line"):
            self.by_name[row[1]].append(row)

        self.helpers = {name: defs for name, defs in self.by_name.items()}  # every kind here is a helper kind

    def named(self, name: str, kinds: tuple[str, ...]) -> list[tuple]:
        return [s for s in self.by_name.get(name, ()) if s[3] in kinds]


# symbol tuple fields
_ID, _NAME, _QUAL, _KIND, _FILE, _LINE, _SCOPE, _LAYER = range(8)


def _def(s: tuple | None) -> tuple:
    return (s[_ID], s[_QUAL], s[_FILE], s[_LINE]) if s else (None, None, None, None)


# -- op -> kernel definition ---------------------------------------------------------------------------------------
def kernel_candidates(symbols: _Symbols, kernel: str, prefer_layer: str, structured: bool) -> list[tuple]:
    """Definitions a YAML kernel name refers to, best first.

    `at::native::foo` matches qualified names; a bare name matches symbols.name. Kernels are free functions or
    TORCH_IMPL_FUNCs (never methods such as Vectorized::relu); at::native and ATen's native/ folder come first,
    then the layer asked for (cuda for a CUDA kernel); tests and vectorization headers only as a last resort."""
    bare = kernel.split("::")[-1]
    found = symbols.named(bare, _KERNEL_KINDS)
    if "::" in kernel:
        found = [s for s in found if s[_QUAL] == kernel] or found
    native = [s for s in found if "::native" in s[_SCOPE] or "/native/" in s[_FILE]]
    found = native or [s for s in found if "/test/" not in s[_FILE] and "/vec" not in s[_FILE]]

    def rank(s):
        # a structured entry's kernel is its TORCH_IMPL_FUNC, even when a plain function shares the name
        return (0 if structured and s[_KIND] == "impl_func" else 1,
                0 if s[_QUAL] == f"at::native::{bare}" else 1,
                0 if s[_KIND] == "impl_func" else 1,
                0 if s[_LAYER] == prefer_layer else 1,
                1 if "/quantized/" in s[_FILE] or "/sparse/" in s[_FILE] else 0,
                1 if "placeholder" in s[_FILE].lower() else 0,  # stand-ins built when a library is off
                s[_FILE], s[_LINE])
    return sorted(found, key=rank)


def _op_kernels(con, symbols: _Symbols) -> None:
    rows = []
    for dispatch_id, nf_id, key, kernel, structured in con.execute(
            "SELECT d.id, d.native_function_id, d.dispatch_key, d.kernel, n.structured FROM native_dispatch d "
            "JOIN native_functions n ON n.id = d.native_function_id"):
        cands = kernel_candidates(symbols, kernel, "cuda" if key == "CUDA" else "cpp", bool(structured))
        if not cands:
            rows.append((dispatch_id, nf_id, key, kernel, *_def(None), 0, 1))
            continue
        best = (cands[0][_QUAL], cands[0][_FILE])
        # the C++ overloads of the best definition in its file are all denoted (one of them holds the work)
        chosen = [s for s in cands if (s[_QUAL], s[_FILE]) == best][:3]
        for rank, s in enumerate(cands):
            rows.append((dispatch_id, nf_id, key, kernel, *_def(s), rank, int(s in chosen)))
    con.executemany(f"INSERT INTO op_kernel_links (dispatch_id, native_function_id, dispatch_key, kernel, symbol_id, "
                    f"definition, def_file, def_line, rank, chosen, checkout_id) VALUES "
                    f"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- registration -> definition ------------------------------------------------------------------------------------
def _registrations(con, symbols: _Symbols) -> None:
    rows = []
    for reg_id, stub, device, kernel, file in con.execute(
            "SELECT id, stub, device, kernel, file FROM dispatch_registrations WHERE kernel IS NOT NULL"):
        defs = symbols.named(kernel.split("::")[-1].split("<")[0], _REGISTERED_KINDS)
        same = [s for s in defs if s[_FILE] == file] or defs  # LayerNormKernelImpl exists once per device
        rows.append((reg_id, stub, device, kernel, *_def(same[0] if same else None)))
    con.executemany(f"INSERT INTO registration_links (registration_id, stub, device, kernel, symbol_id, definition, "
                    f"def_file, def_line, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- launch -> __global__ ------------------------------------------------------------------------------------------
def _launches(con, symbols: _Symbols) -> None:
    rows = []
    for launch_id, kernel, file in con.execute(
            "SELECT id, kernel, file FROM kernel_launches WHERE kind = 'chevron'"):
        defs = symbols.named(kernel.split("::")[-1], ("global_kernel",))
        same = [s for s in defs if s[_FILE] == file] or defs
        rows.append((launch_id, kernel, *_def(same[0] if same else None)))
    con.executemany(f"INSERT INTO launch_links (launch_id, kernel, symbol_id, definition, def_file, def_line, "
                    f"checkout_id) VALUES (?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- call -> helper definition -------------------------------------------------------------------------------------
def helper_targets(symbols: _Symbols, file: str, qualifier: str, callee: str) -> list[tuple]:
    """The definition(s) a C++ call of `qualifier::callee` in `file` reaches, by the rule in call_links' comment."""
    defs = symbols.helpers.get(callee)
    if not defs:
        return []
    if qualifier:  # cpublas::gemm is not at::cuda::blas::gemm: a written qualifier must match
        defs = [s for s in defs if s[_QUAL].endswith(f"{qualifier}::{callee}")]
    if len(defs) <= 1:
        return defs
    same_file = [s for s in defs if s[_FILE] == file]
    if not same_file and len(defs) > 3 and not qualifier:
        return []  # a common name with many definitions: not a helper of this file
    if same_file:
        first = same_file[0]
    else:
        folder = file.rsplit("/", 1)[0]
        # real code before stand-ins (ConvPlaceholders.cpp), then the same folder
        first = min(defs, key=lambda s: ("placeholder" in s[_FILE].lower(), not s[_FILE].startswith(folder + "/"),
                                         s[_FILE], s[_LINE]))
    # the C++ overloads of that name in that file: all of them, marked, never one picked
    return [s for s in defs if s[_QUAL] == first[_QUAL] and s[_FILE] == first[_FILE]]


def _calls(con, symbols: _Symbols) -> None:
    rows, helpers = [], symbols.helpers
    sites = set(con.execute("SELECT file, qualifier, callee FROM calls WHERE is_method = 0 AND language != 'python'"))
    for file, qualifier, callee in sorted(sites):
        if callee not in helpers or qualifier in ("at", "at::_ops") or qualifier.startswith(_NOT_HELPERS):
            continue
        targets = helper_targets(symbols, file, qualifier, callee)
        for s in targets:
            rows.append((file, qualifier, callee, *_def(s), len(targets)))
    con.executemany(f"INSERT INTO call_links (file, qualifier, callee, symbol_id, definition, def_file, def_line, "
                    f"overloads, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- stub passed as an argument ------------------------------------------------------------------------------------
def _stub_arguments(con, root: str | None) -> None:
    """A stub call whose stub is not declared anywhere is a helper's parameter (argmax_argmin_impl(..., Stub& stub)):
    the declared stub it stands for is on each line that calls the helper. Those few lines are read here, once."""
    declared = {r[0] for r in con.execute("SELECT DISTINCT stub FROM dispatch_stubs")}
    helpers = [r for r in con.execute("SELECT DISTINCT s.caller, s.file, s.stub FROM stub_calls s WHERE s.caller != ''")
               if r[2] not in declared]
    if not helpers or root is None:
        return
    rows, lines = [], _Lines(root)
    for helper, helper_file, parameter in helpers:
        bare = helper.split("::")[-1]
        for file, line in con.execute("SELECT DISTINCT file, line FROM calls WHERE callee = ? AND language IN "
                                      "('cpp', 'cuda') ORDER BY file, line", (bare,)):
            text = " ".join(lines.get(file, line, 3))
            for stub in dict.fromkeys(_STUB_WORD.findall(text)):
                if stub in declared:
                    rows.append((file, line, helper, parameter, stub))
                    break
    con.executemany(f"INSERT INTO stub_arguments (file, line, helper, parameter, stub, checkout_id) VALUES "
                    f"(?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


class _Lines:
    """Lines of checkout files, each file read once (only files under the root)."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        self.cache: dict[str, list[str]] = {}

    def get(self, rel: str, line: int, count: int) -> list[str]:
        if rel not in self.cache:
            path = os.path.realpath(os.path.join(self.root, rel))
            try:
                if not path.startswith(self.root + os.sep):
                    raise OSError("outside the checkout")
                with open(path, encoding="utf-8", errors="replace") as f:
                    self.cache[rel] = f.read().splitlines()
            except OSError:
                self.cache[rel] = []
        return self.cache[rel][line - 1:line - 1 + count]
