"""The call graph of the link step: call_links (which definitions a C++ call reaches), functor_links (the methods
of objects a function is handed) and device_reach (which definitions reach device code, and how far), derived from
the per-file facts. A cold build with two jobs derives them in a forked process (Beside) while the writing process
creates the indexes and derives the other links (link.py)."""
from __future__ import annotations

import gc
import json
import os
import re
import sqlite3
import threading
from collections import defaultdict

from ..extract.cpp_macros import arguments
from ..pytorch.devices import op_api_call
from ..pytorch.receivers import metadata_query, tensor_parameter
from ..pytorch.stubs import is_stub_call
from ..pytorch.plumbing import PLUMBING_OPS
from .definitions import (HEADER_EXTENSIONS, IDENTIFIER, PARAMETER, S_FILE, S_ID, S_KIND, S_LINE, S_QUAL, S_SCOPE,
                          S_SIG, S_TARGS, Conditions, Includes, Symbols, definition_columns)

CHECKOUT_ID = 1
# Qualifiers of calls that are not helpers of the kernel: the standard library, c10 utilities, macros.
_NOT_HELPERS = ("c10", "std", "TORCH", "at::_ops")
# (file, qualifier, callee) of the C++ calls -> the (caller, file) nodes making them (CallSites.keys)
Keys = dict[tuple[str, str, str], set[tuple[str, str]]]

# a functor class defined in several other files (same name, no own one in the calling file): the methods of at
# most this many of them are linked (functor_links), in index order; docs/indexing.md states it
NAMESAKES = 4


class CallSites:
    """The C++ calls the call graph reads, in one scan of the calls table (in a cold build the forked process reads
    them before any index exists): the non-method sites by what they call, (file, qualifier, callee) -> the
    (caller, file) nodes making that call, for call_links and device_reach, with their lines; and the method calls
    of `working` names, for functor_links."""

    def __init__(self, con):
        # only methods named like one that itself launches, calls a library or a stub can bring device code
        self.working = set()
        for table in ("kernel_launches", "library_calls", "stub_calls"):
            self.working |= {r[0].rpartition("::")[2] for r in con.execute(f"SELECT DISTINCT caller FROM {table}")}
        con.execute("CREATE TEMP TABLE IF NOT EXISTS _working (name TEXT PRIMARY KEY)")
        con.execute("DELETE FROM _working")
        con.executemany("INSERT OR IGNORE INTO _working VALUES (?)", [(n,) for n in self.working])
        # two scans in C (no index is needed, none may exist yet) rather than one with a branch per row in Python
        self.rows: list[tuple[str, int, str, str, str, str | None]] = con.execute(
            # (file, line, caller, qualifier, callee, template_args)
            "SELECT file, line, caller, qualifier, callee, template_args FROM calls WHERE language != 'python' AND "
            "is_method = 0").fetchall()
        # ops called as methods on a plainly named receiver (device_reach keeps those on a Tensor parameter)
        ops = {r[0] for r in con.execute("SELECT DISTINCT name FROM native_functions")} - PLUMBING_OPS
        con.execute("CREATE TEMP TABLE IF NOT EXISTS _op_names (name TEXT PRIMARY KEY)")
        con.execute("DELETE FROM _op_names")
        con.executemany("INSERT OR IGNORE INTO _op_names VALUES (?)", [(n,) for n in ops])
        self.methods: set[tuple[str, str, str, str]] = set()  # (caller, file, receiver, method) of working names
        self.op_methods: set[tuple[str, str, str, str]] = set()  # the same of op names, receivers plain names
        # ... of those, the receivers declared in the caller as a Tensor local (`Tensor q = ...`, `auto result =
        # at::empty(size, options)`): an op call whatever the caller's parameters
        self.tensor_locals: set[tuple[str, str, str]] = set()
        made = ops | PLUMBING_OPS
        for caller, file, receiver, method, working, declared in con.execute(
                "SELECT caller, file, qualifier, callee, callee IN _working, receiver_type FROM calls WHERE "
                "language != 'python' AND is_method = 1 AND (callee IN _working OR (callee IN _op_names AND "
                "qualifier GLOB '[A-Za-z_]*' AND qualifier NOT GLOB '*[^A-Za-z0-9_]*'))"):
            (self.methods if working else self.op_methods).add((caller, file, receiver, method))
            if working and method in ops and _PLAIN.match(receiver):
                self.op_methods.add((caller, file, receiver, method))
            if declared and tensor_local(declared, made):
                self.tensor_locals.add((caller, file, receiver))
        # (file, qualifier, callee) -> the (caller, file) nodes making that call (device_reach's nodes): each link
        # is derived once per key, and the passes over every site go over keys, a third fewer than the sites
        self.keys: Keys = {}
        # (file, qualifier, callee) -> the template arguments its calls write (gemm_internal<float>(...))
        self.specialized: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        self.templated: list[tuple[str, int, str, str, str, str]] = []  # the rows of calls with template arguments
        keys, specialized = self.keys, self.specialized
        for row in self.rows:
            file, _, caller, qualifier, callee, targs = row
            key = (file, qualifier, callee)
            callers = keys.get(key)
            if callers is None:
                keys[key] = {(caller, file)}
            else:
                callers.add((caller, file))
            if targs is not None:
                specialized[key].add(targs)
                self.templated.append(row)

    def lines(self, keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], list[int]]:
        """(file, qualifier, callee) -> the lines of those calls, ascending."""
        at: dict[tuple[str, str, str], set[int]] = defaultdict(set)
        for file, line, _, qualifier, callee, _ in self.rows:
            if (file, qualifier, callee) in keys:
                at[(file, qualifier, callee)].add(line)
        return {key: sorted(found) for key, found in at.items()}


def call_graph(con, symbols: "Symbols", includes: "Includes", conditions: "Conditions",
               functors: bool = True) -> dict[str, list[tuple]]:
    """Every call link, and the functor links and device reach that walk them: rows per table, not inserted."""
    return {table: rows for part in call_graph_parts(con, symbols, includes, conditions, functors)
            for table, rows in part.items()}


def call_graph_parts(con, symbols: "Symbols", includes: "Includes", conditions: "Conditions",
                     functors: bool = True):
    """call_graph's rows in two parts, as they are derived: call_links, then functor_links and device_reach (the
    walks over them). A forked process sends the first ahead (Beside)."""
    calls = CallSites(con)
    rows, links = _calls(symbols, calls.keys, conditions, calls.specialized)
    yield {"call_links": rows}
    yield walks(con, symbols, includes, calls, links, functors)


def walks(con, symbols: Symbols, includes: Includes, calls: CallSites, links: dict, functors: bool) -> dict[str, list[tuple]]:
    out, extra = {}, []
    if functors:
        out["functor_links"], extra = _functors(con, symbols, includes, links, calls)
    # a functor class is device code itself (its operator() is __device__): distance 0, and no caller reaches
    # device code through building one (it does through the launcher it hands the object to)
    out["device_reach"] = _device_reach(con, symbols, calls.keys, links, extra, calls.op_methods,
                                        calls.tensor_locals) + [
        (s[S_ID], 0, "functor") for defs in symbols.functors.values() for s in defs]
    return out


CALL_GRAPH_INSERTS = {
    "call_links": f"INSERT INTO call_links (file, qualifier, callee, symbol_id, definition, def_file, def_line, "
                  f"overloads, condition, template_args, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                  f"{CHECKOUT_ID})",
    "functor_links": f"INSERT INTO functor_links (function_id, parameter, method, functor, file, line, symbol_id, "
                     f"definition, def_file, def_line, checkout_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                     f"{CHECKOUT_ID})",
    "device_reach": f"INSERT INTO device_reach (symbol_id, distance, reaches, checkout_id) VALUES "
                    f"(?, ?, ?, {CHECKOUT_ID})",
}


class Beside:
    """The call graph of a cold build, derived in a forked process while the writing process creates the indexes
    and derives the other links: on two cores the two halves of the link step take about the same time (docs/build.md,
    "The link step"). The process reads the committed facts through its own read-only connection (none of it needs an
    index) and sends its rows back through a pipe in two parts (call_graph_parts): the writing process inserts
    call_links while the process still walks them. Its connection is closed before it sends the last part, so it
    holds no lock when the writing process commits."""

    def __init__(self, db, root: str | None, lock_fd: int | None = None):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe(duplex=False)
        # it dies with the writing process and lets go of the build lock, as a worker does (children.join_parent):
        # a build killed in its link phase leaves no process behind holding the index
        self.proc = ctx.Process(target=_beside, args=(child, str(db), root, os.getpid(), lock_fd), daemon=True,
                                name="opindex-call-graph")
        self.proc.start()
        child.close()

    def receive(self, insert) -> bool:
        """Hand each part of its rows (a dict of rows per table) to `insert` as it comes; False when the process
        failed or died before the last part (the caller then derives the call graph itself, anew). After the last
        part the process is ending: close() reaps it later, not waiting here for its exit (0.06 s on 2.4)."""
        try:
            while True:
                message = self.conn.recv()
                if message is None:
                    self.close()
                    return False
                last, part = message
                insert(part)
                if last:
                    return True
        except (EOFError, OSError):
            self.close()
            return False
        except BaseException:  # Ctrl-C, SIGTERM: not a moment's wait for it
            self.stop()
            raise

    def close(self) -> None:
        """Stop waiting for it: a process still sending finds the pipe closed and ends."""
        self.conn.close()
        self.proc.join(5)
        if self.proc.exitcode is None:
            self.proc.kill()
            self.proc.join()

    def stop(self) -> None:
        """End it now: the build was interrupted or failed, nothing it sends will be read (close() would wait up
        to 5 s for a process still walking the call graph)."""
        self.conn.close()
        if self.proc.exitcode is None:
            self.proc.kill()
        self.proc.join()


def _beside(conn, db: str, root: str | None, parent: int | None = None, lock_fd: int | None = None) -> None:
    import signal

    from ..db import readonly_uri
    from .children import join_parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writing process's to handle
    join_parent(parent, lock_fd)
    gc.disable()  # as in link.derive: no cycles to collect, and the collector's passes cost a fifth of the time
    last, ahead = None, None
    try:
        con = sqlite3.connect(readonly_uri(db), uri=True)
        try:
            includes = Includes(con)
            parts = call_graph_parts(con, Symbols(con), includes, Conditions(includes, con))
            # sent by a thread: a send waits until the writing process reads (a pipe holds 64 KiB), and it reads
            # once its own indexes and links are done; the walks go on meanwhile
            ahead = threading.Thread(target=conn.send, args=((False, next(parts)),), daemon=True)
            ahead.start()
            last = next(parts)
        finally:
            con.close()  # before the last part: the writing process commits once it has it
    except Exception:  # noqa: BLE001 - the writing process derives them itself, and sees the error there
        last = None
    if ahead is not None:
        ahead.join()  # one message at a time on the pipe
    conn.send(None if last is None else (True, last))
    conn.close()


def relink_calls(con, symbols: "Symbols", keys: "Keys", conditions: "Conditions", changed: set[str],
                 specialized: dict[tuple[str, str, str], set[str]]) -> dict[tuple[str, str, str], list[int]]:
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
    rows, _ = _calls(symbols, {k: v for k, v in keys.items() if k[0] in changed or k[2] in names}, conditions,
                     specialized)
    con.executemany(CALL_GRAPH_INSERTS["call_links"], rows)
    # the links a cold build's _calls returns: to helper definitions, not the rows of functor classes and
    # __device__ functions (device_reach must read the same links either way: a call of `maximum` linked to the
    # functor class at::native::maximum is still an op call for it)
    helpers = {d[S_ID] for defs in symbols.helpers.values() for d in defs}
    links: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for file, qualifier, callee, sid in con.execute("SELECT file, qualifier, callee, symbol_id FROM call_links "
                                                    "WHERE template_args IS NULL ORDER BY id"):
        if sid in helpers:
            links[(file, qualifier, callee)].append(sid)
    return links


# -- call -> helper definition -------------------------------------------------------------------------------------
def helper_targets(symbols: Symbols, file: str, qualifier: str, callee: str,
                   includes: Includes | None = None, among: dict[str, list[tuple]] | None = None) -> list[tuple]:
    """The definition(s) a C++ call of `qualifier::callee` in `file` reaches, by the rule in call_links' comment.
    With `includes` (the #include facts), a header's call of a name it does not define reaches the definitions in
    the files that #include that header, when some do. `among`: other definitions by name (symbols.functors)."""
    defs = (symbols.helpers if among is None else among).get(callee)
    if not defs and among is None and callee.startswith("TH"):  # THCudaTensor_sort: the generic THCTensor_(sort)
        defs = next((symbols.helpers[g] for g in symbols.generic.names(callee) if g in symbols.helpers), None)
    if not defs:
        return []
    if qualifier:  # cpublas::gemm is not at::cuda::blas::gemm: a written qualifier must match, unless a parse
        # error lost the definition's outer namespaces (scope '' or `native` for at::native: it may be the one)
        defs = [s for s in defs if s[S_QUAL].endswith(f"{qualifier}::{callee}")] or \
            [s for s in defs if not s[S_SCOPE] or qualifier.endswith(f"::{s[S_SCOPE]}")]
    if len(defs) <= 1:
        return defs
    same_file = [s for s in defs if s[S_FILE] == file]
    if not same_file and len(defs) > 3 and not qualifier and not _included_header(defs, file, includes):
        if len({s[S_QUAL] for s in defs}) == 1:  # one template's specialisations, one per file (run_mha_fwd_<T, 32>
            return defs                          # in flash_fwd_hdim32_fp16_sm80.cu ...): the call may reach each
        return []  # a common name with many definitions: not a helper of this file
    if same_file:
        first = same_file[0]
    else:
        files = {s[S_FILE] for s in defs}
        if len(files) > 1 and includes is not None and file.endswith(HEADER_EXTENSIONS):
            # a header is read inside the files that include it: maca_kernels/CUDALoops_maca_arity3.cuh calls
            # launch_vectorized_kernel, which CUDALoops.cuh and CUDALoops_copy.cuh define before including it
            includers = includes.includers(file, files)
            if includers:
                return [s for s in defs if s[S_FILE] in includers]
        folder = file.rsplit("/", 1)[0]
        # real code before stand-ins (ConvPlaceholders.cpp), then the same folder
        first = min(defs, key=lambda s: ("placeholder" in s[S_FILE].lower(), not s[S_FILE].startswith(folder + "/"),
                                         s[S_FILE], s[S_LINE]))
    # the C++ overloads of that name in that file: all of them, marked, never one picked
    return [s for s in defs if s[S_QUAL] == first[S_QUAL] and s[S_FILE] == first[S_FILE]]


def _included_header(defs: list[tuple], file: str, includes: Includes | None) -> bool:
    """Whether all of `defs` are in one header that `file` #includes itself: the overloads of a helper there
    (ReduceOpsUtils.h's four make_reduction, which ReduceOps.cpp includes), not a common name."""
    files = {s[S_FILE] for s in defs}
    if len(files) != 1 or includes is None:
        return False
    header = next(iter(files))
    return header.endswith(HEADER_EXTENSIONS) and bool(includes.includers(header, {file}))


def _calls(symbols: Symbols, keys: "Keys", conditions: "Conditions",
           specialized: dict[tuple[str, str, str], set[str]]) -> tuple[list[tuple], dict]:
    """call_links rows of the calls in `keys` (CallSites.keys), and (file, qualifier, callee) -> the symbol ids
    linked (for any template arguments: what device_reach and functor_links walk)."""
    rows, helpers, links = [], symbols.helpers, {}
    legacy = bool(symbols.generic.forms)  # THCudaTensor_sort names no definition itself: THCTensor_(sort)
    for file, qualifier, callee in sorted(k for k in keys if k[2] in helpers or (legacy and k[2].startswith("TH"))):
        if qualifier in ("at", "at::_ops") or qualifier.startswith(_NOT_HELPERS):
            continue
        # every same-file alternative is linked with its #if condition (`#ifdef USE_MACA` / `#else`, `#if
        # !AT_CUDNN_ENABLED()` stand-ins): the build a trace is for decides which one runs
        targets = helper_targets(symbols, file, qualifier, callee, conditions.includes)
        if targets:
            links[(file, qualifier, callee)] = [s[S_ID] for s in targets]
        for s in targets:
            rows.append((file, qualifier, callee, *definition_columns(s), len(targets),
                         conditions.of(s) if len(targets) > 1 else None, None))
        if len(targets) > 1 and (file, qualifier, callee) in specialized:
            rows += _specialized(file, qualifier, callee, targets, specialized[(file, qualifier, callee)], conditions)
    return rows + _functor_classes(symbols, keys, conditions, links) + _device_functions(symbols, keys,
                                                                                        conditions), links


def _device_functions(symbols: Symbols, keys: "Keys", conditions: "Conditions") -> list[tuple]:
    """call_links rows for the calls device code makes of __device__ functions (scatter_add's kernel calls
    fastAtomicAdd): the calling function a __global__ kernel or a __device__ function, the targets __device__
    functions, by the helpers' rule. Not in `links`: they launch nothing, and device_reach does not walk them."""
    device = {(d[S_QUAL], d[S_FILE]) for defs in symbols.device_functions.values() for d in defs}
    device |= {(d[S_QUAL], d[S_FILE]) for defs in symbols.by_name.values() for d in defs
               if d[S_KIND] == "global_kernel"}
    rows = []
    for file, qualifier, callee in sorted(k for k, callers in keys.items() if k[2] in symbols.device_functions
                                          and not device.isdisjoint(callers)):
        if qualifier.startswith(_NOT_HELPERS):
            continue
        rows += _link_rows(symbols, file, qualifier, callee, conditions, symbols.device_functions)
    return rows


def _functor_classes(symbols: Symbols, keys: "Keys", conditions: "Conditions",
                     links: dict) -> list[tuple]:
    """call_links rows for calls that build a functor object (`binary_internal::MulFunctor<opmath_t>()` handed to
    opmath_symmetric_gpu_kernel_with_scalars): the class, by the helpers' rule. Not in `links`: device_reach does
    not walk through a class, it counts the class itself (walks)."""
    rows = []
    functors = symbols.functors
    for file, qualifier, callee in sorted(k for k in keys if k[2] in functors):
        if qualifier in ("at", "at::_ops") or qualifier.startswith(_NOT_HELPERS):
            continue
        linked = set(links.get((file, qualifier, callee), ()))
        if linked and any(s[S_ID] in linked and not s[S_QUAL].endswith(f"{callee}::{callee}")
                          for s in symbols.by_name.get(callee, ())):
            continue  # a function of that name, not (only) the class's constructor (AddFunctor::AddFunctor)
        rows += _link_rows(symbols, file, qualifier, callee, conditions, functors)
    return rows


def _link_rows(symbols: Symbols, file: str, qualifier: str, callee: str, conditions: "Conditions",
               among: dict[str, list[tuple]]) -> list[tuple]:
    """call_links rows of one call among other definitions than the helpers (functor classes, __device__
    functions), by the helpers' rule."""
    targets = helper_targets(symbols, file, qualifier, callee, conditions.includes, among=among)
    return [(file, qualifier, callee, *definition_columns(s), len(targets),
             conditions.of(s) if len(targets) > 1 else None, None) for s in targets]


def _specialized(file: str, qualifier: str, callee: str, targets: list[tuple], written: set[str],
                 conditions: "Conditions") -> list[tuple]:
    """The rows for calls written with template arguments that name explicit specializations among `targets`:
    gemm<float>'s `gemm_internal<float>(...)` reaches `template <> void gemm_internal<float>(...)`, not its five
    siblings. Arguments naming none of them (`gemm_internal<scalar_t>`, a template's own parameter) keep the rows
    of every call."""
    rows = []
    for targs in sorted(written):
        exact = [s for s in targets if s[S_TARGS] == targs]
        for s in exact:
            rows.append((file, qualifier, callee, *definition_columns(s), len(exact),
                         conditions.of(s) if len(exact) > 1 else None, targs))
    return rows


# -- which definitions reach device code ----------------------------------------------------------------------------
def _functors(con, symbols: Symbols, includes: "Includes", links: dict, sites: CallSites) -> tuple[
        list[tuple], list[tuple[int, int]]]:
    """functor_links: a function that calls a method of one of its parameters (sortCommon's `sorter.sort<A>(...)`)
    and a call that passes a temporary object for that parameter (`sortCommon(SmallBitonicSort{}, ...)`): the
    passed class's method. Also a function that calls a parameter itself (split_batch_dim_to_32bit_out's
    `func_32bit(...)`, method '') and a call that passes a function by name for it (Conv_v7.cpp:791 passes
    raw_cudnn_convolution_forward_out_32bit): that function. Returns its rows, and the edges (function id, method
    or function id) device_reach adds."""
    methods = _Methods(con)
    rows, edges = _template_functors(con, methods, symbols, links, sites)
    more, more_edges = _argument_functors(con, methods, symbols, includes, links, sites)
    return sorted(set(rows + more), key=_safe), sorted(set(edges + more_edges), key=_safe)


def _argument_functors(con, known: "_Methods", symbols: Symbols, includes: "Includes", links: dict,
                       sites: CallSites) -> tuple[
        list[tuple], list[tuple[int, int]]]:
    """functor_links of objects and functions passed as call arguments (see _functors)."""
    calls = sorted(r for r in sites.methods if IDENTIFIER.match(r[2]))  # (caller, file, receiver, method)
    # bare calls of a name nothing defines: perhaps a parameter called as a function (func_32bit(...))
    calls += sorted({(caller, file, callee, "") for (file, qualifier, callee), callers in sites.keys.items()
                     if not qualifier and callee not in symbols.by_name for caller, _ in callers})
    if not calls:
        return [], []
    params: dict[tuple[str, str], list[tuple[int, list[str]]]] = defaultdict(list)
    called: dict[tuple[str, str], set[str]] = defaultdict(set)  # (caller, file) -> receivers / names it calls
    for caller, file, receiver, _ in calls:
        called[(caller, file)].add(receiver)
    for defs in symbols.by_name.values():  # the definitions making those calls
        for d in defs:
            names = called.get((d[S_QUAL], d[S_FILE]))
            sig = d[S_SIG]
            if names is None or d[S_KIND] not in ("function", "method") or not sig or "(" not in sig or \
                    not any(name in sig for name in names):  # none of them is a parameter: not parsed
                continue
            params[(d[S_QUAL], d[S_FILE])].append(
                (d[S_ID], [m.group(1) for m in PARAMETER.finditer(sig[sig.index("("):])]))
    uses: dict[int, list[tuple[int, str, str]]] = defaultdict(list)  # definition id -> (position, parameter, method)
    for caller, file, receiver, method in calls:
        for sid, names in params.get((caller, file), ()):
            if receiver in names:
                uses[sid].append((names.index(receiver), receiver, method))
    if not uses:
        return [], []
    methods = known.get()
    rows, edges = [], []
    passing = {key: [t for t in targets if t in uses] for key, targets in links.items()}
    passing = {key: wanted for key, wanted in passing.items() if wanted}
    at = sites.lines(set(passing))
    written = _call_arguments(con, {key[2] for key in passing})
    named = []  # (file, line, callee, caller's parameter, argument, target): a name passed for a called parameter
    for (file, qualifier, callee), wanted in passing.items():
        for line in at.get((file, qualifier, callee), ()):
            args = written.get((file, line, callee, qualifier)) or written.get((file, line, callee), [])
            for target in wanted:
                for position, parameter, method in uses[target]:
                    arg = args[position] if position < len(args) else ""
                    if method:
                        for functor, d in _passed(symbols, includes, file, arg, method, methods):
                            rows.append((target, parameter, method, functor, file, line, d[0], d[2], d[4], d[5]))
                            edges.append((target, d[0]))
                    elif _FUNCTION_NAME.match(arg):
                        named.append((file, line, callee, parameter, arg, target))
    own = _own_parameters(symbols, sites, named)
    for file, line, callee, parameter, arg, target in named:
        if _FUNCTION_NAME.match(arg).group(1) in own.get((file, line, callee), ()):
            continue  # uniform_and_transform passes its own parameter `transform` on: not a function's name
        for functor, d in _passed(symbols, includes, file, arg, "", methods):
            rows.append((target, parameter, "", functor, file, line, d[0], d[2], d[4], d[5]))
            edges.append((target, d[0]))  # None for an op passed by its API name: the function reaches an op
    return sorted(set(rows), key=_safe), sorted(set(edges), key=_safe)


def _safe(row: tuple) -> tuple:
    """A sort key for rows that may hold None where others hold a value (an op passed by name has no definition)."""
    return tuple((v is None, v if v is not None else 0) for v in row)


class _Methods:
    """"Class::method" -> the definitions (id, name, qualified_name, kind, file, line) of methods named like one that
    works (launches, calls a library or a stub); read when first needed, once for both kinds of functor links."""

    def __init__(self, con):
        self.con, self.found = con, None

    def get(self) -> dict[str, list[tuple]]:
        if self.found is None:
            self.found = defaultdict(list)
            for row in self.con.execute("SELECT id, name, qualified_name, kind, file, line FROM symbols WHERE kind = "
                                        "'method' AND name IN _working AND language != 'python'"):
                cls = row[2].rsplit("::", 2)
                if len(cls) >= 2:
                    self.found[f"{cls[-2]}::{row[1]}"].append(row)
        return self.found


def _template_functors(con, known: "_Methods", symbols: Symbols, links: dict,
                       sites: CallSites) -> tuple[list[tuple], list[tuple[int, int]]]:
    """functor_links of classes passed as template arguments for a template parameter the template calls:
    `template<template<typename> class exponential_kernel, typename RNG> Tensor& exponential_impl_(...)` runs
    `exponential_kernel<RNG>()(iter, lambda, gen)`, and Distributions.cpp:232 calls
    `exponential_impl_<ExponentialStub, Generator>(...)`: ExponentialStub::operator() (method '' : the parameter
    is called, its object's operator() runs)."""
    # bare template calls of a name the file does not define: perhaps a template parameter (exponential_kernel<RNG>()
    # in a header; that name may still link to the files that include it, wrongly: the parameter is what it is)
    called: dict[tuple[str, str], set[str]] = defaultdict(set)  # (caller, file) -> such callee names
    by_name = symbols.by_name
    for file, _, caller, qualifier, callee, _ in sites.templated:
        if not qualifier and not any(d[S_FILE] == file for d in by_name.get(callee, ())):
            called[(caller, file)].add(callee)
    for (file, qualifier, callee), callers in sites.keys.items():
        if callee == "operator()" and IDENTIFIER.match(qualifier) and not any(
                d[S_FILE] == file for d in by_name.get(qualifier, ())):
            for caller, _ in callers:  # `OpFunctor<at::Half, float>{}(iter)` (1.8 reduce_dispatch)
                called[(caller, file)].add(qualifier)
    if not called:
        return [], []
    uses: dict[int, list[tuple[int, str]]] = {}  # template definition id -> (position, template parameter)
    # only templates have template parameters: the others' lines are not read (seven in eight definitions)
    templates = dict(con.execute("SELECT id, template_parameters FROM symbols WHERE is_template = 1"))
    for defs in symbols.by_name.values():
        for d in defs:
            names = called.get((d[S_QUAL], d[S_FILE]))
            if names is None or d[S_ID] not in templates:
                continue
            params = json.loads(templates[d[S_ID]] or "[]")  # symbols.template_parameters
            found = [(params.index(n), n) for n in names if n in params]
            if found:
                uses[d[S_ID]] = found
    if not uses:
        return [], []
    methods = known.get()
    rows, edges = [], []
    for file, line, _, qualifier, callee, targs in sites.templated:
        for target in links.get((file, qualifier, callee), ()):
            if target not in uses:
                continue
            args = [a.strip() for a in arguments(f"({targs.strip()[1:-1]})".encode(), 0)[0]]
            for position, parameter in uses[target]:
                cls = args[position] if position < len(args) else ""
                name = cls.rpartition("::")[2]
                if not IDENTIFIER.match(name or "-"):
                    continue  # `float`, `Tensor&`, `4`: not a class name
                # a written qualifier must end the class's (templates::cpu::RandomKernel is not cuda's); the
                # calling file's own class with every operator() it defines (prod_functor's primary one, its `#else`
                # twin and its specializations': the trace picks by build and dtype), else the first NAMESAKES found
                found = [d for d in methods.get(f"{name}::operator()", ()) if d[2].endswith(f"{cls}::operator()")]
                own = [d for d in found if d[4] == file]
                for d in own or found[:NAMESAKES]:
                    rows.append((target, parameter, "", cls, file, line, d[0], d[2], d[4], d[5]))
                    edges.append((target, d[0]))
    return rows, edges


def _own_parameters(symbols: Symbols, sites: CallSites, named: list[tuple]) -> dict[tuple[str, int, str], set[str]]:
    """(file, line, callee) of the calls in `named` -> the parameter names of the function each is made in."""
    if not named:
        return {}
    wanted = {(file, line, callee) for file, line, callee, *_ in named}
    caller_of = {(f, ln, c): caller for f, ln, caller, _, c, _ in sites.rows if (f, ln, c) in wanted}
    out = {}
    for key, caller in caller_of.items():
        out[key] = {m.group(1) for d in symbols.by_name.get(caller.rpartition("::")[2], ())
                    if d[S_QUAL] == caller and d[S_FILE] == key[0] and d[S_SIG] and "(" in d[S_SIG]
                    for m in PARAMETER.finditer(d[S_SIG][d[S_SIG].index("("):])}
    return out


def _passed(symbols: Symbols, includes: "Includes", file: str, arg: str, method: str, methods: dict) -> list[tuple]:
    """(as written, definition row) of what an argument passes: for a method call on the parameter, the method of
    a temporary object's class (`SmallBitonicSort{}`); for a call of the parameter itself, the function an
    argument names (`raw_cudnn_convolution_forward_out_32bit`, `&f`), linked as a call of that name from `file`."""
    if method:
        m = _TEMPORARY.match(arg)
        return [(m.group(1), d) for d in methods.get(f"{m.group(1).rpartition('::')[2]}::{method}", ())[:NAMESAKES]] \
            if m else []
    m = _FUNCTION_NAME.match(arg)
    if m is None:
        return []
    qualifier, _, name = m.group(1).rpartition("::")
    if qualifier in ("at", "at::_ops"):  # `unary_op_impl(self, at::sigmoid_out)`: the op's API, through the
        return [(m.group(1), (None,) * 6)]  # dispatcher (no definition: the trace follows the op)
    return [(m.group(1), (s[S_ID], s[1], s[S_QUAL], s[3], s[S_FILE], s[S_LINE]))
            for s in helper_targets(symbols, file, qualifier, name, includes)]


# a function passed by name: `raw_cudnn_convolution_forward_out_32bit`, `&at::native::f`, and through a cast to a
# function pointer type (BinaryOps.cpp: `static_cast<OutFunc>(at::logical_xor_out)`)
_PLAIN = re.compile(r"[A-Za-z_]\w*\Z")
# a local's declaration as calls.receiver_type keeps it: `Tensor`, `const at::Tensor`, or `auto = at::empty(...)`
_TENSOR_DECLARED = re.compile(r"(?:const\s+)?(?:at::)?Tensor\Z")
_MADE_BY = re.compile(r"auto\s*=\s*at::(\w+)\s*\(")


def tensor_local(declared: str, made: set[str]) -> bool:
    """Whether a receiver declared so (calls.receiver_type) is a Tensor: declared `Tensor`, or an `auto` made by
    an op or a factory of ATen's API (`auto result = at::empty(size, options)`; not `at::globalContext()`)."""
    m = _MADE_BY.match(declared)
    return bool(_TENSOR_DECLARED.match(declared.strip())) or (m is not None and m.group(1) in made)
_FUNCTION_NAME = re.compile(r"\s*(?:static_cast\s*<[^<>]*>\s*\(\s*)?&?\s*([A-Za-z_][\w:]*)\s*\)?\s*$")
# `SmallBitonicSort{}`, `WarpMergeSort<128>{}`, `Functor()`, `KthValueLauncher(k)`: a temporary object of a named
# class, built with or without arguments (the class must have the method called: _passed looks it up)
_TEMPORARY = re.compile(r"\s*([A-Za-z_][\w:]*)\s*(?:<[^;]*>)?\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|\((?:[^()]|\([^()]*\))*\))"
                        r"\s*$")


def _call_arguments(con, callees: set[str]) -> dict[tuple, list[str]]:
    """calls.arguments of the calls of `callees`: (file, line, callee, qualifier) and (file, line, callee) -> the
    argument texts of the first such call on that line."""
    out: dict[tuple, list[str]] = {}
    if not callees:
        return out
    con.execute("CREATE TEMP TABLE IF NOT EXISTS _passing (callee TEXT PRIMARY KEY)")
    con.execute("DELETE FROM _passing")
    con.executemany("INSERT INTO _passing VALUES (?)", [(c,) for c in sorted(callees)])
    for file, line, callee, qualifier, written in con.execute(
            "SELECT file, line, callee, qualifier, arguments FROM calls WHERE callee IN _passing AND arguments IS "
            "NOT NULL ORDER BY id"):
        args = json.loads(written)
        out.setdefault((file, line, callee, qualifier), args)
        out.setdefault((file, line, callee), args)
    return out


def _device_reach(con, symbols: Symbols, keys: "Keys", links: dict, extra: list[tuple[int, int]] = (),
                  op_methods: set[tuple[str, str, str, str]] = frozenset(),
                  tensor_locals: set[tuple[str, str, str]] = frozenset()) -> list[tuple]:
    """Breadth-first from the definitions that launch, call a library, call a stub or call an op, backwards over
    the call sites' links. Nodes are (qualified name, file): C++ overloads of one name in one file share facts."""
    ids: dict[tuple[str, str], list[int]] = defaultdict(list)  # the C++/CUDA functions, methods, kernels, by node
    signed: dict[tuple[str, str], list[str]] = defaultdict(list)  # and their signatures
    for defs in symbols.by_name.values():
        for d in defs:
            node = (d[S_QUAL], d[S_FILE])
            ids[node].append(d[S_ID])
            if d[S_SIG]:
                signed[node].append(d[S_SIG])
    for group in ids.values():
        group.sort()
    key_of = {sid: key for key, group in ids.items() for sid in group}
    reached: dict[tuple[str, str], str] = {}
    for what, table, where in (("launch", "kernel_launches", "kind IN ('chevron', 'handed', 'tensor_iterator')"),
                               ("library", "library_calls", "1")):
        for caller, file in con.execute(f"SELECT DISTINCT caller, file FROM {table} WHERE {where}"):
            reached.setdefault((caller, file), what)
    declared = {r[0] for r in con.execute("SELECT DISTINCT stub FROM dispatch_stubs")}
    for caller, file, stub in con.execute("SELECT DISTINCT caller, file, stub FROM stub_calls"):
        signatures = [d[S_SIG] for d in symbols.by_name.get(caller.rpartition("::")[2], ())
                      if d[S_QUAL] == caller and d[S_FILE] == file] or [None]
        if (caller, file) not in reached and any(is_stub_call(stub, declared, sig) for sig in signatures):
            reached[(caller, file)] = "stub"
    # a definition that calls an op through the dispatcher (at::x, at::_ops::x) leads back into the YAML layer
    ops = {r[0] for r in con.execute("SELECT DISTINCT name FROM native_functions")} - PLUMBING_OPS
    # the C++ API names of those ops (x, x_out, x_outf, x_symint): one set test per site, not a regex
    api = ops | {f"{op}{suffix}" for op in ops for suffix in ("_out", "_outf", "_symint")}
    # a method of an op's name called on a parameter declared Tensor (apply_loss_reduction's `unreduced.mean()`):
    # an op call too (any other receiver may be something else: options.device().index())
    for caller, file, receiver, method in op_methods:
        if (caller, file) not in reached and not metadata_query(method) and (any(
                receiver in sig and tensor_parameter(sig, receiver) for sig in signed.get((caller, file), ()))
                or (caller, file, receiver) in tensor_locals):  # (randn's `result.normal_(0, 1, generator)`)
            reached[(caller, file)] = "op"
    callers: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)  # callee node -> caller nodes
    for key, by in keys.items():
        _, qualifier, callee = key
        targets = links.get(key)
        if targets is None:  # (at::x and at::_ops::x are never linked: _calls leaves them to the dispatcher)
            if callee in api:
                for node in by:
                    if op_api_call(qualifier, node[0], False):  # at::cuda::sort(...): the op's CUDA kernel, called
                        reached.setdefault(node, "op")  # directly
            elif qualifier.startswith("legacy::"):  # 1.4's legacy::cuda::_th_bmm(...), generated at build time
                for node in by:  # (legacy_kernel_links: the THC function it calls)
                    reached.setdefault(node, "legacy")
            continue
        if qualifier in ("at", "at::_ops"):
            continue
        for target in targets:
            if target in key_of:  # not a functor class (an incremental build reads every call link back)
                callers[key_of[target]].update(by)
    for function, method in extra:  # sortCommon reaches what the functors passed to it launch
        if function in key_of and method is None:  # unary_op_impl runs the op at::sigmoid_out it is passed
            reached.setdefault(key_of[function], "op")
        elif function in key_of and method in key_of:
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
