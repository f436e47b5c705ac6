"""Index: the library twin of the CLI. Every command calls one method here that returns plain data or typed
records; only the CLI formats. Names always go into SQL as bound parameters, never formatted in."""
from __future__ import annotations

import os
import sqlite3
import sys
import threading
from pathlib import Path

from .indexer import indexes
from .db import connect_readonly
from .model import (CallSite, DispatchRow, Listing, Location, NativeFunction, OpindexError, Registration, Stub,
                    Symbol)


def build(checkout: str | None = None, db: str | os.PathLike | None = None, *, installed: bool = False,
          jobs: int | None = None, include=(), exclude=(), progress: bool = False, force: bool = False,
          log=None, sample: bool = False):
    """Build (or incrementally rebuild) an index; returns a BuildReport. `db` must be an opindex index or a new
    file (a symlink is followed); `force` lets it replace a regular file that is not an index. `log(kind, text)`,
    when given, hears which checkout and index were taken ("info") and a torch version mismatch ("warning")
    before the build starts. `sample` indexes the sample checkout shipped with opindex. Without `db` and $OPINDEX_DB each checkout has its own index in ~/.cache/opindex,
    named after it; through $OPINDEX_DB an index of another checkout is replaced only with `force`."""
    from .indexer import checkout as co
    from .indexer.pipeline import build as _build
    ck = co.resolve(checkout, installed=installed, include=include, exclude=exclude, sample=sample)
    target, chosen_by = indexes.for_build(db, ck.root)
    default = chosen_by == "default"
    indexes.refuse_another_checkout(target, chosen_by, ck.root, force)
    if log is not None:
        log("info", f"checkout: {ck.root} ({ck.how})")
        log("info", f"index:    {target}" + (" (this checkout's own; `opindex list` shows them)" if default else ""))
        src, inst = co.pytorch_version(ck.root), co.installed_torch_version()
        if src and inst and co.release(src) != co.release(inst):
            log("warning", f"the checkout is PyTorch {src} but this Python has torch {inst}; the source should "
                           f"match the installed torch")
    report = _build(ck, target, jobs=jobs, progress=progress, force=force)
    if default:
        indexes.remember(target)
    else:  # `opindex list` shows it, and a query inside its checkout opens it
        indexes.record(target)
    return report


class Index:
    """An opened index (read-only). ``Index()`` opens $OPINDEX_DB, else the index of the checkout holding the
    current folder, else the one built last (`opindex list`). `mismatch` says when the current folder lies in
    another checkout than the index's (None otherwise); ``Index()`` without a path also warns it."""

    def __init__(self, db: str | os.PathLike | None = None):
        self.path, self.chosen_by = indexes.chosen_for_query(db)  # chosen_by: the rule, in words
        self.con = connect_readonly(self.path)
        self.con.row_factory = sqlite3.Row
        self._meta = None
        # one query at a time on the connection: an Index shared by threads takes turns (two threads on one
        # connection deadlocked: the progress handler waited for SQLite's mutex while holding the GIL)
        self._lock = threading.RLock()
        # read apart from self.meta (a damaged index opens; its calls then raise Broken)
        self.mismatch = indexes.mismatch(self.path, indexes.checkout_of(self.path))
        if self.mismatch and db is None:  # the index was chosen for the user: say it is another checkout's
            import warnings
            warnings.warn(self.mismatch, stacklevel=2)

    # -- raw SQL --------------------------------------------------------------------------------------------
    def rows(self, query: str, params: dict | tuple = (), *, timeout: float | None = None, **limits) -> list[dict]:
        """Run a read-only query; a list of dicts (a repeated column name gets _2, _3: every column is kept).
        `timeout` seconds (None or 0: none) stops a query that runs longer (QueryTimeout); Ctrl-C stops it too.
        `max_value` (bytes, 1,000,000 unless given) and `max_memory_mb` (256) bound the longest string or blob the
        query makes and SQLite's memory for it (QueryLimit; None or 0: none; docs/robustness.md)."""
        with self._lock, self.stream(query, params, timeout=timeout, **limits) as found:
            return list(found)

    def stream(self, query: str, params: dict | tuple = (), *, timeout: float | None = None, **limits):
        """The rows of a read-only query as they are fetched (a RowStream: `.columns`, then dicts), so a result of
        any size takes constant memory. Errors: UsageError (bad or writing SQL), QueryTimeout and QueryLimit (the
        limits of rows()), Broken (a damaged index). A stream holds the connection while it is read: threads sharing
        an Index use rows() or sql()."""
        from .query import RowStream
        return RowStream(self.con, self.path, query, params, timeout, **limits)

    def sql(self, query: str, params: dict | tuple = (), *, timeout: float | None = None, max_value=1_000_000,
            max_memory_mb=256, **named):
        """Rows as a pandas DataFrame when pandas is installed, else a list of dicts. Bind parameters by keyword
        (`ix.sql("... :n", n="relu")`) or as `params`; `timeout` seconds limits the query (None or 0: none), and
        Ctrl-C (a notebook's interrupt) stops it; `max_value` and `max_memory_mb` as in rows()."""
        rows = self.rows(query, {**dict(params), **named} if named else params, timeout=timeout,
                         max_value=max_value, max_memory_mb=max_memory_mb)
        try:
            import pandas as pd
        except ImportError:
            return rows
        return pd.DataFrame(rows)

    # -- cross-layer ----------------------------------------------------------------------------------------------
    def trace(self, name: str, device: str = "cuda", depth: int = 1, up: bool | None = None,
              backward: bool = False, max_hops: int = 5000, limit: int = 6, defines=(), undefines=(),
              config: str | dict | None = None, dtype: str | None = None):
        """The chain of `name` (nn.LSTM, F.relu, torch.add, aten::add.out, at::native::relu, a stub, a kernel).
        A walk past `max_hops` hops (0: no limit) stops and says so (Trace.truncated, Trace.message); bottom-up,
        more than `limit` callers of one function (0: no limit) are grouped by file, and Trace.truncated says so.
        The build traced: `defines` ("NAME" or "NAME=VALUE", as -D), `undefines` (as -U), `config` (a YAML file's
        path, or a mapping, of NAME: value, null for undefined); Trace.build says which values decided an #if and
        where each came from (docs/trace.md, "The build a trace is for"). `dtype`: the input's (float32, bfloat16,
        complex64, ...; float32 unless given, int64 for a factory whose schema defaults dtype=long), which decides
        the C++ tests of a dtype.
        `name` may be a call, as Python writes it: `ix.trace("F.interpolate(torch.randn(8, 16, 32, 32),
        scale_factor=2, mode='bilinear')")` is traced with those arguments (their values decide the tests that read
        them; its tensors give the dtype, ranks and sizes; Trace.call says what was read, docs/trace.md "Tracing a
        call"); a string that is no readable call raises OpindexError naming the part."""
        from .pytorch.build_config import settings_from
        from .render.trace_view import TraceView
        from .trace import trace
        try:
            build = settings_from(defines, undefines, *_config_mapping(config))
        except ValueError as e:
            raise OpindexError(str(e)) from None
        t = trace(self.con, name, device=device, depth=depth, up=up, backward=backward,
                  root=self.meta.get("checkout_root"), max_hops=max_hops, limit=limit, build=build, dtype=dtype,
                  index=str(self.path))
        if not t.hops and t.call is None and not t.unknown_call and _profiler_kernel_name(name):
            t = self._kernel_trace(name, t)
        return TraceView.of(t)

    def _kernel_trace(self, name: str, t):
        """A kernel name as a profiler prints it (`void at::native::vectorized_elementwise_kernel<4,
        at::native::CUDAFunctor_add<float>, ...>(...)`): the __global__ it names, its launch sites and the op body
        its template arguments name, up to the stub, registration and op (opindex.profile's attribution)."""
        from .profile.attribute import Attributor
        from .profile.chrome import KernelGroup
        from .profile.kernel_name import demangle_many, is_mangled, parse_kernel_name
        demangled = demangle_many([name]).get(name) if is_mangled(name) else None
        row = Attributor(self.con, self.meta.get("checkout_root")).attribute(
            KernelGroup(name=name), parse_kernel_name(name, demangled))
        t.direction, t.candidates = "up", []
        t.hops = list(row["chain"])  # trace.model.Hop already, numbered bottom-up
        t.finish()
        what = row.get("short") or name
        t.message = (f"{what}: {row['status']}" + (f" ({row['note']})" if row.get("note") else "")
                     + ("" if t.hops else "; nothing of it was found in this checkout"))
        if t.hops and row.get("native_function") and not (row.get("body") or {}).get("name"):
            # nothing in the name picks the op: the walk up took the first launch path it found
            t.message += ("; the name names no op body, so the op shown is the first that launches it: "
                          "`opindex profile` ties each launch to the op that made it")
        return t

    def find(self, name: str, kind: str | None = None, layer: str | None = None, limit: int = 200,
             exact: bool = False) -> list[Symbol]:
        """Definitions named `name` (name or qualified name), at most `limit` (0: all). The name is literal but for
        the wildcards `*` and `?`; `\\*` and `\\?` match a star and a question mark (`operator\\*`), and
        `exact=True` takes the whole name literally."""
        from .query import name_pattern
        op, pattern = name_pattern(name, exact)
        sql = (f"SELECT s.*, f.layer FROM symbols s JOIN files f ON f.path = s.file "
               f"WHERE (s.name {op} :n OR s.qualified_name {op} :n)")
        params = {"n": pattern, "limit": limit or -1}  # SQLite: LIMIT -1 is no limit
        if kind:
            sql += " AND s.kind = :kind"
            params["kind"] = kind
        if layer:
            sql += " AND f.layer = :layer"
            params["layer"] = layer
        sql += " ORDER BY s.qualified_name, s.file, s.line LIMIT :limit"
        return Listing(_symbol(r) for r in self.rows(sql, params))

    def suggestions(self, name: str, limit: int = 8) -> list[str]:
        """Names close to `name` (ops, stubs, torch.nn classes), each one a trace takes when typed back: the "did you
        mean" of a trace of an unknown name (`similar` is the one of the other commands, from their own names)."""
        from .trace import suggestions
        return suggestions(self.con, name, limit)

    def op(self, name: str) -> list[NativeFunction]:
        """native_functions.yaml entries: exact full name (add.out, aten::add.Tensor) or every overload of a name
        (a Listing: to_dataframe() has one row per dispatch row)."""
        n = name.removeprefix("aten::")
        entries = self.rows("SELECT * FROM native_functions WHERE full_name = :n ORDER BY line", {"n": n}) or \
            self.rows("SELECT * FROM native_functions WHERE name = :n ORDER BY line", {"n": n})
        out = Listing()
        for e in entries:
            rows = self.rows("SELECT * FROM native_dispatch WHERE native_function_id = :id ORDER BY line, "
                             "dispatch_key", {"id": e["id"]})
            out.append(NativeFunction(e["full_name"], e["schema"], e["variants"], bool(e["structured"]),
                                      e["structured_delegate"], Location(e["file"], e["line"]),
                                      tuple(DispatchRow(r["dispatch_key"], r["kernel"], bool(r["implicit"]),
                                                        Location(r["file"], r["line"])) for r in rows)))
        return out

    def stub(self, name: str) -> Stub | None:
        decls = self.rows("SELECT * FROM dispatch_stubs WHERE stub = :n ORDER BY action, file, line", {"n": name})
        regs = self.rows("SELECT * FROM dispatch_registrations WHERE stub = :n ORDER BY device, file, line",
                         {"n": name})
        calls = self.rows("SELECT * FROM stub_calls WHERE stub = :n ORDER BY file, line", {"n": name})
        if not (decls or regs or calls):
            return None
        return Stub(name, tuple(Location(d["file"], d["line"]) for d in decls),
                    tuple(CallSite(c["caller"], name, c["device_arg"] or "", Location(c["file"], c["line"]))
                          for c in calls),
                    tuple(Registration(r["stub"], r["kernel"], r["macro"], r["device"], Location(r["file"], r["line"]))
                          for r in regs))

    def callers(self, name: str, limit: int = 500) -> list[CallSite]:
        """Call sites of `name` (unqualified callee name, or a qualified C++/Python name's last part); at most
        `limit` (0: all)."""
        callee = _last(name)
        return Listing(_call(r) for r in self.rows(
            "SELECT * FROM calls WHERE callee = :n ORDER BY file, line LIMIT :l", {"n": callee, "l": limit or -1}))

    def callees(self, name: str, limit: int = 500) -> list[CallSite]:
        """What the function `name` calls (its qualified name, or a bare name matching one definition); at most
        `limit` (0: all)."""
        quals = [name] if ("::" in name or "." in name) else [
            r["qualified_name"] for r in self.rows("SELECT DISTINCT qualified_name FROM symbols WHERE name = :n",
                                                   {"n": name})]
        out = []
        for qn in quals:
            out += [_call(r) for r in self.rows("SELECT * FROM calls WHERE caller = :c ORDER BY file, line LIMIT :l",
                                                {"c": qn, "l": limit or -1})]
        return Listing(out[:limit] if limit else out)

    def similar(self, name: str, what: str = "op", limit: int = 5) -> list[str]:
        """Names close to `name` that `what` (op, stub, find, callers, callees) would find: the "did you mean" of
        a name that found nothing."""
        from .trace.targets import similar
        return similar(self.con, name, what, limit)

    def kernels(self, op: str | None = None) -> list[dict]:
        """GPU launches; with `op`, only those reached by that op's trace (device cuda)."""
        if op is None:
            return Listing(self.rows("SELECT kernel, kind, template_args, config, caller, file, line FROM "
                                     "kernel_launches ORDER BY file, line"))
        t = self.trace(op, device="cuda")
        return Listing({"kernel": h.name, "kind": h.kind, "file": h.file, "line": h.line} for h in t.hops
                       if h.layer in ("cuda", "library") and not h.absent)

    def profile(self, path: str | os.PathLike, *, limit: int | None = None, dataframe: bool = False,
                progress=None, max_size_mb: float | None = 512, trace_calls: int = 20, defines=(), undefines=(),
                config: str | dict | None = None):
        """A torch.profiler Chrome trace (.json/.json.gz) or a list of kernel names, one row per kernel name, largest
        GPU time first: its __global__ definition or library call site, op body, stub, dispatch row, aten op.
        A list of dicts that also carries .total_us, .attributed_share, .traced, .warnings, .caps (a pandas
        DataFrame with dataframe=True). A profile over `max_size_mb` MB after gunzip (None or 0: no limit) is
        refused. A profile recorded with shapes gives each kernel's op call (`call`): the first `trace_calls`
        distinct ones (0: none) are traced with those inputs for the build `defines`/`undefines`/`config` states
        (as trace's), and `traced` says where the main chain ends and whether the kernel that ran is in it."""
        from .profile.report import annotate
        from .pytorch.build_config import settings_from
        try:
            build = settings_from(defines, undefines, *_config_mapping(config))
        except ValueError as e:
            raise OpindexError(str(e)) from None
        rows = annotate(self.con, path, root=self.meta.get("checkout_root"),
                        index_version=self.meta.get("pytorch_version"), limit=limit, progress=progress,
                        max_size_mb=max_size_mb, index_file=str(self.path), trace_calls=trace_calls, build=build)
        return rows.to_dataframe() if dataframe else rows

    # -- two trees side by side (opindex/diff, docs/diff.md) ----------------------------------------------------
    def diff(self, other, names=(), *, device: str = "cuda", depth: int = 1, defines=(), undefines=(),
             config: str | dict | None = None, dtype: str = "float32", trace_limit: int = 6, max_hops: int = 5000):
        """This index (A) against `other` (B: an Index, an index file, or a checkout with its own index): with
        `names`, each op's two main chains side by side, its device code, registry entries and backward formulas;
        without, the whole registries and C++/CUDA side. A Diff (to_dict, to_text, to_markdown; .differences).
        The traces take `trace_limit` and `max_hops` as trace's `limit` and `max_hops` (0: no cap)."""
        from .diff import compare, side
        b = other if isinstance(other, Index) else Index(index_path(other))
        try:
            kw = dict(device=device, depth=depth, defines=defines, undefines=undefines, config=config, dtype=dtype,
                      limit=trace_limit, max_hops=max_hops)
            traces = [(n, *_found_in((self, b), n, kw)) for n in names]
            return compare(self.con, b.con, side(self.path, self.meta), side(b.path, b.meta), device=device,
                           traces=traces)
        finally:
            if b is not other:
                b.close()

    def fork_report(self, names=(), *, macros=(), device: str = "cuda"):
        """What this index's checkout, a vendor fork, changes against its upstream, read from the fork alone: its
        platform macros (`macros`, default: those the checkout requires that upstream leaves undefined), their #if
        branches, its own folders, and the registrations, kernels, launches and library calls in its code; with
        `names`, only what lies in the files of those ops' traces. A ForkReport."""
        from .diff import fork_report, side
        from .trace.conditions import BuildContext
        traces = [(n, _found_in((self,), n, {"device": device})[0]) for n in names]
        return fork_report(self.con, side(self.path, self.meta), BuildContext(self.con, "cuda").required(),
                           macros=macros, traces=traces)

    def coverage(self, device=(), *, ops=(), missing: bool = False, for_: str | None = None,
                 with_dir: str | os.PathLike | None = None):
        """Per operator overload and dispatch key: kernel, inherited, composite_implicit, composite_explicit,
        fallback or missing, with file:line (docs/coverage.md). `device`: a key or keys (cuda, MPS, QuantizedCPU;
        none: the default set); `ops`: op names; `missing`: only what the one `device` lacks that CUDA has, most
        Python APIs first; `for_`: a torch.profiler trace, or a name to trace, whose ops (and what their composites
        lack) are the ones listed; `with_dir`: an out-of-tree backend's YAML and registrations on top of the index.
        A Coverage: .rows (dicts), .keys, .notes."""
        from .coverage.request import answer
        devices = (device,) if isinstance(device, str) else tuple(device or ())
        reached, exact = self._reached(str(for_)) if for_ is not None else (None, False)
        return answer(self.con, devices, ops=ops, missing=missing, reached=reached, reached_exact=exact,
                      with_dir=with_dir)

    def _reached(self, what: str) -> tuple[list[str], bool]:
        """The ops a --for names: those of a profile file (names: every overload), else the overloads the trace of
        a name reaches."""
        if Path(what).is_file():
            from .coverage.needs import profile_ops
            return profile_ops(what), False
        t = self.trace(what, device="cuda")
        if not t.hops:
            raise OpindexError(f"--for {what}: no such file, and nothing to trace ({t.message or 'unknown name'})")
        return list(dict.fromkeys(f"aten::{h.op}" for h in t.hops if getattr(h, "op", None))), True

    # -- facts about the index ------------------------------------------------------------------------------
    @property
    def meta(self) -> dict[str, str]:
        if self._meta is None:
            self._meta = {r["key"]: r["value"] for r in self.rows("SELECT key, value FROM meta")}
        return self._meta

    @property
    def root(self) -> Path:
        return Path(self.meta["checkout_root"])

    def which(self) -> str:
        """"index FILE (checkout ROOT)": which index answers, for messages and the CLI's footer."""
        root = self.meta.get("checkout_root")
        return f"index {self.path}" + (f" (checkout {root})" if root else "")

    def answered_by(self) -> dict:
        """{"file": the index file, "checkout": its checkout root}: the `index` field of every JSON answer
        (docs/json.md), the trace's and each listing row's."""
        return {"file": str(self.path), "checkout": self.meta.get("checkout_root")}

    def __repr__(self) -> str:
        try:
            meta = self.meta
        except OpindexError:  # closed
            meta = {}
        root, version = meta.get("checkout_root"), meta.get("pytorch_version")
        return (f"<opindex.Index {str(self.path)!r}" + (f" checkout={root!r}" if root else "")
                + (f" pytorch={version!r}" if version else "") + ">")

    def stats(self) -> list[dict]:
        from . import schema
        out = [{"what": "index", "value": str(self.path)}]
        out += [{"what": k, "value": v} for k, v in sorted(self.meta.items())]
        for layer in self.rows("SELECT layer, count(*) AS n FROM files GROUP BY layer ORDER BY layer"):
            out.append({"what": f"files[{layer['layer']}]", "value": layer["n"]})
        for table in schema.metadata.sorted_tables:
            n = self.rows(f"SELECT count(*) AS n FROM {table.name}")[0]["n"]  # names from our schema, not users
            out.append({"what": f"rows[{table.name}]", "value": n})
        return Listing(out)

    def close(self) -> None:
        facts = sys.modules.get("opindex.trace.facts")
        if facts is not None:  # what its traces kept for this connection goes with it (only if it traced)
            facts.forget(self.con)
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _guarded(method, named: bool):
    """An Index method whose SQLite errors mean a damaged index: Broken, one line, never a sqlite3 traceback. With
    `named`, its first argument is a name: it must be a str (TypeError otherwise) and reaches SQL as valid UTF-8."""
    import functools

    from .query import damaged, text

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if named:
            if args:
                args = (text(args[0]),) + args[1:]
            elif "name" in kwargs:
                kwargs["name"] = text(kwargs["name"])
        try:
            with self._lock:
                return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from None
    return wrapper


for _method, _named in (("trace", True), ("find", True), ("op", True), ("stub", True), ("callers", True),
                        ("callees", True), ("suggestions", True), ("similar", True), ("kernels", False),
                        ("profile", False), ("stats", False), ("diff", False), ("fork_report", False),
                        ("coverage", False)):
    setattr(Index, _method, _guarded(getattr(Index, _method), _named))
Index.meta = property(_guarded(Index.meta.fget, False))


def index_path(arg: str | os.PathLike) -> Path:
    """An index file, or a checkout folder's own index (`opindex build CHECKOUT` wrote it)."""
    from .db import Broken
    path = Path(arg).expanduser()
    if path.is_dir():
        own = indexes.default_for(path)
        if not own.is_file():  # a missing index, as for any query: exit 3
            raise Broken(f"{arg}: a folder without an index of its own: run `opindex build {arg}`, or give an "
                         f"index file")
        return own
    return indexes.for_query(path)


def _found_in(sides, name: str, kw: dict) -> list:
    """The traces of `name` in each index; an ambiguous name is a usage error (its candidates listed), a name no
    index knows is nothing found (exit 1)."""
    from .db import UsageError
    traces = [ix.trace(name, **kw) for ix in sides]
    for ix, t in zip(sides, traces):
        if not t.hops and not t.unknown:
            raise UsageError(f"{ix.path}: {t.message}" + "".join(f"\n  {c}" for c in t.candidates))
    if all(not t.hops for t in traces):
        raise NothingFound(f"{name}: " + "; ".join(f"{ix.path}: {t.message}" for ix, t in zip(sides, traces)))
    return traces


class NothingFound(OpindexError):
    """A name that none of the indexes asked knows: exit 1."""
    exit_code = 1


def _profiler_kernel_name(name: str) -> bool:
    """A name as torch.profiler or Nsight prints a kernel: demangled with template arguments or a parameter list,
    or mangled (_Z...)."""
    text = name.strip()
    return text.startswith(("void ", "_Z")) or ("<" in text and ">" in text) or text.endswith(")")


def _symbol(r: dict) -> Symbol:
    return Symbol(r["name"], r["qualified_name"], r["kind"], r["language"], Location(r["file"], r["line"]),
                  r.get("signature"))


def _call(r: dict) -> CallSite:
    return CallSite(r["caller"], r["callee"], r["qualifier"], Location(r["file"], r["line"]))


def _last(name: str) -> str:
    return name.replace("::", ".").split(".")[-1]


def _config_mapping(config) -> tuple[dict | None, str]:
    """(the mapping, its source's name) of a build config: a dict, or a YAML file of NAME: value (null or false for
    undefined), optionally under a `defines:` key."""
    if config is None or isinstance(config, dict):
        return config, "config"
    import yaml
    try:
        data = yaml.safe_load(open(config, encoding="utf-8")) or {}
    except OSError as e:
        raise ValueError(f"cannot read the build config {config}: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{config}:{mark.line + 1}" if mark is not None else str(config)
        raise ValueError(f"{where}: not YAML ({getattr(e, 'problem', e)})") from None
    if isinstance(data, dict) and isinstance(data.get("defines"), dict):
        data = data["defines"]
    if not isinstance(data, dict):
        raise ValueError(f"{config}: a build config is a mapping of NAME: value (null for undefined)")
    return data, f"config {config}"
