"""link: derived facts (Glean's derived predicates), computed from the per-file facts once per build.

Each link answers "which definition does this name denote" by one rule, here, so that the trace (opindex.trace)
and the SQL views (schema/views.py) read the same answer. All links are recomputed on every build, incremental
ones too: it is cheaper than tracking which files a link depends on (about 4 s of one core on the PyTorch 2.4 tree;
docs/benchmarks.md, "Speed"). This module holds the step (derive) and the small links; the call graph (call_links,
functor_links, device_reach) is callgraph.py's, derived in a forked process beside the indexes in a cold build
with two jobs (callgraph.Beside); what both read (definitions by name, #if conditions, source lines) is
definitions.py's.
"""
from __future__ import annotations

import gc
import json
import re
import sqlite3

from ..pytorch.plumbing import PLUMBING_OPS
from ..pytorch.receivers import split_parameters, takes_arguments
from ..pytorch.stubs import is_stub_call
from ..sqlite_ddl import LINK_TABLES
from .legacy import legacy_links
from .callgraph import CALL_GRAPH_INSERTS, Beside, CallSites, call_graph, relink_calls, walks
from .definitions import S_FILE, S_ID, S_KIND, S_LAYER, S_LINE, S_QUAL, S_SCOPE, S_SIG, \
    Conditions, Includes, Symbols, definition_columns

CHECKOUT_ID = 1
_KERNEL_KINDS = ("function", "impl_func")  # what a dispatch row can name: free functions, TORCH_IMPL_FUNC
_REGISTERED_KINDS = ("function", "method")
_STUB_WORD = re.compile(r"\b(\w+_stub)\b")


def derive(con: sqlite3.Connection, root: str | None, changed: set[str] | None = None,
           beside: "Beside | None" = None) -> dict[str, int]:
    """Recompute the link tables; returns rows per table.

    `changed`: the files an incremental build re-extracted or removed (None: all links anew). Links read only
    C++/CUDA facts and the registries, so a rebuild where only Python changed keeps them all (but generated_launches,
    read from torchgen's Python, when a torchgen file changed); otherwise the small
    global links are redone, and call_links and receiver_types only for the call sites a changed file holds or
    whose callee a changed file defines (or defined).

    `beside`: a cold build's call links, being derived in a forked process (Beside) while this one creates the
    indexes and derives the rest; their rows are inserted here.

    The cyclic garbage collector is off meanwhile: the step builds hundreds of thousands of tuples and sets and no
    reference cycles, and the collector's passes over them cost a fifth of the call graph (1.6 -> 1.35 s on the
    PyTorch 2.4 tree)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _derive(con, root, changed, beside)
    finally:
        if enabled:
            gc.enable()


def _derive(con: sqlite3.Connection, root: str | None, changed: set[str] | None,
            beside: "Beside | None") -> dict[str, int]:
    native = {p for p in (changed or ()) if not p.endswith((".py", ".pyi"))}
    if changed is not None and not native:
        if any(p.startswith("torchgen/") for p in changed) and con.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'generated_launches'").fetchone():
            con.execute("DELETE FROM generated_launches")  # read from torchgen's Python: anew
            _generated_launches(con)
        return _counts(con)
    full = changed is None or any(p.endswith(".yaml") for p in native)
    if "arguments" not in {r[1] for r in con.execute("PRAGMA table_info(calls)")}:
        # an index being migrated, at a revision before 0008: the facts the link step reads are not all there yet;
        # the last migration (0008) derives the links
        return _counts(con)
    symbols = Symbols(con)
    includes = Includes(con)
    conditions = Conditions(includes, con)
    present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in ("op_kernel_links", "registration_links", "launch_links", "stub_arguments", "device_reach",
                  "generated_launches", "functor_links", "legacy_kernel_links"):
        if table in present:
            con.execute(f"DELETE FROM {table}")  # our own table names
    _op_kernels(con, symbols, conditions)
    if "legacy_kernel_links" in present:
        con.executemany(f"INSERT INTO legacy_kernel_links (dispatch_id, kernel, declaration, decl_file, decl_line, "
                        f"cname, symbol_id, definition, def_file, def_line, checkout_id) VALUES "
                        f"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", legacy_links(con, symbols, root))
    _registrations(con, symbols)
    _launches(con, symbols)
    if full:
        con.execute("DELETE FROM receiver_types")
    _receiver_types(con, files=None if full else native)
    _stub_arguments(con, symbols)
    _generated_launches(con)
    # the call graph: call_links, then functor_links and device_reach, which walk them
    if full:
        con.execute("DELETE FROM call_links")
        if beside is None or not beside.receive(lambda part: _insert(con, part)):
            # no forked process, or it failed: derived here (an error in that code surfaces here), anew
            for table in CALL_GRAPH_INSERTS:
                if table in present:
                    con.execute(f"DELETE FROM {table}")  # our own table names: a part that came before it failed
            _insert(con, call_graph(con, symbols, includes, conditions, "functor_links" in present))
    else:
        calls = CallSites(con)
        links = relink_calls(con, symbols, calls.keys, conditions, native, calls.specialized)
        _insert(con, walks(con, symbols, includes, calls, links, "functor_links" in present))
    return _counts(con)


def _insert(con, rows: dict[str, list[tuple]]) -> None:
    for table, found in rows.items():
        con.executemany(CALL_GRAPH_INSERTS[table], found)


def _counts(con) -> dict[str, int]:
    present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in LINK_TABLES if t in present}


def fits_schema(s: tuple, schema: str) -> bool:
    """A C++ overload fits a schema unless their Dimname-ness differs: sort(Tensor, Dimname, bool) is the named
    overload of sort.dimname, never the kernel of sort(Tensor, int, bool)."""
    sig = s[S_SIG]
    return sig is None or s[S_KIND] != "function" or ("Dimname" in sig) == ("Dimname" in schema)


_SCHEMA_PARAMS = re.compile(r"\((.*)\)\s*->")


def by_parameters(overloads: list[tuple], schema: str) -> list[tuple]:
    """Of several C++ overloads, those with as many parameters as the schema and, position by position, a Tensor
    where the schema has one, a Scalar or a number where it has one, when at least one is so; else all of them (an
    `out` first, as older code writes it, shifts the positions)."""
    if len(overloads) < 2:
        return overloads
    return [s for s in overloads if fits_parameters(s, schema)] or overloads


def _takes_schema(s: tuple, schema: str) -> bool | None:
    """Whether a C++ definition can take as many arguments as the schema has; None where either does not say."""
    m = _SCHEMA_PARAMS.search(schema or "")
    count = len([p for p in split_parameters(m.group(1)) if p.strip() != "*"]) if m else 0
    return takes_arguments(s[S_SIG], count) if count else None


def fits_parameters(s: tuple, schema: str) -> bool | None:
    """Whether a C++ definition takes the schema's parameters (by_parameters' test); None where the schema or the
    signature does not say."""
    m = _SCHEMA_PARAMS.search(schema or "")
    wanted = [_param_kind(p.split()[0]) for p in split_parameters(m.group(1)) if p.strip() != "*"] if m else []
    if not wanted or not s[S_SIG]:
        return None
    have = [_param_kind(p) for p in split_parameters(s[S_SIG])]
    return len(have) == len(wanted) and all(a == b or ("other" in (a, b) and "Tensor" not in (a, b))
                                            for a, b in zip(wanted, have))


_NUMBER = re.compile(r"^(?:const\s+)?(?:c10::)?(?:double|float|int64_t|int|bool|SymInt|int\b|float\b)(?![\w?\[:])")


def _param_kind(text: str) -> str:
    """Scalar, Tensor, number or other, for a schema type (`Scalar`, `Tensor(a!)`, `float`) or a C++ parameter
    (`const Scalar& v`, `double rcond`): only Scalar, Tensor and number tell overloads apart."""
    t = text.strip()
    if re.search(r"(?<![\w:])(?:at::|c10::)?Scalar(?![\w?\[])", t):
        return "Scalar"
    if re.search(r"(?<![\w:])(?:at::)?Tensor(?![\w?\[])", t) and "optional" not in t and "List" not in t:
        return "Tensor"
    if _NUMBER.match(t):
        return "number"
    return "other"


def kernel_candidates(symbols: Symbols, kernel: str, prefer_layer: str, structured: bool,
                      schema: str = "") -> list[tuple]:
    """Definitions a YAML kernel name refers to, best first.

    `at::native::foo` matches qualified names; a bare name matches symbols.name. Kernels are free functions or
    TORCH_IMPL_FUNCs (never methods such as Vectorized::relu); at::native and ATen's native/ folder come first,
    then the layer asked for (cuda for a CUDA kernel); tests and vectorization headers only as a last resort."""
    bare = kernel.split("::")[-1]
    found = symbols.named(bare, _KERNEL_KINDS)
    if "::" in kernel:
        found = [s for s in found if s[S_QUAL] == kernel] or found
    native = [s for s in found if "::native" in s[S_SCOPE] or "/native/" in s[S_FILE]]
    found = native or [s for s in found if "/test/" not in s[S_FILE] and "/vec" not in s[S_FILE]]

    def rank(s):
        # a structured entry's kernel is its TORCH_IMPL_FUNC, even when a plain function shares the name
        return (0 if structured and s[S_KIND] == "impl_func" else 1,
                0 if fits_schema(s, schema) else 1,
                # a same-named definition of other parameters is another overload's kernel (max(Tensor self):
                # ReduceAllOps.cpp's max(self), not BinaryOps.cpp's max(self, other))
                0 if s[S_KIND] == "impl_func" or _takes_schema(s, schema) is not False else 1,
                0 if s[S_QUAL] == f"at::native::{bare}" else 1,
                0 if s[S_KIND] == "impl_func" else 1,
                0 if s[S_LAYER] == prefer_layer else 1,
                1 if "/quantized/" in s[S_FILE] or "/sparse/" in s[S_FILE] else 0,
                1 if "placeholder" in s[S_FILE].lower() else 0,  # stand-ins built when a library is off
                s[S_FILE], s[S_LINE])
    return sorted(found, key=rank)


def _op_kernels(con, symbols: Symbols, conditions: "Conditions") -> None:
    rows = []
    for dispatch_id, nf_id, key, kernel, structured, schema in con.execute(
            "SELECT d.id, d.native_function_id, d.dispatch_key, d.kernel, n.structured, n.schema FROM "
            "native_dispatch d JOIN native_functions n ON n.id = d.native_function_id"):
        cands = conditions.demote(kernel_candidates(symbols, kernel, "cuda" if key == "CUDA" else "cpp",
                                                    bool(structured), schema))
        if not cands:
            rows.append((dispatch_id, nf_id, key, kernel, *definition_columns(None), 0, 1, None))
            continue
        best = (cands[0][S_QUAL], cands[0][S_FILE])
        # the C++ overloads of the best definition in its file are all denoted (one of them holds the work), but
        # those whose Scalar/Tensor parameters are the schema's when some are (fill_.Scalar: fill_(Tensor&, const
        # Scalar&), not fill_(Tensor&, const Tensor&))
        # (stand-ins go first: a `#if !AT_CUDNN_ENABLED()` stub may fit the schema's parameters as well or better)
        chosen = by_parameters(conditions.real(
            [s for s in cands if (s[S_QUAL], s[S_FILE]) == best and fits_schema(s, schema)]), schema)[:3]
        for rank, s in enumerate(cands):
            rows.append((dispatch_id, nf_id, key, kernel, *definition_columns(s), rank, int(s in chosen),
                         conditions.of(s) if s in chosen and len(chosen) > 1 else None))
    con.executemany(f"INSERT INTO op_kernel_links (dispatch_id, native_function_id, dispatch_key, kernel, symbol_id, "
                    f"definition, def_file, def_line, rank, chosen, condition, checkout_id) VALUES "
                    f"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- registration -> definition ------------------------------------------------------------------------------------
def _registrations(con, symbols: Symbols) -> None:
    rows = []
    for reg_id, stub, device, kernel, file in con.execute(
            "SELECT id, stub, device, kernel, file FROM dispatch_registrations WHERE kernel IS NOT NULL"):
        defs = symbols.named(kernel.split("::")[-1].split("<")[0], _REGISTERED_KINDS)
        same = [s for s in defs if s[S_FILE] == file] or defs  # LayerNormKernelImpl exists once per device
        rows.append((reg_id, stub, device, kernel, *definition_columns(same[0] if same else None)))
    con.executemany(f"INSERT INTO registration_links (registration_id, stub, device, kernel, symbol_id, definition, "
                    f"def_file, def_line, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- launch -> __global__ ------------------------------------------------------------------------------------------
def _launches(con, symbols: Symbols) -> None:
    rows = []
    for launch_id, kernel, file, caller in con.execute(
            "SELECT id, kernel, file, caller FROM kernel_launches WHERE kind IN ('chevron', 'handed')"):
        defs = symbols.named(kernel.split("::")[-1], ("global_kernel",))
        same = [s for s in defs if s[S_FILE] == file] or defs
        # of same-named kernels, the one in the launching function's namespace: mbtopk::launch launches
        # mbtopk::gatherTopK, not sbtopk::gatherTopK of the same file
        where = (caller or "").split("::")[:-1]
        # (a test's kernel of that name last; an overload whose body only asserts false last too: CUDALoops.cuh's
        # `vectorized_elementwise_kernel_unary_opt` at :121 is the `assert(0)` stand-in its enable_if keeps for the
        # types the real one at :129 does not take); stable: source order next
        stand_ins = _assert_only(con, same) if len(same) > 1 else set()
        same.sort(key=lambda s: ("/test/" in s[S_FILE], s[S_ID] in stand_ins,
                                 -_shared_prefix(s[S_QUAL].split("::")[:-1], where),
                                 s[S_QUAL].count("::")))  # then the shallowest: ::k from a global function
        rows.append((launch_id, kernel, *definition_columns(same[0] if same else None)))
    con.executemany(f"INSERT INTO launch_links (launch_id, kernel, symbol_id, definition, def_file, def_line, "
                    f"checkout_id) VALUES (?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


_ASSERTS = frozenset({"assert", "CUDA_KERNEL_ASSERT", "TORCH_INTERNAL_ASSERT", "TORCH_CHECK"})


def _assert_only(con, defs: list[tuple]) -> set[int]:
    """The symbol ids of `defs` whose body makes one call, an assert whose first argument is a false literal
    (`assert(0)`, `TORCH_CHECK(false, ...)`)."""
    out = set()
    for s in defs:
        found = con.execute("SELECT c.callee, c.arguments FROM calls c JOIN symbols d ON d.id = ? WHERE c.file = "
                            "d.file AND c.caller = d.qualified_name AND c.line BETWEEN d.line AND d.end_line",
                            (s[S_ID],)).fetchall()
        if len(found) == 1 and found[0][0] in _ASSERTS:
            arguments = json.loads(found[0][1] or "[]")
            if arguments and arguments[0].strip().lower() in ("0", "false"):
                out.add(s[S_ID])
    return out


def _shared_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# -- launcher calls written by codegen ------------------------------------------------------------------------------
def _generated_launches(con) -> None:
    """The TensorIterator launcher calls in the text of torchgen's Python defs (generated_launch_sites, read at
    extraction), each linked to its def: the innermost one around the line of that name."""
    rows = []
    for file, line, launcher, caller in con.execute("SELECT file, line, launcher, caller FROM generated_launch_sites "
                                                    "ORDER BY id"):
        found = con.execute("SELECT id, qualified_name FROM symbols WHERE file = ? AND qualified_name = ? AND kind IN "
                            "('function', 'method') AND line <= ? AND end_line >= ? ORDER BY line DESC, id DESC "
                            "LIMIT 1", (file, caller, line, line)).fetchone()
        if found:
            rows.append((found[0], found[1], file, line, launcher))
    con.executemany(f"INSERT INTO generated_launches (symbol_id, function, file, line, launcher, checkout_id) "
                    f"VALUES (?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- stub passed as an argument ------------------------------------------------------------------------------------
def _stub_arguments(con, symbols: Symbols) -> None:
    """A stub call whose stub is not declared anywhere is a helper's parameter (argmax_argmin_impl(..., Stub& stub)):
    the declared stub it stands for is an argument of each call of the helper (calls.arguments)."""
    declared = {r[0] for r in con.execute("SELECT DISTINCT stub FROM dispatch_stubs")}
    helpers = [r for r in con.execute("SELECT DISTINCT s.caller, s.file, s.stub FROM stub_calls s WHERE s.caller != ''")
               if r[2] not in declared and any(is_stub_call(r[2], declared, d[S_SIG]) for d in symbols.named(
                   r[0].rpartition("::")[2], ("function", "method", "impl_func")) if d[S_QUAL] == r[0])]
    rows = []
    for helper, helper_file, parameter in helpers:
        bare = helper.split("::")[-1]
        at: dict[tuple[str, int], list[str]] = {}  # (file, line) -> the arguments of the calls there, in order
        for file, line, written in con.execute("SELECT file, line, arguments FROM calls WHERE callee = ? AND "
                                               "language IN ('cpp', 'cuda') ORDER BY file, line, id", (bare,)):
            at.setdefault((file, line), []).extend(json.loads(written) if written else ())
        for (file, line), args in at.items():
            for stub in dict.fromkeys(_STUB_WORD.findall(" ".join(args))):
                if stub in declared:
                    rows.append((file, line, helper, parameter, stub))
                    break
    con.executemany(f"INSERT INTO stub_arguments (file, line, helper, parameter, stub, checkout_id) VALUES "
                    f"(?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- the declared type of a method call's receiver -----------------------------------------------------------------
def _receiver_types(con, files: set[str] | None = None) -> None:
    """For `x.f(...)` where f names a Tensor-method op the walk would follow (not a plumbing op) and x is a local
    variable: its declaration above the call in the same function (calls.receiver_type, read at extraction). With
    `files`, only the calls of those files (their old rows are replaced)."""
    if files is not None:
        con.executemany("DELETE FROM receiver_types WHERE file = ?", [(f,) for f in sorted(files)])
    methods = {r[0] for r in con.execute("SELECT DISTINCT name FROM native_functions WHERE variants LIKE "
                                         "'%method%'")} - PLUMBING_OPS
    marks = ",".join("?" * len(methods))
    rows = [r for r in con.execute(
        f"SELECT file, line, qualifier, receiver_type FROM calls WHERE callee IN ({marks}) AND is_method = 1 AND "
        f"receiver_type IS NOT NULL ORDER BY id", sorted(methods)) if files is None or r[0] in files]
    con.executemany(f"INSERT INTO receiver_types (file, line, receiver, declared, checkout_id) VALUES "
                    f"(?, ?, ?, ?, {CHECKOUT_ID})", rows)
