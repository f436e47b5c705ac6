"""facts: every lookup the walks make, small and indexed: the per-file facts and the links indexer/link.py derives.

Every function takes an sqlite3 connection and bound parameters; none formats user text into SQL. Results are
plain dicts (column -> value).
"""
from __future__ import annotations

import contextlib
import functools
import json
import posixpath
import re
import sqlite3

from ..pytorch.devices import COMPOSITE_KEYS, DEVICE_OPTIONS, dispatch_keys, registration_devices

DEVICES = DEVICE_OPTIONS  # the --device choices, as the walks read them (q.DEVICES)

CPP_LANGUAGES = ("cpp", "cuda")
DEFINITION_KINDS = ("function", "method", "impl_func", "global_kernel", "device_function", "meta_func",
                    "precompute_meta_func")


def rows(con: sqlite3.Connection, sql: str, params=()) -> list[dict]:
    memo = _memos.get(con)
    if memo is None:
        return _fetch(con, sql, params)
    key = (sql, tuple(sorted(params.items())) if isinstance(params, dict) else tuple(params))
    found = memo.get(key)
    if found is None:
        found = memo[key] = _fetch(con, sql, params)
        memo[_KEPT_ROWS] = memo.get(_KEPT_ROWS, 0) + len(found)
    return list(found)  # callers may sort or filter the list; the dicts are only read


def _fetch(con: sqlite3.Connection, sql: str, params) -> list[dict]:
    cur = con.execute(sql, params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


_memos: dict[sqlite3.Connection, dict] = {}
_KEPT_ROWS = ("rows kept",)  # a memo's count of the rows it holds (a key no query makes)
# The answers kept between the traces of one connection, at most this many rows (about 85 MB; the ten ops of
# benchmarks/trace_ab.py on the 2.4 index keep ~20,000 rows, 17 MB): past it they are dropped after a trace and asked
# again. Memory only: no answer depends on it
KEEP_ROWS = 100_000


class Resident:
    """What a walk asks about nearly every definition it visits (has it launches, stub calls, library calls,
    AT_DISPATCH sites? how far is device code? is this name an op? is this the kernel of a plumbing op?), read once
    per open index, each part when first needed, then answered from memory: most answers are "nothing here", and a
    trace asked ~6,000 of its ~9,000 queries of these (2.4 tree). The index never changes under an open connection
    (a rebuild replaces the file; this connection keeps reading the old one), so nothing goes stale."""

    TABLES = ("stub_calls", "kernel_launches", "library_calls", "type_dispatches")

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.guards: dict = {}  # a body's Guards per walk context and build (conditions.BodyGuards._kept)
        self.bodies: dict = {}  # what the walk reads of a body from the index alone (walk/bodies.py direct_helpers)

    @functools.cached_property
    def include_sites(self) -> dict[str, list[tuple[str, int, str]]]:
        """The #include lines of the index by the last part of the path they name: name -> (file, line, path)."""
        out: dict[str, list[tuple[str, int, str]]] = {}
        for file, line, path in self.con.execute("SELECT file, line, path FROM includes"):
            out.setdefault(path.rpartition("/")[2], []).append((file, line, path))
        return out

    @functools.cached_property
    def op_kernel_places(self) -> frozenset[tuple[str, int]]:
        """(file, line) of every definition the link step chose as a dispatch row's kernel."""
        try:
            return frozenset((r["def_file"], r["def_line"]) for r in chosen_kernel_definitions(self.con))
        except sqlite3.OperationalError:
            return frozenset()

    @functools.cached_property
    def ops_at_kernel_place(self) -> dict[tuple[str, int], frozenset[str]]:
        """(file, line) of a chosen kernel definition -> the full names of the ops whose dispatch rows it serves
        (index_fill_'s TensorAdvancedIndexing.cpp:1481 -> index_fill_.int_Tensor)."""
        out: dict[tuple[str, int], set[str]] = {}
        try:
            for r in rows(self.con, """SELECT o.def_file, o.def_line, n.full_name FROM op_kernel_links o
                                       JOIN native_functions n ON n.id = o.native_function_id WHERE o.chosen"""):
                out.setdefault((r["def_file"], r["def_line"]), set()).add(r["full_name"])
        except sqlite3.OperationalError:
            return {}
        return {k: frozenset(v) for k, v in out.items()}

    @functools.cached_property
    def include_lines(self) -> dict[str, list[str]]:
        """file -> the paths its #include lines name, as written."""
        out: dict[str, list[str]] = {}
        for file, spec in self.con.execute("SELECT file, path FROM includes"):
            out.setdefault(file, []).append(spec)
        return out

    @functools.cached_property
    def files_by_name(self) -> dict[str, list[str]]:
        """The indexed files by their last path part."""
        out: dict[str, list[str]] = {}
        for (path,) in self.con.execute("SELECT path FROM files"):
            out.setdefault(path.rpartition("/")[2], []).append(path)
        return out

    def included(self, file: str) -> list[str]:
        """The indexed files `file`'s #include lines name (a path from a source root, `ATen/native/x.cuh`, or one
        relative to the including file, `maca_kernels/x.cuh`), resolved when first asked."""
        kept = self.include_targets
        if file not in kept:
            out = []
            for spec in self.include_lines.get(file, ()):
                near = posixpath.normpath(posixpath.join(posixpath.dirname(file), spec))
                out += [f for f in self.files_by_name.get(spec.rpartition("/")[2], ())
                        if f == near or f == spec or f.endswith("/" + spec)]
            kept[file] = out
        return kept[file]

    @functools.cached_property
    def if_groups(self) -> dict[str, list[dict]]:
        """file -> its #if rows of conditions (if_groups_over), in conditions_over's order."""
        out: dict[str, list[dict]] = {}
        for file, line, end_line, kind, condition in self.con.execute(
                "SELECT file, line, end_line, kind, condition FROM conditions WHERE kind = '#if' "
                "ORDER BY file, line, -end_line"):
            out.setdefault(file, []).append({"line": line, "end_line": end_line, "kind": kind,
                                             "condition": condition})
        return out

    @functools.cached_property
    def include_site_lists(self) -> dict[str, list[tuple[str, int]]]:
        return {}  # file -> include_sites(file), filled as asked

    @functools.cached_property
    def answers(self) -> dict:
        return {}  # the memo of rows() while a trace runs (memoized), kept for the next trace of this connection

    @functools.cached_property
    def include_targets(self) -> dict[str, list[str]]:
        return {}  # file -> what its #includes resolve to (included), filled as asked

    @functools.cached_property
    def call_arguments(self) -> dict[tuple[str, int, str], list]:
        return {}  # (file, line, callee) -> the arguments columns of the calls there (arguments_of_call)

    @functools.cached_property
    def outer_calls(self) -> dict[tuple[str, str], list]:
        return {}  # (file, caller) -> its calls with arguments (outer_call)

    @functools.cached_property
    def translation_units(self) -> dict[str, frozenset[str]]:
        return {}  # source file -> every file it includes, directly or not (included_in), filled as asked

    @functools.cached_property
    def built_files(self) -> dict[tuple, dict]:
        return {}  # (device, user settings) -> header -> whether that build compiles it (BuildContext.file_built)

    @functools.cached_property
    def macro_sites(self) -> dict[tuple[str, bool], list[dict]]:
        return {}  # (name, function-like) -> macro_sites(...), filled as asked

    @functools.cached_property
    def requirement_sites(self) -> list[dict]:
        """requirement_sites, read once per open index (every trace's build asks)."""
        return _requirement_sites(self.con)

    @functools.cached_property
    def fact_holders(self) -> dict[str, frozenset[tuple[str, str]]]:
        """(caller, file) of the functions that hold facts of each table."""
        return {t: frozenset((caller, file) for caller, file in self.con.execute(
            f"SELECT DISTINCT caller, file FROM {t}")) for t in self.TABLES}  # plain tuples, whatever row_factory

    @functools.cached_property
    def reach(self) -> dict[int, tuple[int, str]]:
        """device_reach: symbol id -> (distance, reaches)."""
        return {r[0]: (r[1], r[2]) for r in self.con.execute("SELECT symbol_id, distance, reaches FROM device_reach")}

    @functools.cached_property
    def device_functions(self) -> frozenset[int]:
        """Ids of the __device__ functions (call_links links them for calls in device code only)."""
        return frozenset(r[0] for r in self.con.execute("SELECT id FROM symbols WHERE kind = 'device_function'"))

    @functools.cached_property
    def write_paths(self):
        """The fill/copy paths (trace/writes.py write_path), walked once, kept between processes (trace/cache.py)."""
        from .cache import PathCache
        return PathCache(database_file(self.con), build_meta(self.con))

    @functools.cached_property
    def module_of_file(self) -> dict[str, str | None]:
        """files.path -> its Python module."""
        return dict(self.con.execute("SELECT path, module FROM files WHERE language = 'python'"))

    @functools.cached_property
    def codegen_files(self) -> list[tuple[str, str]]:
        """(path, layer) of the templates and the generator scripts under torchgen/ and tools/, by layer, path."""
        return [tuple(r) for r in self.con.execute(
            "SELECT path, layer FROM files WHERE layer = 'codegen' OR (layer = 'python' AND "
            "(path LIKE 'torchgen/%' OR path LIKE 'tools/%')) ORDER BY layer, path")]

    @functools.cached_property
    def write_walking(self) -> dict:
        """(op ids, device) of the fill/copy paths being walked now -> whether its result may be kept (False when
        a write inside it met one of them still being walked: its result lacks that one)."""
        return {}

    @functools.cached_property
    def chooser_rows(self) -> dict[str, list[dict]]:
        """Each file's backend_choices rows whose result a switch or a comparison tests (~140 of ~18,000; a body over
        one holds a chooser local: Guards read it, conditions.BodyGuards.chosen; a chooser in an `if` test is read
        there)."""
        out: dict[str, list[dict]] = {}
        for r in rows(self.con, "SELECT * FROM backend_choices WHERE test != 'if' AND variable != '' "
                                "ORDER BY file, line"):
            out.setdefault(r["file"], []).append(r)
        return out

    @functools.cached_property
    def choices(self) -> frozenset[tuple[str, int, str]]:
        """(file, line, callee) of backend_choices: a few thousand rows, asked of every helper call."""
        return frozenset(tuple(r) for r in self.con.execute("SELECT file, line, callee FROM backend_choices"))

    @functools.cached_property
    def functor_keys(self) -> frozenset[tuple[int, str, str]]:
        """(function_id, parameter, method) of functor_links: a handful of rows, asked of every method call."""
        return frozenset(tuple(r) for r in self.con.execute(
            "SELECT DISTINCT function_id, parameter, method FROM functor_links"))

    @functools.cached_property
    def has_legacy_links(self) -> bool:
        """Whether the index has legacy_kernel_links rows (only trees that generate their legacy kernels do)."""
        try:
            return self.con.execute("SELECT 1 FROM legacy_kernel_links LIMIT 1").fetchone() is not None
        except sqlite3.OperationalError:  # an index of an older schema, opened read-only
            return False

    @functools.cached_property
    def functor_functions(self) -> frozenset[int]:
        """function_id of functor_links: the definitions that call what their callers pass them."""
        return frozenset(k[0] for k in self.functor_keys)

    @functools.cached_property
    def op_names(self) -> frozenset[str]:
        return frozenset(r[0] for r in self.con.execute("SELECT DISTINCT name FROM native_functions"))

    @functools.cached_property
    def modules(self) -> frozenset[str]:
        return frozenset(r[0] for r in self.con.execute("SELECT DISTINCT module FROM files WHERE module IS NOT NULL"))

    @functools.cached_property
    def ops_of_kernel(self) -> dict[str, list[str]]:
        """Kernel name (as dispatch rows write it) -> full names of the ops it is a kernel of."""
        out: dict[str, list[str]] = {}
        for kernel, full_name in self.con.execute(
                "SELECT d.kernel, n.full_name FROM native_dispatch d JOIN native_functions n "
                "ON n.id = d.native_function_id"):
            out.setdefault(kernel, []).append(full_name)
        return out


_residents: dict[int, tuple[sqlite3.Connection, Resident]] = {}


def resident(con: sqlite3.Connection) -> Resident:
    """The Resident facts of `con` (connections are not weak-referenceable: the last few are kept by id, with the
    connection itself so its id cannot be reused while its entry lives)."""
    if _last[0] is con:  # (asked ~3,000 times a trace, nearly always of the same connection)
        return _last[1]
    found = _residents.get(id(con))
    if found is not None and found[0] is con:
        _last[:] = found
        return found[1]
    if len(_residents) >= 4:
        _residents.pop(next(iter(_residents)))
    made = Resident(con)
    _residents[id(con)] = (con, made)
    _last[:] = (con, made)
    return made


_last: list = [None, None]  # the connection resident() answered last, and its Resident


def forget(con: sqlite3.Connection) -> None:
    """Drop what is kept for `con` (its Resident facts and the answers its traces kept): it is being closed."""
    if _residents.get(id(con), (None,))[0] is con:
        del _residents[id(con)]
    if _last[0] is con:
        _last[:] = [None, None]


@contextlib.contextmanager
def memoized(con: sqlite3.Connection):
    """Within one trace the same lookups come back (a helper reached from several kernels, the launches of a body
    read twice): each is answered once. So do they from one trace to the next of the same open index (a notebook,
    the MCP server, a benchmark: TensorIterator's machinery is below most ops): the answers are kept with the
    connection's Resident facts, up to KEEP_ROWS rows. The index does not change under an open connection
    (Resident), so nothing goes stale."""
    if con in _memos:  # nested: the outer trace owns the memo
        yield
        return
    kept = resident(con).answers
    _memos[con] = kept
    try:
        yield
    finally:
        del _memos[con]
        if kept.get(_KEPT_ROWS, 0) > KEEP_ROWS:
            kept.clear()


# -- registry -----------------------------------------------------------------------------------------------
def native_by_id(con, native_function_id: int) -> dict:
    return rows(con, "SELECT * FROM native_functions WHERE id = ?", (native_function_id,))[0]


def native_by_full_name(con, full_name: str) -> list[dict]:
    return rows(con, "SELECT * FROM native_functions WHERE full_name = ? ORDER BY line", (full_name,))


def native_by_name(con, name: str) -> list[dict]:
    if name not in resident(con).op_names:
        return []
    return rows(con, "SELECT * FROM native_functions WHERE name = ? ORDER BY line", (name,))


def native_for_cpp_api(con, api_name: str) -> list[dict]:
    """The entries an `at::name(...)` call reaches: name, name_out -> .out overloads, name_symint -> name (asked
    for every call a walk reads: kept in the trace's memo)."""
    return _kept(con, ("cpp api", api_name), lambda: _native_for_cpp_api(con, api_name))


def _kept(con, key: tuple, make) -> list:
    """make(), kept in the trace's memo under `key` (a tuple no SQL text starts) while one is open; a new list each
    time, as rows() gives."""
    memo = _memos.get(con)
    if memo is None:
        return make()
    found = memo.get(key)
    if found is None:
        found = memo[key] = make()
    return list(found)


def _native_for_cpp_api(con, api_name: str) -> list[dict]:
    base = re.sub(r"_symint$", "", api_name)
    found = native_by_name(con, base)
    if found:
        found = [f for f in found if not f["is_out"]] or found
        # the overloads kept for old callers (cudnn_convolution.deprecated, .deprecated2 in 1.8, ahead of the
        # current one in the YAML) come last: a capped walk follows the current one first
        return sorted(found, key=lambda f: (f["overload"] or "").startswith("deprecated"))
    m = re.match(r"(.+?)_(out|outf)$", base)
    if m:
        return [f for f in native_by_name(con, m.group(1)) if f["is_out"]]
    return []


def dispatch_rows(con, native_function_id: int) -> list[dict]:
    return rows(con, "SELECT * FROM native_dispatch WHERE native_function_id = ? ORDER BY line, dispatch_key",
                (native_function_id,))


def rows_for_device(dispatch: list[dict], device: str) -> list[dict]:
    """The rows the dispatcher would use on `device`: the device's own, else the composite ones (in precedence)."""
    if device == "all":
        return dispatch
    own = [r for r in dispatch if r["dispatch_key"] in dispatch_keys(device)]
    if own:
        return own
    for key in COMPOSITE_KEYS:
        found = [r for r in dispatch if r["dispatch_key"] == key]
        if found:
            return found
    return []


def derivatives_of(con, native: dict) -> list[dict]:
    """The derivatives.yaml entry of an op; an in-place op (add_.Tensor) uses its functional's (add.Tensor)."""
    found = rows(con, "SELECT * FROM derivatives WHERE full_name = ?", (native["full_name"],))
    if not found and native["name"].endswith("_") and not native["name"].endswith("__"):
        functional = native["name"][:-1] + (f".{native['overload']}" if native["overload"] else "")
        found = rows(con, "SELECT * FROM derivatives WHERE full_name = ?", (functional,))
    return found


def formulas(con, derivative_id: int) -> list[dict]:
    return rows(con, "SELECT * FROM derivative_formulas WHERE derivative_id = ? ORDER BY line", (derivative_id,))


def ufunc_stub_loops(con, stub: str) -> list[dict]:
    """The ufunc_inner_loop rows of the op whose stub torchgen's ufunc codegen declares and registers: `add_stub`
    for add.out (StubSignature: the functional op's name + _stub)."""
    name = stub.removesuffix("_stub")
    return [r for r in rows(con, "SELECT * FROM native_ufunc_loops ORDER BY function, line")
            if r["function"].split(".")[0] == name]


def ufunc_loops(con, native_function_id: int) -> list[dict]:
    return rows(con, "SELECT * FROM native_ufunc_loops WHERE native_function_id = ? ORDER BY line",
                (native_function_id,))


# -- C++ ----------------------------------------------------------------------------------------------------


def symbol_by_id(con, symbol_id: int) -> dict:
    return rows(con, "SELECT * FROM symbols WHERE id = ?", (symbol_id,))[0]


# -- derived links (indexer/link.py) ---------------------------------------------------------------------------
def kernel_links(con, dispatch_id: int) -> list[dict]:
    """The definitions a dispatch row's kernel name may denote, best first; `chosen` ones are walked."""
    return rows(con, "SELECT * FROM op_kernel_links WHERE dispatch_id = ? ORDER BY rank", (dispatch_id,))


def macro_definition(con, name: str, file: str) -> dict | None:
    """The #define of a macro whose expansion in `file` wrote a definition (opindex expands a file's own macros):
    the first of that name in the file."""
    found = rows(con, "SELECT name, file, line FROM macros WHERE name = ? AND file = ? ORDER BY line LIMIT 1",
                 (name, file))
    return found[0] if found else None


def legacy_kernel_links(con, kernel: str) -> list[dict]:
    """What a build-time-generated legacy kernel (1.4's legacy::cuda::_th_sort) calls: its declaration in
    Declarations.cwrap / nn.yaml and the generic TH/THC/THNN definitions of its cname (one set per name: a
    dispatch row and a C++ call of the name share it). [] on newer trees, and on an index built before the table
    existed."""
    if not resident(con).has_legacy_links:
        return []
    found = rows(con, "SELECT * FROM legacy_kernel_links WHERE kernel = ? ORDER BY id", (kernel,))
    seen, out = set(), []
    for r in found:
        if (r["symbol_id"], r["cname"]) not in seen:
            seen.add((r["symbol_id"], r["cname"]))
            out.append(r)
    return out


def _links_from(con, file: str) -> dict[tuple[str, str], dict[str | None, list[dict]]]:
    """The call_links of `file`, grouped by (qualifier, callee), then by the template arguments a row is for (None:
    any call): one query per file, not one per call. A link whose definition reaches device code (device_reach,
    resident) carries that definition's symbols row; the others (two in three: std::max, a check) only the link's
    own columns and `id`, since a walk does not enter them (symbol_by_id reads one when asked)."""
    memo = _memos.get(con)
    if memo is not None and ("links", file) in memo:
        return memo[("links", file)]
    reach, device = resident(con).reach, resident(con).device_functions
    links = rows(con, "SELECT symbol_id AS id, qualifier AS link_qualifier, callee AS link_callee, overloads, "
                      "condition AS link_condition, def_file, def_line, template_args AS link_template_args "
                      "FROM call_links WHERE file = ? AND symbol_id IS NOT NULL ORDER BY def_line", (file,))
    for r in links:
        found = reach.get(r["id"])
        r["reach"] = found[0] if found else None
        r["device_function"] = r["id"] in device
    walked = sorted({r["id"] for r in links if r["reach"] is not None})
    defs = {d["id"]: d for d in rows(con, f"SELECT * FROM symbols WHERE id IN ({','.join('?' * len(walked))})",
                                     walked)} if walked else {}
    grouped: dict[tuple[str, str], dict[str | None, list[dict]]] = {}
    for r in links:
        d = defs.get(r["id"])
        grouped.setdefault((r["link_qualifier"], r["link_callee"]), {}).setdefault(
            r["link_template_args"], []).append({**d, **r} if d is not None else r)
    if memo is not None:
        memo[("links", file)] = grouped
    return grouped


def linked_callees(con, file: str):
    """(qualifier, callee) of the calls in `file` that call_links links (a mapping: test with `in`)."""
    return _links_from(con, file).keys()


def call_targets(con, file: str, qualifier: str, callee: str, template_args: str | None = None) -> list[dict]:
    """The definitions a call reaches (call_links), each the link's `id` (symbols.id), `def_file`, `def_line`,
    `overloads`, `link_condition` and `reach` (device_reach.distance, None when nothing device-side is reachable
    from it), plus, when `reach` is set, the definition's symbols row. A call written with template arguments that
    name explicit specializations (`gemm_internal<float>(...)`) reaches those."""
    found = _links_from(con, file).get((qualifier, callee))
    if not found:
        return []
    return list(found.get(template_args) or found.get(None, ()))


def specialization(con, call: dict) -> str | None:
    """The template arguments of a call when they name explicit specializations (call_targets differs for them),
    else None."""
    targs = call.get("template_args")
    found = _links_from(con, call["file"]).get((call["qualifier"], call["callee"])) if targs else None
    return targs if found and targs in found else None


def functors_of(con, function_id: int, parameter: str, method: str) -> list[dict]:
    """The methods of the objects passed for `parameter` of a function that calls `parameter.method(...)`
    (functor_links: sortCommon's sorter.sort -> SmallBitonicSort::sort, passed at Sort.cu:401)."""
    if (function_id, parameter, method) not in resident(con).functor_keys:
        return []
    return rows(con, "SELECT * FROM functor_links WHERE function_id = ? AND parameter = ? AND method = ? "
                     "ORDER BY file, line, def_file, def_line", (function_id, parameter, method))


def runs_what_it_is_passed(con, function_id: int) -> bool:
    """Whether a definition calls a method or function its callers pass it (functor_links)."""
    return function_id in resident(con).functor_functions


def device_reach_distance(con, symbol_id: int) -> int | None:
    found = resident(con).reach.get(symbol_id)
    return found[0] if found else None


def device_reach(con, symbol_id: int) -> dict | None:
    found = resident(con).reach.get(symbol_id)
    return {"symbol_id": symbol_id, "distance": found[0], "reaches": found[1]} if found else None


def receiver_type(con, file: str, line: int, receiver: str) -> str | None:
    found = rows(con, "SELECT declared FROM receiver_types WHERE file = ? AND line = ? AND receiver = ?",
                 (file, line, receiver))
    return found[0]["declared"] if found else None


def calls_at(con, file: str, line: int, callee: str, caller: str | None = None) -> list[dict]:
    """The calls of `callee` at a line; with the `caller` known, found through the caller's calls (a launcher such
    as gpu_kernel is called from thousands of places)."""
    if caller is not None:
        return rows(con, "SELECT * FROM calls WHERE caller = ? AND file = ? AND line = ? AND callee = ? AND NOT "
                         "is_method", (caller, file, line, callee))
    return rows(con, "SELECT * FROM calls WHERE file = ? AND line = ? AND callee = ? AND NOT is_method",
                (file, line, callee))


def registration_link(con, registration_id: int) -> dict | None:
    found = rows(con, "SELECT * FROM registration_links WHERE registration_id = ?", (registration_id,))
    return found[0] if found else None


def launched(con, launch: dict) -> int | None:
    """The symbol id of the `__global__` definition a <<<>>> launch names (launch_links), if one was linked."""
    found = rows(con, "SELECT symbol_id FROM launch_links WHERE launch_id = ?", (launch["id"],))
    return found[0]["symbol_id"] if found else None


def stub_argument(con, file: str, line: int, parameter: str) -> dict | None:
    found = rows(con, "SELECT * FROM stub_arguments WHERE file = ? AND line = ? AND parameter = ?",
                 (file, line, parameter))
    return found[0] if found else None


def outer_call(con, file: str, line: int, caller: str, callee: str) -> str | None:
    """The callee of the call whose arguments hold this call of `callee` (`at::nll_loss_nd_symint(
    at::log_softmax(self, ...), target, ...)` -> nll_loss_nd_symint for log_softmax): the one of the same caller
    that starts on this line or up to OUTER_LINES above it and writes `callee(` among its arguments. None when
    there is none (or the call is no argument of another)."""
    kept = resident(con).outer_calls
    key = (file, caller)
    if key not in kept:
        kept[key] = rows(con, "SELECT line, callee, arguments FROM calls WHERE caller = ? AND file = ? "
                              "AND arguments IS NOT NULL", (caller, file))
    written = re.compile(rf"(?<![\w.:]){re.escape(callee)}\s*(<[^()]*>)?\s*\(|[.:]{re.escape(callee)}\s*\(")
    for r in kept[key]:
        if line - OUTER_LINES <= r["line"] <= line and r["callee"] != callee and written.search(r["arguments"]):
            return r["callee"]
    return None


OUTER_LINES = 6  # how far above a call the call holding it as an argument may start (one statement's lines)


def arguments_of_call(con, file: str, line: int, callee: str) -> list[str] | None:
    """The argument texts of the one call of `callee` at file:line (calls.arguments); None when there is none, or
    several with other arguments (a macro's use line holds each call its body writes: eq's Tensor and Scalar
    impls, both `eq_stub(device_type(), *this)`), or it has no argument list."""
    kept = resident(con).call_arguments
    key = (file, line, callee)
    if key not in kept:  # by callee (an indexed column), then the place
        kept[key] = [r["arguments"] for r in rows(
            con, "SELECT arguments FROM calls WHERE callee = ? AND file = ? AND line = ?", (callee, file, line))]
    found = kept[key]
    if not found or len(set(found)) != 1 or not found[0]:
        return None
    try:
        args = json.loads(found[0])
    except ValueError:
        return None
    return [a.strip() for a in args] if all(isinstance(a, str) for a in args) else None


def class_templates(con, qualified_name: str, file: str | None) -> list[dict]:
    """The class templates (struct or class) of a qualified name defined in `file`."""
    return rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND file = ? AND kind IN ('struct', 'class') "
                     "AND is_template = 1", (qualified_name, file))


def template_args_at(con, file: str, line: int, callee: str) -> list[str]:
    """The template argument lists written for `callee` by the calls at file:line (`</*is_scatter_like=*/false>`)."""
    return [r["template_args"] for r in rows(
        con, "SELECT template_args FROM calls WHERE callee = ? AND file = ? AND line = ? AND template_args IS NOT NULL",
        (callee, file, line))]


def stand_in(con, link: dict) -> dict | None:
    """A definition that may stand in for `link`'s (one a build leaves out): in the same file, with the same
    parameters, named by a stem of its name (whole `_` parts dropped from the end: the fork's
    gpu_kernel_maca_arity1 at Loops.cuh:104, under `#ifdef USE_MACA`, extends gpu_kernel at :80). The longest
    such stem; None when there is none."""
    d = symbol_by_id(con, link["id"])
    parts = d["name"].split("_")
    stems = ["_".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
    if not stems or not d.get("signature"):
        return None
    found = rows(con, f"SELECT * FROM symbols WHERE file = ? AND signature = ? AND kind = ? AND id != ? "
                      f"AND name IN ({','.join('?' * len(stems))})", (d["file"], d["signature"], d["kind"], d["id"],
                                                                      *stems))
    if not found:
        return None
    best = max(found, key=lambda r: (len(r["name"]), -r["line"]))
    reach = resident(con).reach.get(best["id"])
    return {**best, "def_file": best["file"], "def_line": best["line"], "overloads": 1, "link_condition": None,
            "reach": reach[0] if reach else None, "device_function": best["id"] in resident(con).device_functions,
            "stands_in_for": d}


def checkout_root(con) -> str | None:
    """The root of the checkout the index was built from (its files are read for snippets and settings)."""
    try:
        found = _kept(con, ("checkout root",), lambda: rows(con, "SELECT root FROM checkouts ORDER BY id LIMIT 1"))
    except sqlite3.OperationalError:  # a database of some tables only (a test's): no checkout to read
        return None
    return found[0]["root"] if found else None


def symbols_named(con, name: str, languages=CPP_LANGUAGES) -> list[dict]:
    return rows(con, f"SELECT * FROM symbols WHERE name = ? AND language IN ({','.join('?' * len(languages))}) "
                     f"ORDER BY file, line", (name, *languages))


def calls_in(con, caller: str, file: str | None = None, lines: tuple[int, int] | None = None) -> list[dict]:
    if file is None:
        return rows(con, "SELECT * FROM calls WHERE caller = ? ORDER BY file, line", (caller,))
    return _kept(con, ("calls in", caller, file, lines), lambda: within(rows(
        con, "SELECT id, file, line, language, caller, callee, qualifier, is_method, template_args FROM calls "
             "WHERE caller = ? AND file = ? ORDER BY line", (caller, file)), lines))


def conditions_over(con, file: str, lines: tuple[int, int] | None) -> list[dict]:
    """The conditions rows (#if branches, if blocks) that overlap lines of a file, outermost first (the file's rows
    read once per trace: its bodies ask in turn)."""
    first, last = lines or (0, 1 << 30)
    return _kept(con, ("conditions over", file, lines), lambda: [
        r for r in rows(con, "SELECT line, end_line, kind, condition FROM conditions WHERE file = ? ORDER BY line, "
                             "-end_line", (file,)) if r["line"] <= last and r["end_line"] >= first])


def if_groups_over(con, file: str, lines: tuple[int, int] | None) -> list[dict]:
    """The #if rows of conditions_over (line, end_line, kind, condition; outermost first), from all #if rows of the
    index read once per open index (~7,600 on 2.4): which headers a build compiles asks about the #include lines of
    hundreds of files, whose `if` rows it does not need."""
    first, last = lines or (0, 1 << 30)
    return [r for r in resident(con).if_groups.get(file, ()) if r["line"] <= last and r["end_line"] >= first]


# -- the Python layer and the names people type -----------------------------------------------------------------
def tuples(con, sql: str, params: tuple) -> list[tuple]:
    """Rows as tuples, not memoized (name resolution asks each once and keeps its own memo)."""
    return [tuple(r) for r in con.execute(sql, params).fetchall()]


def import_target(con, module: str, name: str) -> dict | None:
    """Where `name` in `module` comes from (an import, a from-import, an alias; not an __all__ entry)."""
    found = rows(con, "SELECT target, kind, file, line FROM python_imports WHERE module = ? AND name = ? "
                      "AND kind != 'all' LIMIT 1", (module, name))
    return found[0] if found else None


def dispatch_assignment(con, module: str, name: str) -> dict | None:
    """The `name = boolean_dispatch(...)` assignment of a module (F.max_pool2d)."""
    found = rows(con, "SELECT file, line FROM python_imports WHERE module = ? AND name = ? AND kind = 'dispatch' "
                      "ORDER BY line LIMIT 1", (module, name))
    return found[0] if found else None


def python_def(con, qualified_name: str) -> dict | None:
    """The Python def or method of that name that runs (the last in its file; not a .pyi signature)."""
    found = rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND language = 'python' AND kind IN "
                      "('function', 'method') AND file NOT LIKE '%.pyi' ORDER BY line DESC LIMIT 1", (qualified_name,))
    return found[0] if found else None


def python_class(con, qualified_name: str) -> dict | None:
    found = rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND kind = 'class' AND language = 'python' "
                      "LIMIT 1", (qualified_name,))
    return found[0] if found else None


def python_member(con, qualified_name: str) -> dict | None:
    """A class's member by qualified name: the last definition of it (@overload stubs come first)."""
    found = rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND language = 'python' "
                      "ORDER BY line DESC LIMIT 1", (qualified_name,))
    return found[0] if found else None


def class_bases(con, class_name: str) -> list[dict]:
    """A Python class's bases as written, in order, with the file of the class."""
    return rows(con, "SELECT base, file FROM class_bases WHERE class_name = ? ORDER BY position", (class_name,))


def python_classes_named(con, name: str, near_file: str) -> list[dict]:
    """Python classes of a bare name: the one in `near_file` first, then torch.nn's, then by file."""
    return rows(con, "SELECT * FROM symbols WHERE name = ? AND kind = 'class' AND language = 'python' "
                     "ORDER BY file = ? DESC, file LIKE 'torch/nn/%' DESC, file", (name, near_file))


def python_toplevel_named(con, name: str) -> list[dict]:
    """Python classes and functions of a bare name (methods excluded), by qualified name and place."""
    return rows(con, "SELECT * FROM symbols WHERE name = ? AND language = 'python' AND kind IN ('class', "
                     "'function') ORDER BY qualified_name, file, line", (name,))


def python_compositions_of(con, function: str, file: str) -> list[dict]:
    return rows(con, "SELECT ops, op_names FROM python_compositions WHERE function = ? AND file = ?",
                (function, file))


def python_bridges_in(con, caller: str, file: str) -> list[dict]:
    return rows(con, "SELECT * FROM python_bridges WHERE caller = ? AND file = ? ORDER BY line", (caller, file))


def python_calls_in(con, caller: str, file: str) -> list[dict]:
    return rows(con, "SELECT * FROM calls WHERE caller = ? AND file = ? AND language = 'python' ORDER BY line",
                (caller, file))


def symbol_at(con, qualified_name: str, file: str, line: int) -> dict | None:
    found = rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND file = ? AND line = ? LIMIT 1",
                 (qualified_name, file, line))
    return found[0] if found else None


def cpp_symbols(con, qualified_name: str) -> list[dict]:
    """C++/CUDA definitions of a qualified name, a TORCH_IMPL_FUNC first."""
    return rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND language IN ('cpp', 'cuda') "
                     "ORDER BY kind = 'impl_func' DESC, file, line", (qualified_name,))


def suggestion_pool(con) -> set[str]:
    """The names a "did you mean" draws from: native functions, stubs, torch.nn's classes."""
    pool = {r["n"] for r in rows(con, "SELECT DISTINCT name AS n FROM native_functions")}
    pool |= {r["n"] for r in rows(con, "SELECT DISTINCT stub AS n FROM dispatch_stubs")}
    pool |= {r["n"] for r in rows(con, "SELECT DISTINCT name AS n FROM symbols WHERE language = 'python' "
                                       "AND kind = 'class' AND file LIKE 'torch/nn/%'")}
    return pool


def native_names_like(con, pattern: str, limit: int) -> list[str]:
    """Native function names matching a LIKE pattern (escaped with backslash), shortest first."""
    return [r["n"] for r in rows(con, "SELECT DISTINCT name AS n FROM native_functions WHERE name LIKE ? "
                                      "ESCAPE '\\' ORDER BY length(name) LIMIT ?", (pattern, limit))]


def composite_callers(con, names: tuple[str, str]) -> list[dict]:
    """C++ calls of at::name(...) (or its _symint twin), one row per caller, file and line (the overloads of one
    name are told apart by the line: trace/up.py maps each to the definition that holds it)."""
    return rows(con, "SELECT caller, file, line FROM calls WHERE callee IN (?, ?) AND "
                     "qualifier = 'at' AND language IN ('cpp', 'cuda') AND caller != '' "
                     "GROUP BY caller, file, line ORDER BY file, line", names)


def launches_in_file(con, file: str, named_like: str) -> list[dict]:
    """Up to three <<<>>> or TensorIterator launches of a file, those whose caller is named like the stem first."""
    return rows(con, "SELECT * FROM kernel_launches WHERE file = ? AND kind IN ('chevron', 'tensor_iterator') "
                     "ORDER BY (caller LIKE ?) DESC, line LIMIT 3", (file, f"%{named_like}%"))


def build_meta(con) -> dict | None:
    """The index's build facts the path cache keys on (built_at, extractor_fingerprint); None without a meta
    table."""
    try:
        return dict(con.execute("SELECT key, value FROM meta WHERE key IN ('built_at', 'extractor_fingerprint')"))
    except Exception:  # noqa: BLE001 - an index without meta: no cache
        return None


def database_file(con) -> str:
    """The file of the connection's main database ("" in memory)."""
    return next((r[2] for r in con.execute("PRAGMA database_list") if r[1] == "main"), "")


# names.py: what a typed Python name resolves through (tuples: it keeps its own memo)
def python_symbols_tuples(con, qualified_name: str) -> list[tuple]:
    # the last def of a name is the one that runs (@overload stubs come first): it leads
    return tuples(con, "SELECT kind, qualified_name, file, line FROM symbols WHERE qualified_name = ? AND "
                       "language = 'python' ORDER BY file, line DESC", (qualified_name,))


def module_bindings(con, module: str, member: str) -> list[tuple]:
    """(target, kind, line) of each import, from-import, alias or boolean_dispatch binding `member` in `module`."""
    return tuples(con, "SELECT target, kind, line FROM python_imports WHERE module = ? AND name = ? "
                       "AND kind IN ('import', 'from', 'alias', 'dispatch') ORDER BY line", (module, member))


def star_imports(con, module: str) -> list[tuple]:
    """(source module, line) of each `from source import *` in `module`, last first."""
    return tuples(con, "SELECT target, line FROM python_imports WHERE module = ? AND name = '*' ORDER BY line DESC",
                  (module,))


def all_lists(con, member: str, source: str) -> list[tuple]:
    """(whether the entry is `member`,) for each __all__ entry of `source` (none: it has no __all__)."""
    return tuples(con, "SELECT name = ? FROM python_imports WHERE module = ? AND kind = 'all'", (member, source))


def class_bases_tuples(con, class_name: str) -> list[tuple]:
    return tuples(con, "SELECT base, file FROM class_bases WHERE class_name = ? ORDER BY position", (class_name,))


def module_of_file(con, file: str) -> str:
    row = con.execute("SELECT module FROM files WHERE path = ?", (file,)).fetchone()
    return (row[0] or "") if row else ""


def first_import(con, module: str, name: str) -> str | None:
    """The target of the first import, from-import or alias binding `name` in `module`."""
    row = con.execute("SELECT target FROM python_imports WHERE module = ? AND name = ? AND kind IN ('import', "
                      "'from', 'alias') ORDER BY line LIMIT 1", (module, name)).fetchone()
    return row[0] if row else None


_NATIVE_BY = {  # how a Python name binds a native function -> (WHERE clause, whether `extra` is a parameter)
    "function": ("name = ? AND python_module IS NULL AND variants LIKE '%function%'", False),
    "method": ("name = ? AND variants LIKE '%method%'", False),
    "module": ("name = ? AND python_module = ?", True),
    "packet": ("name = ?", False),  # torch.ops.aten.x: the overload packet, every overload
    "overload": ("name = ? AND overload = ?", True),
}


def natives_bound(con, how: str, name: str, extra: str | None) -> list[tuple]:
    """(full_name, file, line) of the native functions a Python binding of `how` reaches."""
    where, with_extra = _NATIVE_BY[how]
    return tuples(con, f"SELECT full_name, file, line FROM native_functions WHERE {where} ORDER BY line",
                  (name, extra) if with_extra else (name,))


# -- the build a trace is for (conditions.BuildContext) ------------------------------------------------------------
def requirement_sites(con) -> list[dict]:
    """Lines that cannot compile (`#error`, `static_assert(0, ...)`: conditions rows of kind #error), with the
    #if branches around each, innermost last."""
    return resident(con).requirement_sites


def _requirement_sites(con) -> list[dict]:
    out = []
    for r in rows(con, "SELECT file, line, condition FROM conditions WHERE kind = '#error' ORDER BY file, line"):
        out.append({**r, "around": if_groups_over(con, r["file"], (r["line"], r["line"]))})
    return out


def include_sites(con, file: str) -> list[tuple[str, int]]:
    """(file, line) of the #include lines that name `file`: by its path from a source root (`ATen/native/x.cuh`)
    or relative to the including file (`maca_kernels/x.cuh`). [] for an index without the includes table."""
    kept = resident(con).include_site_lists
    if file not in kept:
        try:
            named = resident(con).include_sites.get(file.rpartition("/")[2], [])
        except sqlite3.OperationalError:
            return []
        kept[file] = [(f, line) for f, line, path in named
                      if ("/" in path and (file == path or file.endswith("/" + path)))  # from a source root
                      or posixpath.normpath(posixpath.join(posixpath.dirname(f), path)) == file]  # relative
    return list(kept[file])


def included_in(con, source: str) -> frozenset[str]:
    """The files a translation unit (a .cu or .cpp file) reads: itself and every file it #includes, directly or
    through other headers (kept per open index). Empty for an index without the includes table."""
    kept = resident(con).translation_units
    if source not in kept:
        try:
            included = resident(con).included
            included(source)
        except sqlite3.OperationalError:
            kept[source] = frozenset({source})
            return kept[source]
        seen, todo = {source}, [source]
        while todo:
            for f in included(todo.pop()):
                if f not in seen:
                    seen.add(f)
                    todo.append(f)
        kept[source] = frozenset(seen)
    return kept[source]


def macro_sites(con, name: str, function_like: bool) -> list[dict]:
    """The checkout's `#define name` (or `#define name()`) sites, with the #if branches around each (kept per open
    index: every trace's build asks for the same few macros)."""
    kept = resident(con).macro_sites
    if (name, function_like) not in kept:
        kept[(name, function_like)] = _macro_sites(con, name, function_like)
    return kept[(name, function_like)]


def _macro_sites(con, name: str, function_like: bool) -> list[dict]:
    found = rows(con, "SELECT file, line, body FROM macros WHERE name = ? AND " +
                 ("parameters = '()'" if function_like else "parameters IS NULL") + " ORDER BY file, line", (name,))
    return [{**r, "around": if_groups_over(con, r["file"], (r["line"], r["line"]))} for r in found]


def in_function(con, table: str, caller: str, file: str, lines: tuple[int, int] | None = None) -> list[dict]:
    """Facts of `table` inside a function; with `lines`, only those of the one definition spanning them (C++
    overloads share a qualified name and a file, not a body)."""
    assert table in Resident.TABLES  # our names only
    if (caller, file) not in resident(con).fact_holders[table]:
        return []
    sql = f"SELECT * FROM {table} WHERE caller = ? AND file = ? ORDER BY line"
    if table == "kernel_launches":  # each launch with the definition it launches (launch_links)
        sql = ("SELECT k.*, l.symbol_id AS launch_symbol_id, " + ", ".join(f"s.{c} AS launch_{c}" for c in
                                                                         LAUNCHED_COLUMNS) +
               " FROM kernel_launches k LEFT JOIN launch_links l ON l.launch_id = k.id LEFT JOIN symbols s ON "
               "s.id = l.symbol_id WHERE k.caller = ? AND k.file = ? ORDER BY k.line")
    return within(rows(con, sql, (caller, file)), lines)


def choices_within(con, file: str, first: int, last: int) -> list[dict]:
    """The backend_choices rows of a body's lines whose result a switch or a comparison tests (its chooser locals:
    conditions.BodyGuards.chosen)."""
    return [r for r in resident(con).chooser_rows.get(file, ()) if first <= r["line"] <= last]


def choice_at(con, call: dict) -> dict | None:
    """The backend_choices row of a call (`ConvBackend backend = _select_conv_backend(...)`), if it is one."""
    if (call["file"], call["line"], call["callee"]) not in resident(con).choices:
        return None
    found = rows(con, "SELECT * FROM backend_choices WHERE caller = ? AND file = ? AND line = ? AND callee = ?",
                 (call["caller"], call["file"], call["line"], call["callee"]))
    return found[0] if found else None


# the columns of a launched __global__ definition a launch hop shows (read with the launch, as launch_<column>)
LAUNCHED_COLUMNS = ("id", "qualified_name", "file", "line", "end_line", "kind", "name", "signature", "from_macro")


def launched_definition(launch: dict) -> dict:
    """The launched definition's columns carried by an in_function("kernel_launches") row."""
    return {c: launch[f"launch_{c}"] for c in LAUNCHED_COLUMNS}


def within(found: list[dict], lines: tuple[int, int] | None) -> list[dict]:
    if lines is None:
        return found
    return [r for r in found if lines[0] <= r["line"] <= lines[1]]


def span(d: dict) -> tuple[int, int] | None:
    """The lines of a definition's body, when it is a symbol row (has end_line)."""
    return (d["line"], d["end_line"]) if d.get("end_line") else None


def stub_declarations(con, stub: str) -> list[dict]:
    return rows(con, "SELECT * FROM dispatch_stubs WHERE stub = ? ORDER BY action, file, line", (stub,))


def registrations(con, stub: str, device: str = "all") -> list[dict]:
    found = rows(con, "SELECT * FROM dispatch_registrations WHERE stub = ? ORDER BY device, file, line", (stub,))
    if device == "all":
        return found
    return [r for r in found if r["device"] in registration_devices(device)]


def stub_callers(con, stub: str) -> list[dict]:
    return rows(con, "SELECT * FROM stub_calls WHERE stub = ? ORDER BY file, line", (stub,))


def callers_of(con, name: str) -> list[dict]:
    return rows(con, "SELECT * FROM calls WHERE callee = ? ORDER BY file, line", (name,))


def launches_of(con, kernel: str, def_file: str | None = None) -> list[dict]:
    """The launches of a kernel name; with `def_file`, those the link step tied to the definition in that file (or
    to none): a kernel of the same name in another file has launches of its own."""
    if def_file is None:
        return rows(con, "SELECT * FROM kernel_launches WHERE kernel = ? ORDER BY file, line", (kernel,))
    return rows(con, "SELECT * FROM kernel_launches l WHERE l.kernel = ? AND (EXISTS (SELECT 1 FROM launch_links k "
                     "WHERE k.launch_id = l.id AND k.def_file = ?) OR NOT EXISTS (SELECT 1 FROM launch_links k "
                     "WHERE k.launch_id = l.id AND k.symbol_id IS NOT NULL)) ORDER BY file, line", (kernel, def_file))


def jitted_launches(con) -> list[dict]:
    """The launches of a jiterator launcher (pytorch/jiterator.py): the kernels NVRTC compiles at run time."""
    from ..pytorch.jiterator import JITTED_LAUNCHERS  # noqa: PLC0415
    marks = ", ".join("?" * len(JITTED_LAUNCHERS))
    return rows(con, f"SELECT * FROM kernel_launches WHERE kernel IN ({marks}) ORDER BY file, line",
                tuple(sorted(JITTED_LAUNCHERS)))


def device_operators(con, class_name: str, file: str) -> list[dict]:
    """The __device__ operator()s of a functor class defined in `file` (the op's body the kernel runs)."""
    return rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND file = ? AND kind = 'device_function' "
                     "ORDER BY line", (f"{class_name}::operator()", file))


def enclosing_definition(con, qualified_name: str, file: str, line: int | None = None) -> dict | None:
    """The definition of `qualified_name` in `file`; with `line` (a call's), the overload whose body holds it (SoftMax.cpp's
    two `log_softmax`: the public one at :517 calls the static one at :508), else the first."""
    found = rows(con, "SELECT * FROM symbols WHERE qualified_name = ? AND file = ? ORDER BY line",
                 (qualified_name, file))
    if line is not None:
        holding = [d for d in found if d["line"] <= line <= (d["end_line"] or d["line"])]
        if holding:
            return min(holding, key=lambda d: (d["end_line"] or d["line"]) - d["line"])
    return found[0] if found else None


def tests_typeid(con, d: dict) -> bool:
    """Whether a C++ body has a test of a type (`typeid(f) == typeid(TensorAssign)`) among its conditions."""
    if not d.get("file") or "line" not in d:
        return False
    return bool(rows(con, "SELECT 1 FROM conditions WHERE file = ? AND line BETWEEN ? AND ? AND condition LIKE "
                          "'%typeid%' LIMIT 1", (d["file"], d["line"], d.get("end_line") or d["line"])))


def enclosing_class(con, d: dict) -> dict | None:
    """The class or struct definition whose body holds a member's definition `d` (same file, its span around d's
    line, named as d's scope ends), innermost first: `template <> struct prod_functor<bool> {...}` for the
    operator() at ReduceSumProdKernel.cu:110. None for a definition outside a class body."""
    if d.get("kind") not in ("method", "function", "device_function") or not d.get("scope"):
        return None
    found = rows(con, "SELECT id, kind, name, qualified_name, line, end_line, is_template, template_args FROM symbols "
                      "WHERE file = ? AND name = ? AND kind IN ('struct', 'class') AND line <= ? AND end_line >= ? "
                      "ORDER BY line DESC", (d["file"], d["scope"].rpartition("::")[2], d["line"], d["line"]))
    return found[0] if found else None


def definition_span(con, qualified_name: str, file: str, line: int) -> tuple[int, int] | None:
    found = rows(con, "SELECT line, end_line FROM symbols WHERE qualified_name = ? AND file = ? AND line = ?",
                 (qualified_name, file, line))
    return (found[0]["line"], found[0]["end_line"]) if found else None


def kernels_registered_as(con, function_name: str) -> list[dict]:
    return rows(con, "SELECT * FROM dispatch_registrations WHERE kernel = ? OR kernel = ? ORDER BY file, line",
                (function_name, f"at::native::{function_name}"))


def ops_with_kernel(con, kernel: str) -> list[str]:
    """full_name of the ops whose dispatch rows name `kernel` (bare or at::native::)."""
    plain = resident(con).ops_of_kernel
    return plain.get(kernel, []) + plain.get(f"at::native::{kernel}", [])


def dispatch_rows_with_kernel(con, kernel: str) -> list[dict]:
    return rows(con, """SELECT d.*, n.full_name FROM native_dispatch d JOIN native_functions n
                        ON n.id = d.native_function_id WHERE d.kernel = ? OR d.kernel = ? ORDER BY d.line""",
                (kernel, f"at::native::{kernel}"))


def delegating_entries(con, full_name: str) -> list[dict]:
    return rows(con, "SELECT * FROM native_functions WHERE structured_delegate = ? ORDER BY line", (full_name,))


# -- Python -------------------------------------------------------------------------------------------------
def bridges_to(con, op: str) -> list[dict]:
    return rows(con, "SELECT * FROM python_bridges WHERE op = ? ORDER BY file, line", (op,))


# how torch/nn/modules write a call of torch.nn.functional (`F.layer_norm(...)`, `torch.nn.functional.x(...)`)
FUNCTIONAL_QUALIFIERS = ("F", "torch.nn.functional", "nn.functional", "functional")


def module_forwards_calling(con, name: str) -> list[dict]:
    """The nn.Module forward methods (torch/nn/modules, torch/ao/nn) that call torch.nn.functional's `name`."""
    return rows(con, f"SELECT file, line, caller FROM calls WHERE language = 'python' AND callee = ? AND qualifier IN "
                     f"({','.join('?' * len(FUNCTIONAL_QUALIFIERS))}) AND caller LIKE '%.forward' AND "
                     f"(file LIKE 'torch/nn/modules/%' OR file LIKE 'torch/ao/nn/%') ORDER BY file, line",
                (name, *FUNCTIONAL_QUALIFIERS))


def meta_functions(con, name: str) -> list[dict]:
    return rows(con, "SELECT * FROM symbols WHERE name = ? AND kind IN ('meta_func', 'precompute_meta_func') "
                     "ORDER BY file NOT LIKE '%/native/%', file, line", (name,))


def python_defs_named(con, name: str) -> list[dict]:
    return rows(con, "SELECT * FROM symbols WHERE name = ? AND language = 'python' AND kind IN ('function', "
                     "'method') ORDER BY file, line", (name,))


def generated_launches(con, generator: dict) -> list[dict]:
    """Launcher calls written by `generator` or by the defs of its own file it calls."""
    return rows(con, "SELECT g.* FROM generated_launches g WHERE g.symbol_id = ? OR g.function IN ("
                     "SELECT s.qualified_name FROM calls c JOIN symbols s ON s.file = c.file AND s.name = c.callee "
                     "WHERE c.caller = ? AND c.file = ?) ORDER BY g.line",
                (generator["id"], generator["qualified_name"], generator["file"]))


def launcher_definitions(con, launcher: str) -> list[dict]:
    """The C++ definitions of a TensorIterator launcher that reach a launch (device_reach), e.g. gpu_kernel in
    native/cuda/Loops.cuh."""
    return rows(con, "SELECT s.* FROM symbols s JOIN device_reach r ON r.symbol_id = s.id WHERE s.name = ? AND "
                     "s.language != 'python' AND s.kind = 'function' ORDER BY s.file, s.line LIMIT 3", (launcher,))


def alias_at(con, module: str, name: str) -> dict | None:
    found = rows(con, "SELECT * FROM python_imports WHERE module = ? AND name = ? AND kind = 'alias' LIMIT 1",
                 (module, name))
    return found[0] if found else None


def module_bridges_at(con, file: str, line: int) -> list[dict]:
    return rows(con, "SELECT * FROM python_bridges WHERE file = ? AND line = ? AND caller = '' ORDER BY id",
                (file, line))


def decompositions_of(con, op: str) -> list[dict]:
    """The op's Python functions (a `skipped` row names none: activate_meta's list of ops it leaves alone)."""
    return rows(con, "SELECT * FROM decompositions WHERE op = ? AND kind != 'skipped' ORDER BY kind, file, line",
                (op,))


def codegen_files(con, names: tuple[str, ...]) -> list[dict]:
    """Generator scripts (under torchgen/ or tools/) and templates, by file name: layouts move between releases,
    these names do not."""
    wanted = set(names)
    return [{"path": path, "layer": layer} for path, layer in resident(con).codegen_files
            if path.rsplit("/", 1)[-1] in wanted]


# -- profile: what opindex/profile asks of the index, by name (a profiled kernel names functions, not symbol ids) --
# The profile's attribution (profile/attribute.py, library.py, source.py) asks these besides the ones above
# (symbols_named, callers_of, calls_at, calls_in, launches_of, stub_callers, stub_declarations, registrations,
# native_by_name, native_by_full_name, dispatch_rows, python_defs_named). Where the table has no natural order the
# rows come in id order, as they were written.
def symbol_count(con, name: str) -> int:
    """How many symbols (of any language) are named `name`: a name with many is too generic to follow."""
    return rows(con, "SELECT count(*) AS n FROM symbols WHERE name = ?", (name,))[0]["n"]


def symbols_qualified(con, qualified_name: str) -> list[dict]:
    """The symbols (of any language) of a qualified name."""
    return rows(con, "SELECT * FROM symbols WHERE qualified_name = ? ORDER BY file, line", (qualified_name,))


def definitions_in_file(con, file: str, kinds: tuple[str, ...]) -> list[dict]:
    """(line, end_line, qualified_name) of a file's definitions of `kinds`, by line."""
    return rows(con, f"SELECT line, end_line, qualified_name FROM symbols WHERE file = ? AND kind IN "
                     f"({','.join('?' * len(kinds))}) ORDER BY line", (file, *kinds))


def chosen_kernel_definitions(con) -> list[dict]:
    """(dispatch_id, def_file, def_line) of every definition the link step chose for a dispatch row's kernel."""
    return rows(con, "SELECT dispatch_id, def_file, def_line FROM op_kernel_links WHERE chosen")


def all_dispatch_rows(con) -> list[dict]:
    """Every native_dispatch row with its entry's full_name: a few thousand, read once per walk."""
    return rows(con, """SELECT d.*, n.full_name FROM native_dispatch d JOIN native_functions n
                        ON n.id = d.native_function_id ORDER BY d.id""")


def all_registrations(con) -> list[dict]:
    """Every dispatch_registrations row: a few thousand, read once per walk (the up walks key them by kernel)."""
    return rows(con, "SELECT * FROM dispatch_registrations ORDER BY id")


def registrations_on(con, devices: tuple[str, ...]) -> list[dict]:
    """Every registration (stub, file, line, kernel) of one of `devices` that names a kernel."""
    return rows(con, f"SELECT stub, file, line, kernel FROM dispatch_registrations WHERE device IN "
                     f"({','.join('?' * len(devices))}) AND kernel IS NOT NULL ORDER BY id", devices)


def stub_arguments_of(con, stub: str) -> list[dict]:
    """The calls that pass `stub` to a helper (stub_arguments: helper, file, line); [] on an index without the
    table (it comes with the link step)."""
    try:
        return rows(con, "SELECT helper, file, line FROM stub_arguments WHERE stub = ? ORDER BY id", (stub,))
    except sqlite3.OperationalError:
        return []


def stub_arguments_in(con, caller: str) -> list[dict]:
    """(stub, callee, helper) of the calls in `caller` at a line where a stub is passed to a helper; [] on an index
    without stub_arguments."""
    try:
        return rows(con, "SELECT sa.stub, c.callee, sa.helper FROM calls c JOIN stub_arguments sa ON sa.file = c.file "
                         "AND sa.line = c.line WHERE c.caller = ? ORDER BY c.id, sa.id", (caller,))
    except sqlite3.OperationalError:
        return []


def stub_calls_by(con, caller: str) -> list[dict]:
    """The stub calls (stub, device_arg) of a function, by qualified name in any file."""
    return rows(con, "SELECT stub, device_arg FROM stub_calls WHERE caller = ? ORDER BY id", (caller,))


def call_count(con, callee: str) -> int:
    """How many calls of `callee` the index holds (every language)."""
    return rows(con, "SELECT count(*) AS n FROM calls WHERE callee = ?", (callee,))[0]["n"]


def calls_of_in_file(con, callee: str, file: str) -> list[dict]:
    """The calls of `callee` inside functions of one file, by line (a name called all over the tree is read in its
    own file only)."""
    return rows(con, "SELECT caller, file, line, qualifier, is_method FROM calls WHERE callee = ? AND file = ? "
                     "AND caller != '' ORDER BY line", (callee, file))


def library_calls_of(con, caller: str, libraries: tuple[str, ...]) -> list[dict]:
    """The calls into one of `libraries` a function (by qualified name, any file) makes, by file and line."""
    return rows(con, f"SELECT caller, file, line, library, function FROM library_calls WHERE caller = ? AND library "
                     f"IN ({','.join('?' * len(libraries))}) ORDER BY file, line", (caller, *libraries))


def files_in_language(con, language: str) -> list[str]:
    return [r["path"] for r in rows(con, "SELECT path FROM files WHERE language = ? ORDER BY id", (language,))]


def function_macros(con, file: str) -> list[dict]:
    """The function-like #defines of a file (name, line, parameters, body)."""
    return rows(con, "SELECT name, line, parameters, body FROM macros WHERE file = ? AND parameters IS NOT NULL "
                     "ORDER BY id", (file,))


def function_macro(con, name: str, file: str) -> dict | None:
    """The function-like #define `name` a definition in `file` was written by: the file's own, else the only one
    the checkout has (file, line, parameters, body); None when none, or several elsewhere, answer."""
    found = rows(con, "SELECT file, line, parameters, body FROM macros WHERE name = ? AND parameters IS NOT NULL "
                      "ORDER BY file, line", (name,))
    own = [r for r in found if r["file"] == file]
    return own[0] if own else found[0] if len(found) == 1 else None


def ufunc_loops_named(con, loop: str) -> list[dict]:
    """The ufunc_inner_loop rows whose loop is `loop` (add: the entries torchgen writes CUDAFunctor_add for)."""
    return rows(con, "SELECT * FROM native_ufunc_loops WHERE loop = ? ORDER BY line", (loop,))


# -- "did you mean": the names each command takes, near a typed one ------------------------------------------------
NAME_POOLS = {  # what a command looks a name up in: (table, column)
    "op": ("native_functions", "name"), "stub": ("dispatch_stubs", "stub"), "find": ("symbols", "name"),
    "callers": ("calls", "callee"), "callees": ("symbols", "name")}


def names_near(con, what: str, stem: str, slack: int = 3) -> list[str]:
    """Distinct names of `what`'s pool (NAME_POOLS) starting with the same letter (any case) as `stem`, of about its
    length, or holding it: the few a close match is drawn from (one scan of the pool)."""
    table, column = NAME_POOLS[what]  # names from this module, never from users
    return [r["n"] for r in rows(
        con, f"SELECT DISTINCT {column} AS n FROM {table} WHERE (lower(substr({column}, 1, 1)) = lower(?) AND "
             f"length({column}) BETWEEN ? AND ?) OR instr(lower({column}), lower(?)) > 0 LIMIT 20000",
        (stem[:1], len(stem) - slack, len(stem) + slack, stem))]
