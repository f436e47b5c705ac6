"""link: derived facts (Glean's derived predicates), computed from the per-file facts once per build.

Each link answers "which definition does this name denote" by one rule, here, so that the trace (opindex.trace)
and the SQL views (schema/views.py) read the same answer. All links are recomputed on every build, incremental
ones too: it is cheaper than tracking which files a link depends on (about 4 s of one core on the PyTorch 2.4 tree;
README, "Speed"). A cold build with two jobs derives the call graph (call_links, functor_links, device_reach) in a
forked process while the writing process creates the indexes and derives the rest (Beside).
"""
from __future__ import annotations

import bisect
import re
import sqlite3
from collections import defaultdict

from ..extract.cpp_macros import arguments
from ..extract.cpp_names import launch_kind
from ..paths import safe_path
from ..pytorch.plumbing import PLUMBING_OPS
from ..pytorch.receivers import split_parameters
from ..sqlite_ddl import LINK_TABLES

CHECKOUT_ID = 1
_KERNEL_KINDS = ("function", "impl_func")  # what a dispatch row can name: free functions, TORCH_IMPL_FUNC
_REGISTERED_KINDS = ("function", "method")
_HELPER_KINDS = ("function", "method", "impl_func", "global_kernel")
# Qualifiers of calls that are not helpers of the kernel: the standard library, c10 utilities, macros.
_NOT_HELPERS = ("c10", "std", "TORCH", "at::_ops")
_STUB_WORD = re.compile(r"\b(\w+_stub)\b")


def derive(con: sqlite3.Connection, root: str | None, changed: set[str] | None = None,
           beside: "Beside | None" = None) -> dict[str, int]:
    """Recompute the link tables; returns rows per table.

    `changed`: the files an incremental build re-extracted or removed (None: all links anew). Links read only
    C++/CUDA facts and the registries, so a rebuild where only Python changed keeps them all; otherwise the small
    global links are redone, and call_links and receiver_types only for the call sites a changed file holds or
    whose callee a changed file defines (or defined).

    `beside`: a cold build's call links, being derived in a forked process (Beside) while this one creates the
    indexes and derives the rest; their rows are inserted here."""
    native = {p for p in (changed or ()) if not p.endswith((".py", ".pyi"))}
    if changed is not None and not native:
        return _counts(con)
    full = changed is None or any(p.endswith(".yaml") for p in native)
    symbols = _Symbols(con)
    lines = _Lines(root) if root else None
    conditions = _Conditions(lines)
    # an index migrated revision by revision derives links at 0002 before 0004 adds functor_links (and again after)
    present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in ("op_kernel_links", "registration_links", "launch_links", "stub_arguments", "device_reach",
                  "generated_launches", "functor_links"):
        if table in present:
            con.execute(f"DELETE FROM {table}")  # our own table names
    _op_kernels(con, symbols, conditions)
    _registrations(con, symbols)
    _launches(con, symbols)
    if full:
        con.execute("DELETE FROM receiver_types")
    _receiver_types(con, lines, files=None if full else native)
    _stub_arguments(con, lines)
    _generated_launches(con, lines)
    # the call graph: call_links, then functor_links and device_reach, which walk them
    if full:
        con.execute("DELETE FROM call_links")
        rows = beside.rows() if beside is not None else None
        if rows is None:  # no forked process, or it failed: derived here (an error in that code surfaces here)
            rows = call_graph(con, symbols, lines, conditions, "functor_links" in present)
    else:
        calls = _CallSites(con)
        links = _relink_calls(con, symbols, calls.sites, conditions, native)
        rows = _walks(con, lines, calls, links, "functor_links" in present)
    for table, found in rows.items():
        con.executemany(_CALL_GRAPH_INSERTS[table], found)
    return _counts(con)


class _CallSites:
    """The C++ calls the call graph reads, in one scan of the calls table (in a cold build the forked process reads
    them before any index exists): the distinct non-method sites (file, caller, qualifier, callee), for call_links
    and device_reach, with their lines; and the method calls of `working` names, for functor_links."""

    def __init__(self, con):
        # only methods named like one that itself launches, calls a library or a stub can bring device code
        self.working = set()
        for table in ("kernel_launches", "library_calls", "stub_calls"):
            self.working |= {r[0].rpartition("::")[2] for r in con.execute(f"SELECT DISTINCT caller FROM {table}")}
        con.execute("CREATE TEMP TABLE IF NOT EXISTS _working (name TEXT PRIMARY KEY)")
        con.execute("DELETE FROM _working")
        con.executemany("INSERT OR IGNORE INTO _working VALUES (?)", [(n,) for n in self.working])
        # two scans in C (no index is needed, none may exist yet) rather than one with a branch per row in Python
        self.rows: list[tuple[str, int, str, str, str]] = con.execute(  # (file, line, caller, qualifier, callee)
            "SELECT file, line, caller, qualifier, callee FROM calls WHERE language != 'python' AND is_method = 0"
        ).fetchall()
        self.methods: set[tuple[str, str, str, str]] = set(con.execute(  # (caller, file, receiver, method)
            "SELECT caller, file, qualifier, callee FROM calls WHERE language != 'python' AND is_method = 1 AND "
            "callee IN _working"))
        self.sites = {(file, caller, qualifier, callee) for file, _, caller, qualifier, callee in self.rows}

    def lines(self, keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], list[int]]:
        """(file, qualifier, callee) -> the lines of those calls, ascending."""
        at: dict[tuple[str, str, str], set[int]] = defaultdict(set)
        for file, line, _, qualifier, callee in self.rows:
            if (file, qualifier, callee) in keys:
                at[(file, qualifier, callee)].add(line)
        return {key: sorted(found) for key, found in at.items()}


def call_graph(con, symbols: "_Symbols", lines: "_Lines | None", conditions: "_Conditions",
               functors: bool = True) -> dict[str, list[tuple]]:
    """Every call link, and the functor links and device reach that walk them: rows per table, not inserted."""
    calls = _CallSites(con)
    rows, links = _calls(symbols, calls.sites, conditions)
    return {"call_links": rows, **_walks(con, lines, calls, links, functors)}


def _walks(con, lines, calls: _CallSites, links: dict, functors: bool) -> dict[str, list[tuple]]:
    out, extra = {}, []
    if functors:
        out["functor_links"], extra = _functors(con, lines, links, calls)
    out["device_reach"] = _device_reach(con, calls.sites, links, extra)
    return out


_CALL_GRAPH_INSERTS = {
    "call_links": f"INSERT INTO call_links (file, qualifier, callee, symbol_id, definition, def_file, def_line, "
                  f"overloads, condition, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})",
    "functor_links": f"INSERT INTO functor_links (function_id, parameter, method, functor, file, line, symbol_id, "
                     f"definition, def_file, def_line, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                     f"{CHECKOUT_ID})",
    "device_reach": f"INSERT INTO device_reach (symbol_id, distance, reaches, checkout_id) VALUES "
                    f"(?, ?, ?, {CHECKOUT_ID})",
}


class Beside:
    """The call graph of a cold build, derived in a forked process while the writing process creates the indexes
    and derives the other links: on two cores the two halves of the link step take about the same time (README,
    "Speed"). The process reads the committed facts through its own read-only connection (none of it needs an
    index) and sends its rows back through a pipe; the writing process inserts them. Its connection is closed
    before it sends, so it never holds a lock the writing process waits for."""

    def __init__(self, db, root: str | None):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_beside, args=(child, str(db), root), daemon=True,
                                name="opindex-call-graph")
        self.proc.start()
        child.close()

    def rows(self) -> dict[str, list[tuple]] | None:
        """Its rows, or None when it failed or died (the caller then derives them itself)."""
        try:
            rows = self.conn.recv()
        except (EOFError, OSError):
            rows = None
        finally:
            self.close()
        return rows

    def close(self) -> None:
        """Stop waiting for it: a process still sending finds the pipe closed and ends."""
        self.conn.close()
        self.proc.join(5)
        if self.proc.exitcode is None:
            self.proc.kill()
            self.proc.join()


def _beside(conn, db: str, root: str | None) -> None:
    from ..db import readonly_uri
    rows = None
    try:
        con = sqlite3.connect(readonly_uri(db), uri=True)
        try:
            lines = _Lines(root) if root else None
            rows = call_graph(con, _Symbols(con), lines, _Conditions(lines))
        finally:
            con.close()  # before sending: the writing process commits once it has the rows
    except Exception:  # noqa: BLE001 - the writing process derives them itself, and sees the error there
        rows = None
    conn.send(rows)
    conn.close()


def _counts(con) -> dict[str, int]:
    present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in LINK_TABLES if t in present}


def _relink_calls(con, symbols: "_Symbols", sites: set[tuple], conditions: "_Conditions",
                  changed: set[str]) -> dict[tuple[str, str, str], list[int]]:
    """call_links again for the sites of changed files and the sites calling a name a changed file defines now or
    defined before; the other rows stay. Returns every link, old and new."""
    marks = ",".join("?" * len(changed))
    files = sorted(changed)
    names = {r[0] for r in con.execute(f"SELECT DISTINCT name FROM symbols WHERE file IN ({marks})", files)}
    names |= {r[0] for r in con.execute(f"SELECT DISTINCT callee FROM call_links WHERE def_file IN ({marks})",
                                        files)}
    stale = [(f, q, c) for f, q, c in con.execute("SELECT DISTINCT file, qualifier, callee FROM call_links")
             if f in changed or c in names]
    con.executemany("DELETE FROM call_links WHERE file = ? AND qualifier = ? AND callee = ?", stale)
    rows, _ = _calls(symbols, {s for s in sites if s[0] in changed or s[3] in names}, conditions)
    con.executemany(_CALL_GRAPH_INSERTS["call_links"], rows)
    links: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for file, qualifier, callee, sid in con.execute("SELECT file, qualifier, callee, symbol_id FROM call_links "
                                                    "ORDER BY id"):
        links[(file, qualifier, callee)].append(sid)
    return links


class _Symbols:
    """C++/CUDA definitions by unqualified name, with the layer of their file."""

    def __init__(self, con):
        self.by_name: dict[str, list[tuple]] = defaultdict(list)
        layer = dict(con.execute("SELECT path, layer FROM files"))
        # (a join and an ORDER BY in SQL take longer than this dict and a stable sort: rows of one line in id order)
        rows = [(sid, name, qual, kind, file, line, scope, layer[file], sig) for sid, name, qual, kind, file, line,
                scope, sig in con.execute(
                    "SELECT id, name, qualified_name, kind, file, line, scope, signature FROM symbols WHERE language "
                    "IN ('cpp', 'cuda') AND kind IN ('function', 'method', 'impl_func', 'global_kernel') ORDER BY id")
                if file in layer]
        rows.sort(key=lambda r: (r[_FILE], r[_LINE]))
        for row in rows:
            self.by_name[row[_NAME]].append(row)

        self.helpers = {name: defs for name, defs in self.by_name.items()}  # every kind here is a helper kind
        self.generic = _Generic(con)

    def named(self, name: str, kinds: tuple[str, ...]) -> list[tuple]:
        return [s for s in self.by_name.get(name, ()) if s[3] in kinds]


class _Generic:
    """Legacy TH/THC/THNN generic code: `THCudaDoubleTensor_sort` is `THCTensor_(sort)` of THC/generic/ for one
    type. The forms come from the index's own #defines (`#define THCTensor_(NAME) TH_CONCAT_4(TH,CReal,Tensor_,NAME)`:
    a literal head, the type's name, a literal tail, the function's name); extraction wrote the definitions'
    names as `THCTensor_sort` (extract/cpp_names.prepare)."""

    TYPE_PARTS = ("Real", "CReal")  # the per-type part of a TH_CONCAT name, as TH's generic headers call it

    def __init__(self, con):
        self.forms: list[tuple[str, str, str, str]] = []  # (macro, head, tail, type part)
        for name, params, body in con.execute(
                "SELECT DISTINCT name, parameters, body FROM macros WHERE body LIKE 'TH_CONCAT_%' AND "
                "parameters IS NOT NULL ORDER BY name"):
            m = re.fullmatch(r"TH_CONCAT_\d\((.*)\)", body.strip())
            plist = [p.strip() for p in params.strip("()").split(",")]
            parts = [a.strip() for a in m.group(1).split(",")] if m else []
            typed = [i for i, a in enumerate(parts[:-1]) if a in self.TYPE_PARTS]
            if len(plist) != 1 or not parts or parts[-1] != plist[0] or len(typed) != 1:
                continue
            i = typed[0]
            self.forms.append((name, "".join(parts[:i]), "".join(parts[i + 1:-1]), parts[i]))

    def names(self, callee: str) -> list[str]:
        """The generic names `callee` may be an instance of; CUDA-typed names (THCuda...) first to CReal forms."""
        out = []
        for macro, head, tail, part in self.forms:
            if not callee.startswith(head):
                continue
            rest = callee[len(head):]
            for i in range(1, len(rest)):  # the type is CamelCase words (Cuda, CudaDouble, Float): cut at one
                if rest[i].isupper() and rest[i:].startswith(tail) and len(rest) > i + len(tail):
                    cuda = rest[:i].startswith("Cuda")
                    out.append(((part == "CReal") != cuda, i, macro + rest[i + len(tail):]))
        return [name for _, _, name in sorted(out)]  # the shortest type name that leaves a definition wins


# symbol tuple fields
_ID, _NAME, _QUAL, _KIND, _FILE, _LINE, _SCOPE, _LAYER, _SIG = range(9)


def _def(s: tuple | None) -> tuple:
    return (s[_ID], s[_QUAL], s[_FILE], s[_LINE]) if s else (None, None, None, None)


# -- op -> kernel definition ---------------------------------------------------------------------------------------
def fits_schema(s: tuple, schema: str) -> bool:
    """A C++ overload fits a schema unless their Dimname-ness differs: sort(Tensor, Dimname, bool) is the named
    overload of sort.dimname, never the kernel of sort(Tensor, int, bool)."""
    sig = s[_SIG]
    return sig is None or s[_KIND] != "function" or ("Dimname" in sig) == ("Dimname" in schema)


_SCHEMA_PARAMS = re.compile(r"\((.*)\)\s*->")


def by_parameters(overloads: list[tuple], schema: str) -> list[tuple]:
    """Of several C++ overloads, those with as many parameters as the schema and, position by position, a Tensor
    where the schema has one, a Scalar or a number where it has one, when at least one is so; else all of them (an
    `out` first, as older code writes it, shifts the positions)."""
    if len(overloads) < 2:
        return overloads
    m = _SCHEMA_PARAMS.search(schema or "")
    wanted = [_param_kind(p.split()[0]) for p in split_parameters(m.group(1)) if p.strip() != "*"] if m else []
    if not wanted:
        return overloads
    fit = []
    for s in overloads:
        have = [_param_kind(p) for p in split_parameters(s[_SIG])] if s[_SIG] else []
        if len(have) == len(wanted) and all(a == b or ("other" in (a, b) and "Tensor" not in (a, b))
                                            for a, b in zip(wanted, have)):
            fit.append(s)
    return fit or overloads


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


def kernel_candidates(symbols: _Symbols, kernel: str, prefer_layer: str, structured: bool,
                      schema: str = "") -> list[tuple]:
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
                0 if fits_schema(s, schema) else 1,
                0 if s[_QUAL] == f"at::native::{bare}" else 1,
                0 if s[_KIND] == "impl_func" else 1,
                0 if s[_LAYER] == prefer_layer else 1,
                1 if "/quantized/" in s[_FILE] or "/sparse/" in s[_FILE] else 0,
                1 if "placeholder" in s[_FILE].lower() else 0,  # stand-ins built when a library is off
                s[_FILE], s[_LINE])
    return sorted(found, key=rank)


def _op_kernels(con, symbols: _Symbols, conditions: "_Conditions") -> None:
    rows = []
    for dispatch_id, nf_id, key, kernel, structured, schema in con.execute(
            "SELECT d.id, d.native_function_id, d.dispatch_key, d.kernel, n.structured, n.schema FROM "
            "native_dispatch d JOIN native_functions n ON n.id = d.native_function_id"):
        cands = conditions.demote(kernel_candidates(symbols, kernel, "cuda" if key == "CUDA" else "cpp",
                                                    bool(structured), schema))
        if not cands:
            rows.append((dispatch_id, nf_id, key, kernel, *_def(None), 0, 1, None))
            continue
        best = (cands[0][_QUAL], cands[0][_FILE])
        # the C++ overloads of the best definition in its file are all denoted (one of them holds the work), but
        # those whose Scalar/Tensor parameters are the schema's when some are (fill_.Scalar: fill_(Tensor&, const
        # Scalar&), not fill_(Tensor&, const Tensor&))
        chosen = conditions.real(by_parameters(
            [s for s in cands if (s[_QUAL], s[_FILE]) == best and fits_schema(s, schema)], schema))[:3]
        for rank, s in enumerate(cands):
            rows.append((dispatch_id, nf_id, key, kernel, *_def(s), rank, int(s in chosen),
                         conditions.of(s) if s in chosen and len(chosen) > 1 else None))
    con.executemany(f"INSERT INTO op_kernel_links (dispatch_id, native_function_id, dispatch_key, kernel, symbol_id, "
                    f"definition, def_file, def_line, rank, chosen, condition, checkout_id) VALUES "
                    f"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


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
    for launch_id, kernel, file, caller in con.execute(
            "SELECT id, kernel, file, caller FROM kernel_launches WHERE kind IN ('chevron', 'handed')"):
        defs = symbols.named(kernel.split("::")[-1], ("global_kernel",))
        same = [s for s in defs if s[_FILE] == file] or defs
        # of same-named kernels, the one in the launching function's namespace: mbtopk::launch launches
        # mbtopk::gatherTopK, not sbtopk::gatherTopK of the same file
        where = (caller or "").split("::")[:-1]
        # (a test's kernel of that name last); stable: source order next
        same.sort(key=lambda s: ("/test/" in s[_FILE], -_shared_prefix(s[_QUAL].split("::")[:-1], where),
                                 s[_QUAL].count("::")))  # then the shallowest: ::k from a global function
        rows.append((launch_id, kernel, *_def(same[0] if same else None)))
    con.executemany(f"INSERT INTO launch_links (launch_id, kernel, symbol_id, definition, def_file, def_line, "
                    f"checkout_id) VALUES (?, ?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


def _shared_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# -- call -> helper definition -------------------------------------------------------------------------------------
def helper_targets(symbols: _Symbols, file: str, qualifier: str, callee: str) -> list[tuple]:
    """The definition(s) a C++ call of `qualifier::callee` in `file` reaches, by the rule in call_links' comment."""
    defs = symbols.helpers.get(callee)
    if not defs and callee.startswith("TH"):  # THCudaTensor_sort: the generic THCTensor_(sort)
        defs = next((symbols.helpers[g] for g in symbols.generic.names(callee) if g in symbols.helpers), None)
    if not defs:
        return []
    if qualifier:  # cpublas::gemm is not at::cuda::blas::gemm: a written qualifier must match, unless a parse
        # error lost the definition's outer namespaces (scope '' or `native` for at::native: it may be the one)
        defs = [s for s in defs if s[_QUAL].endswith(f"{qualifier}::{callee}")] or \
            [s for s in defs if not s[_SCOPE] or qualifier.endswith(f"::{s[_SCOPE]}")]
    if len(defs) <= 1:
        return defs
    same_file = [s for s in defs if s[_FILE] == file]
    if not same_file and len(defs) > 3 and not qualifier:
        if len({s[_QUAL] for s in defs}) == 1:  # one template's specialisations, one per file (run_mha_fwd_<T, 32>
            return defs                          # in flash_fwd_hdim32_fp16_sm80.cu ...): the call may reach each
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


def _calls(symbols: _Symbols, sites: set[tuple], conditions: "_Conditions") -> tuple[list[tuple], dict]:
    """call_links rows, and (file, qualifier, callee) -> the symbol ids linked."""
    rows, helpers, links = [], symbols.helpers, {}
    legacy = bool(symbols.generic.forms)  # THCudaTensor_sort names no definition itself: THCTensor_(sort)
    for file, qualifier, callee in sorted({(f, q, c) for f, _, q, c in sites
                                          if c in helpers or (legacy and c.startswith("TH"))}):
        if qualifier in ("at", "at::_ops") or qualifier.startswith(_NOT_HELPERS):
            continue
        targets = helper_targets(symbols, file, qualifier, callee)
        if len(targets) > 1:
            targets = conditions.real(targets)
        if targets:
            links[(file, qualifier, callee)] = [s[_ID] for s in targets]
        for s in targets:
            rows.append((file, qualifier, callee, *_def(s), len(targets),
                         conditions.of(s) if len(targets) > 1 else None))
    return rows, links


def _op_name(api_name: str) -> str:
    """at::foo_out / at::foo_symint -> foo (the cpp API names of an op's overloads)."""
    return re.sub(r"(?:_symint|_out|_outf)$", "", api_name)


# -- which definitions reach device code ----------------------------------------------------------------------------
def _functors(con, lines: "_Lines | None", links: dict, sites: _CallSites) -> tuple[list[tuple],
                                                                                    list[tuple[int, int]]]:
    """functor_links: a function that calls a method of one of its parameters (sortCommon's `sorter.sort<A>(...)`)
    and a call that passes a temporary object for that parameter (`sortCommon(SmallBitonicSort{}, ...)`): the
    passed class's method. Returns its rows, and the edges (function id, method id) device_reach adds."""
    if lines is None:
        return [], []
    calls = sorted(r for r in sites.methods if _IDENT.match(r[2]))  # (caller, file, receiver, method)
    if not calls:
        return [], []
    params: dict[tuple[str, str], list[tuple[int, list[str]]]] = defaultdict(list)
    con.execute("CREATE TEMP TABLE IF NOT EXISTS _callers (qual TEXT, file TEXT)")
    con.execute("DELETE FROM _callers")
    con.executemany("INSERT INTO _callers VALUES (?, ?)", sorted({(c[0], c[1]) for c in calls}))
    for sid, qual, file, sig in con.execute(  # the definitions making those calls, by their indexed name
            "SELECT s.id, s.qualified_name, s.file, s.signature FROM _callers k JOIN symbols s ON "
            "s.qualified_name = k.qual AND s.file = k.file WHERE s.kind IN ('function', 'method') AND "
            "s.signature LIKE '%(%'"):
        params[(qual, file)].append((sid, [m.group(1) for m in _PARAMETER.finditer(sig[sig.index("("):])]))
    uses: dict[int, list[tuple[int, str, str]]] = defaultdict(list)  # definition id -> (position, parameter, method)
    for caller, file, receiver, method in calls:
        for sid, names in params.get((caller, file), ()):
            if receiver in names:
                uses[sid].append((names.index(receiver), receiver, method))
    if not uses:
        return [], []
    methods: dict[str, list[tuple]] = defaultdict(list)  # "Class::method" -> definitions
    for row in con.execute("SELECT id, name, qualified_name, kind, file, line FROM symbols WHERE kind = 'method' "
                           "AND name IN _working AND language != 'python'"):
        cls = row[2].rsplit("::", 2)
        if len(cls) >= 2:
            methods[f"{cls[-2]}::{row[1]}"].append(row)
    rows, edges = [], []
    passing = {key: [t for t in targets if t in uses] for key, targets in links.items()}
    passing = {key: wanted for key, wanted in passing.items() if wanted}
    at = sites.lines(set(passing))
    for (file, qualifier, callee), wanted in passing.items():
        for line in at.get((file, qualifier, callee), ()):
            args = _call_arguments(lines, file, line, callee)
            for target in wanted:
                for position, parameter, method in uses[target]:
                    m = _TEMPORARY.match(args[position]) if position < len(args) else None
                    if m is None:
                        continue
                    for d in methods.get(f"{m.group(1).rpartition('::')[2]}::{method}", ())[:4]:
                        rows.append((target, parameter, method, m.group(1), file, line, d[0], d[2], d[4], d[5]))
                        edges.append((target, d[0]))
    return sorted(set(rows)), sorted(set(edges))


# `SmallBitonicSort{}`, `WarpMergeSort<128>{}`, `Functor()`: a temporary object of a named class
_TEMPORARY = re.compile(r"\s*([A-Za-z_][\w:]*)\s*(?:<[^;]*>)?\s*(?:\{\s*\}|\(\s*\))\s*$")


def _call_arguments(lines: "_Lines", file: str, line: int, callee: str) -> list[str]:
    """The arguments of the call of `callee` that starts on `line` (it may run over a few lines)."""
    text = "\n".join(lines.get(file, line, 6))
    i = text.find(callee)
    while i >= 0:  # `callee (` or `callee<T>(`, not a longer name that ends in it
        j = i + len(callee)
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"):
            rest = text[j:].lstrip()
            if rest.startswith("<"):
                close = rest.find(">")
                rest = rest[close + 1:].lstrip() if close >= 0 else ""
            if rest.startswith("("):
                args, _ = arguments(rest.encode(), 0)
                return args
        i = text.find(callee, j)
    return []


def _device_reach(con, sites: set[tuple], links: dict, extra: list[tuple[int, int]] = ()) -> list[tuple]:
    """Breadth-first from the definitions that launch, call a library, call a stub or call an op, backwards over
    the call sites' links. Nodes are (qualified name, file): C++ overloads of one name in one file share facts."""
    ids: dict[tuple[str, str], list[int]] = defaultdict(list)
    for sid, qual, file in con.execute("SELECT id, qualified_name, file FROM symbols WHERE language != 'python' AND "
                                       "kind IN ('function', 'method', 'impl_func', 'global_kernel')"):
        ids[(qual, file)].append(sid)
    key_of = {sid: key for key, group in ids.items() for sid in group}
    reached: dict[tuple[str, str], str] = {}
    for what, table, where in (("launch", "kernel_launches", "kind IN ('chevron', 'handed', 'tensor_iterator')"),
                               ("library", "library_calls", "1"), ("stub", "stub_calls", "1")):
        for caller, file in con.execute(f"SELECT DISTINCT caller, file FROM {table} WHERE {where}"):
            reached.setdefault((caller, file), what)
    # a definition that calls an op through the dispatcher (at::x, at::_ops::x) leads back into the YAML layer
    ops = {r[0] for r in con.execute("SELECT DISTINCT name FROM native_functions")} - PLUMBING_OPS
    callers: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)  # callee node -> caller nodes
    for file, caller, qualifier, callee in sites:
        if qualifier in ("at", "at::_ops"):
            if _op_name(callee) in ops:
                reached.setdefault((caller, file), "op")
            continue
        for target in links.get((file, qualifier, callee), ()):
            callers[key_of[target]].add((caller, file))
    for function, method in extra:  # sortCommon reaches what the functors passed to it launch
        if function in key_of and method in key_of:
            callers[key_of[method]].add(key_of[function])
    distance = {key: 0 for key in reached if key in ids}
    frontier = list(distance)
    while frontier:
        nxt = []
        for callee in frontier:
            for caller in callers.get(callee, ()):
                if caller not in distance and caller in ids:
                    distance[caller], reached[caller] = distance[callee] + 1, reached[callee]
                    nxt.append(caller)
        frontier = nxt
    return [(sid, d, reached[key]) for key, d in distance.items() for sid in ids[key]]


# -- launcher calls written by codegen ------------------------------------------------------------------------------
_GENERATED_CALL = re.compile(r"\b(\w*gpu_kernel\w*|launch_\w+)\s*\(")


def _generated_launches(con, lines: "_Lines | None") -> None:
    """The TensorIterator launcher calls in the text of torchgen's Python defs (the C++ they write)."""
    if lines is None:
        return
    rows = []
    for file, in con.execute("SELECT path FROM files WHERE language = 'python' AND path LIKE 'torchgen/%'"):
        text = lines.text(file)
        if "gpu_kernel" not in text:
            continue
        defs = con.execute("SELECT id, qualified_name, line, end_line FROM symbols WHERE file = ? AND "
                           "kind IN ('function', 'method') ORDER BY line", (file,)).fetchall()
        for i, raw in enumerate(text.splitlines(), 1):
            for m in _GENERATED_CALL.finditer(raw):
                if launch_kind(m.group(1), "") != "tensor_iterator":
                    continue
                inner = [d for d in defs if d[2] <= i <= d[3]]
                if inner:
                    sid, qual = inner[-1][0], inner[-1][1]  # the innermost def
                    rows.append((sid, qual, file, i, m.group(1)))
    con.executemany(f"INSERT INTO generated_launches (symbol_id, function, file, line, launcher, checkout_id) "
                    f"VALUES (?, ?, ?, ?, ?, {CHECKOUT_ID})", rows)


# -- stub passed as an argument ------------------------------------------------------------------------------------
def _stub_arguments(con, lines: "_Lines | None") -> None:
    """A stub call whose stub is not declared anywhere is a helper's parameter (argmax_argmin_impl(..., Stub& stub)):
    the declared stub it stands for is on each line that calls the helper. Those few lines are read here, once."""
    declared = {r[0] for r in con.execute("SELECT DISTINCT stub FROM dispatch_stubs")}
    helpers = [r for r in con.execute("SELECT DISTINCT s.caller, s.file, s.stub FROM stub_calls s WHERE s.caller != ''")
               if r[2] not in declared]
    if not helpers or lines is None:
        return
    rows = []
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


# -- the declared type of a method call's receiver -----------------------------------------------------------------
_IDENT = re.compile(r"[A-Za-z_]\w*\Z")


def _receiver_types(con, lines: "_Lines | None", files: set[str] | None = None) -> None:
    """For `x.f(...)` where f names a Tensor-method op the walk would follow (not a plumbing op) and x is not a
    parameter: x's declaration above the call in the same function. Each function's text is scanned once. With
    `files`, only the calls of those files (their old rows are replaced)."""
    if lines is None:
        return
    if files is not None:
        con.executemany("DELETE FROM receiver_types WHERE file = ?", [(f,) for f in sorted(files)])
    methods = {r[0] for r in con.execute("SELECT DISTINCT name FROM native_functions WHERE variants LIKE "
                                         "'%method%'")} - PLUMBING_OPS
    sites: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    marks = ",".join("?" * len(methods))
    for file, line, caller, receiver in con.execute(
            f"SELECT file, line, caller, qualifier FROM calls WHERE callee IN ({marks}) AND is_method = 1 AND "
            f"language != 'python'", sorted(methods)):
        if _IDENT.match(receiver) and receiver not in ("self", "this") and (files is None or file in files):
            sites[(caller, file)].append((line, receiver))
    if not sites:
        return
    spans: dict[tuple[str, str], list[tuple[int, int, str]]] = defaultdict(list)
    con.execute("CREATE TEMP TABLE IF NOT EXISTS _receiving (qual TEXT, file TEXT)")
    con.execute("DELETE FROM _receiving")
    con.executemany("INSERT INTO _receiving VALUES (?, ?)", sorted(sites))
    for qual, file, line, end, sig in con.execute(  # the definitions of those callers, by their indexed name
            "SELECT s.qualified_name, s.file, s.line, s.end_line, coalesce(s.signature, '') FROM _receiving k "
            "JOIN symbols s ON s.qualified_name = k.qual AND s.file = k.file WHERE s.language != 'python' AND "
            "s.kind IN ('function', 'method', 'impl_func', 'global_kernel') ORDER BY s.id"):
        spans[(qual, file)].append((line, end, sig))
    rows = []
    for (caller, file), calls in sites.items():
        for start, end, sig in spans.get((caller, file), ()):
            inside = [(ln, r) for ln, r in calls if start <= ln <= end]
            if not inside:
                continue
            decls = _declarations(lines.get(file, start, end - start + 1), start, {r for _, r in inside})
            parameters = set(_PARAMETER.findall(sig))
            for line, receiver in inside:
                if receiver in parameters:
                    continue  # a parameter: the walk reads its type from the signature
                found = [d for ln, name, d in decls if name == receiver and ln <= line]
                if found:
                    rows.append((file, line, receiver, found[-1]))
    con.executemany(f"INSERT INTO receiver_types (file, line, receiver, declared, checkout_id) VALUES "
                    f"(?, ?, ?, ?, {CHECKOUT_ID})", rows)


_PARAMETER = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:=[^,]*)?(?:,|\)\s*$)")
_DECLARATION = re.compile(r"(?<![\w:.>-])((?:const\s+)?[A-Za-z_][\w:]*(?:<[^;(){}]*>)?)\s*[&*]*\s+"
                          r"([A-Za-z_]\w*)\s*(?:=\s*([^;]*)|[;({\[,])")
_NOT_TYPES = frozenset({"return", "else", "case", "new", "delete", "throw", "co_return", "goto", "typedef",
                        "using", "namespace", "struct", "class", "enum", "if", "while", "for", "switch"})


def _declarations(body: list[str], first_line: int, names: set[str]) -> list[tuple[int, str, str]]:
    """(line, name, declared type) of the declarations of `names` in a function's lines; `auto x = e` gives
    `auto = e`."""
    out = []
    for i in _declaring_lines(body, names):
        for m in _DECLARATION.finditer(body[i]):
            kind = m.group(1)
            if kind in _NOT_TYPES or m.group(2) not in names:
                continue
            if kind.removeprefix("const ").strip() == "auto" and m.group(3) is not None:
                kind = f"auto = {m.group(3).strip()}"
            out.append((first_line + i, m.group(2), kind))
    return out


_AFTER_DECLARED = re.compile(r"\s*[=;({\[,]")


def _declaring_lines(body: list[str], names: set[str]) -> list[int]:
    """The lines (0-based) where _DECLARATION may declare one of `names`: the name after a blank and before `=`,
    `;`, `(`, `{`, `[` or `,`. Found by str.find over the function's text, so the regex runs on those few lines
    only (a few lines may be found that it then does not match)."""
    text = "\n".join(body)
    found = set()
    for name in names:
        i = text.find(name)
        while i >= 0:
            if i > 0 and text[i - 1].isspace() and _AFTER_DECLARED.match(text, i + len(name)):
                found.add(text.count("\n", 0, i))
            i = text.find(name, i + len(name))
    return sorted(found)


# -- preprocessor conditions of same-named definitions --------------------------------------------------------------
_NEGATED_TEST = re.compile(r"^[ \t]*#[ \t]*(?:if[ \t]*!|ifndef\b|else\b)", re.M)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)", re.M)


class _Conditions:
    """The #if conditions around a definition, read from its file (only asked for C++ overloads that share a
    qualified name in one file: `#if !AT_CUDNN_ENABLED()` stand-ins that only raise, next to the real one)."""

    def __init__(self, lines: "_Lines | None"):
        self.lines = lines
        self.cache: dict[str, list[tuple[int, tuple[str, ...]]]] = {}

    def of(self, s: tuple) -> str | None:
        """The innermost condition around the definition, as written (`!AT_CUDNN_ENABLED()`; an #else branch
        reads `not (X)`), or None at top level."""
        stack = self._stack(s[_FILE], s[_LINE])
        return stack[-1] if stack else None

    def real(self, group: list[tuple]) -> list[tuple]:
        """Drop the stand-ins of a group: definitions under a negated feature test (`#if !X`, `#ifndef X`) when
        a sibling is not under one."""
        if len(group) < 2 or self.lines is None:
            return group
        negated = [s for s in group if _negated(self.of(s))]
        return [s for s in group if s not in negated] if negated and len(negated) < len(group) else group

    def demote(self, ranked: list[tuple]) -> list[tuple]:
        """Stand-ins last: of several candidates in one file, those under a negated feature test (the `#if
        !AT_CUDNN_ENABLED()` half of a file whose namespace the parser may have read differently)."""
        if self.lines is None or len(ranked) < 2:
            return ranked
        files = [s[_FILE] for s in ranked]
        shared = {f for f in files if files.count(f) > 1}
        if not shared:
            return ranked
        standin = {s[_ID] for s in ranked if s[_FILE] in shared and _negated(self.of(s))}
        return sorted(ranked, key=lambda s: s[_ID] in standin)  # stable: the rank order otherwise

    def _stack(self, file: str, line: int) -> tuple[str, ...]:
        if file not in self.cache:
            self.cache[file] = self._scan(file)
        marks = self.cache[file]
        return marks[bisect.bisect_right(marks, (line, (chr(0x10FFFF),))) - 1][1]

    def _scan(self, file: str) -> list[tuple[int, tuple[str, ...]]]:
        """(line, the condition stack from that line on) at every directive of the file."""
        out, stack = [(0, ())], []
        text = self.lines.text(file) if self.lines else ""
        if not _NEGATED_TEST.search(text):
            return out  # no `#if !X`, `#ifndef X` or `#else` in the file: no stand-in to tell apart
        line, pos = 1, 0
        for m in _DIRECTIVE.finditer(text):  # the few directive lines, found in C by one search of the text
            line += text.count("\n", pos, m.start())
            pos = m.start()
            word, rest = m.group(1), " ".join(m.group(2).split("//")[0].split())
            if word in ("if", "ifdef", "ifndef"):
                stack.append(f"!{rest}" if word == "ifndef" else (f"defined({rest})" if word == "ifdef" else rest))
            elif word in ("elif", "else") and stack:
                stack[-1] = rest if word == "elif" else f"not ({stack[-1]})"
            elif word == "endif" and stack:
                stack.pop()
            out.append((line, tuple(stack)))
        return out


def _negated(condition: str | None) -> bool:
    return bool(condition) and (condition.startswith("!") or condition.startswith("not (defined("))


class _Lines:
    """Checkout files, each read once (only files under the root)."""

    def __init__(self, root: str):
        self.root = root
        self.texts: dict[str, str] = {}
        self.split: dict[str, list[str]] = {}

    def text(self, rel: str) -> str:
        if rel not in self.texts:
            path = safe_path(self.root, rel)
            try:
                if path is None:
                    raise OSError("not a file inside the checkout")
                with open(path, encoding="utf-8", errors="replace") as f:
                    self.texts[rel] = f.read()
            except OSError:
                self.texts[rel] = ""
        return self.texts[rel]

    def get(self, rel: str, line: int, count: int) -> list[str]:
        if rel not in self.split:
            self.split[rel] = self.text(rel).splitlines()
        return self.split[rel][line - 1:line - 1 + count]
