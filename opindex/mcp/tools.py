"""The tool table: one ToolSpec per tool, named as the CLI command it twins, each calling one opindex.api method.

Adding a tool is one entry in TOOLS: its name, a description for the model, the properties of its input schema and
a function (Index, checked arguments) -> Answer. `max_chars` is added to every tool. `diff` and `coverage` were
added so when their commands landed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..model import OpindexError
from ..pytorch.build_config import DTYPES
from ..pytorch.devices import DEVICE_OPTIONS
from . import listing
from .arguments import BadArguments, checked
from .budget import DEFAULT_MAX_CHARS, MIN_MAX_CHARS, Answer, error, fit
from .trace_answer import DETAILS, MAX_DEPTH, narrower, trace_answer


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    properties: dict
    run: Callable  # (Index, checked arguments) -> Answer
    required: tuple[str, ...] = ()

    def input_schema(self) -> dict:
        return {"type": "object", "properties": {**self.properties, "max_chars": MAX_CHARS},
                "required": list(self.required), "additionalProperties": False}


MAX_CHARS = {"type": "integer", "minimum": MIN_MAX_CHARS, "default": DEFAULT_MAX_CHARS,
             "description": "The most characters the answer may have (its text, and its structured content). An "
                            "answer over it is refused with the narrower calls that fit, never cut."}
CURSOR = {"type": "string", "description": "The next_cursor of the previous page of the same call."}


def _name(what: str) -> dict:
    return {"type": "string", "minLength": 1, "description": what}


def _limit(default: int, what: str = "rows") -> dict:
    return {"type": "integer", "minimum": 1, "default": default,
            "description": f"The most {what} on one page; next_cursor pages on."}


# -- trace ------------------------------------------------------------------------------------------------------------
def run_trace(ix, a: dict) -> Answer:
    t = ix.trace(a["name"], device=a["device"], depth=a["depth"], up=a.get("up"), backward=a["backward"],
                 max_hops=a["max_hops"], limit=a["limit"], defines=a["defines"], undefines=a["undefines"],
                 config=a.get("config"), dtype=a["dtype"] if a["dtype"] != "float32" else None)  # (a call's tensors
    # say their dtype: float32, the default, does not contradict them)
    return fit(trace_answer(t, a["detail"]), a["max_chars"], lambda: narrower(t, a["detail"]),
               f"the {a['detail']!r} trace of {a['name']}")


TRACE = {
    "name": _name("What to trace: nn.LSTM, F.relu, torch.add, Tensor.add_, aten::add.Tensor, add.out, "
                  "at::native::relu, a stub (add_stub), a __global__ kernel or a kernel name as a profiler prints it."),
    "detail": {"type": "string", "enum": list(DETAILS), "default": "main",
               "description": "main: the main chain (the default path to the device code, decision points marked) "
                              "and the backward; branches: also each branch off it, folded to a line; full: every "
                              "hop as a tree."},
    "device": {"type": "string", "enum": list(DEVICE_OPTIONS), "default": "cuda"},
    "dtype": {"type": "string", "enum": list(DTYPES), "default": "float32",
              "description": "The input's dtype: it decides the C++ tests of a dtype."},
    "depth": {"type": "integer", "minimum": 0, "maximum": MAX_DEPTH, "default": 1,
              "description": "How many times to follow a kernel's calls of other ops."},
    "up": {"type": "boolean", "description": "Bottom-up, to the Python surface (automatic for kernels and stubs)."},
    "backward": {"type": "boolean", "default": False, "description": "Also trace the ops the backward calls."},
    "defines": {"type": "array", "items": {"type": "string"}, "default": [],
                "description": "The build traced defines these, as -D: [\"CUDNN_VERSION=8600\", \"USE_ROCM\"]."},
    "undefines": {"type": "array", "items": {"type": "string"}, "default": [],
                  "description": "The build traced does not define these, as -U: [\"USE_MACA\"]."},
    "config": {"type": ["object", "string"], "description": "Build settings NAME: value (null: undefined), or the "
                                                           "path of a YAML file of them (as --config); defines and "
                                                           "undefines win over it."},
    "limit": {"type": "integer", "minimum": 0, "default": 6,
              "description": "Bottom-up: callers walked per step (more are grouped by file, and said); 0: all."},
    "max_hops": {"type": "integer", "minimum": 0, "default": 5000,
                 "description": "The walk stops after this many hops and says so; 0: no limit."},
}


# -- listings ---------------------------------------------------------------------------------------------------------
def _paged(tool: str, a: dict, fetch, columns: list[str], row, what: str, empty, head=None) -> Answer:
    """One page of a listing tool: `fetch(n)` the first n records (None: all), `row(record)` its cells, `empty()`
    the answer when there is nothing at all, `head()` (text, structured) to put before the rows."""
    key = listing.call_key(tool, a)
    offset = listing.offset_of(a.get("cursor"), key)
    records, more = listing.page(fetch, offset, a["limit"])
    if not records and not offset:
        return empty()
    text, extra = head() if head else ("", None)
    return listing.fit_page(columns, [row(r) for r in records], a["max_chars"], what=what, key=key,
                            offset=offset, more=more, head=text, extra=extra)


def _not_found(ix, name: str, message: str, what: str | None = None) -> Answer:
    """A tool error with the names close to `name`: those the `what` command would find (Index.similar: op, stub,
    find, callers, callees), else a trace's did-you-mean (Index.suggestions: names that work when typed back)."""
    return error("not_found", message, ix.similar(name, what) if what else ix.suggestions(name))


def run_find(ix, a: dict) -> Answer:
    return _paged("find", a, lambda n: ix.find(a["name"], kind=a.get("kind"), layer=a.get("layer"), limit=n or 0,
                                               exact=a["exact"]),
                  ["qualified_name", "kind", "language", "at"],
                  lambda s: [s.qualified_name, s.kind, s.language, str(s.location)], "definitions",
                  lambda: _not_found(ix, a["name"], f"no definition named {a['name']!r} (a wildcard: "
                                                    f"'*{a['name'].strip('*')}*')", "find"))


def _calls(method: str):
    def run(ix, a: dict) -> Answer:
        what = "call sites of" if method == "callers" else "calls made by"
        return _paged(method, a, lambda n: getattr(ix, method)(a["name"], limit=n or 0),
                      ["caller", "callee", "qualifier", "at"],
                      lambda c: [c.caller, c.callee, c.qualifier, str(c.location)], "calls",
                      lambda: _not_found(ix, a["name"], f"no {what} {a['name']!r} in this index", method))
    return run


def run_kernels(ix, a: dict) -> Answer:
    op = a.get("op")
    if op is None:
        columns, row = ["kernel", "kind", "caller", "at"], lambda k: [k["kernel"], k["kind"], k["caller"],
                                                                       f"{k['file']}:{k['line']}"]
    else:
        columns, row = ["kernel", "kind", "at"], lambda k: [k["kernel"], k["kind"], f"{k['file']}:{k['line']}"]
    found = []  # the library returns every row at once: fetched once per call

    def fetch(n):
        if not found:
            found.append(ix.kernels(op))
        return found[0] if n is None else found[0][:n]
    return _paged("kernels", a, fetch, columns, row, "kernels",
                  lambda: _not_found(ix, op, f"no GPU code found for {op!r}") if op else
                  error("not_found", "no GPU launches in this index"))


def run_coverage(ix, a: dict) -> Answer:
    """`opindex coverage`'s rows, a page at a time: per op overload and dispatch key, its status and file:line."""
    found = []  # Index.coverage answers every row at once: computed once per call

    def fetch(n):
        if not found:
            found.append(ix.coverage(a.get("device") or (), ops=a.get("ops") or (), missing=a["missing"],
                                     for_=a.get("for")).rows)
        return found[0] if n is None else found[0][:n]
    columns = ["op", "key", "status", "at", "kernel", "lacks"]
    return _paged("coverage", a, fetch, columns,
                  lambda r: [r["op"], r["key"], r["status"], f"{r['file']}:{r['line']}" if r["file"] else "",
                             r["kernel"], " ".join(r["lacks"] or ())], "rows",
                  lambda: error("not_found", "no coverage row for these arguments (an op name: add, add.Tensor; "
                                             "a key: cuda, mps, QuantizedCPU)"))


def run_sql(ix, a: dict) -> Answer:
    key = listing.call_key("sql", a)
    offset = listing.offset_of(a.get("cursor"), key)
    with ix.stream(a["query"], a["params"], timeout=a["timeout"]) as found:
        columns = list(found.columns)
        rows = []
        for i, r in enumerate(found):  # OFFSET in Python: the query stays the user's, read-only, as written
            if i >= offset:
                rows.append([r[c] for c in columns])
                if len(rows) > a["limit"]:
                    break
    more = len(rows) > a["limit"]
    return listing.fit_page(columns, rows[:a["limit"]], a["max_chars"], what="rows", key=key, offset=offset,
                            more=more)


def run_profile(ix, a: dict) -> Answer:
    from ..profile.render import where
    full = a["detail"] == "full"
    columns = ["rank", "share", "gpu_us", "calls", "kernel", "op", "source", "aten_op"] + (
        ["chain", "traced"] if full else [])
    summary = {}

    def fetch(n):
        # (the op calls a profile recorded with shapes are traced for the full detail only: seconds on a large one)
        rows = ix.profile(a["path"], limit=n, trace_calls=20 if full else 0)
        summary.update({k: v for k, v in rows.summary().items() if k not in ("checkout_root", "shown")})
        # the --limit of the command is this tool's paging; the caps inside each row stay stated
        summary["caps"] = [c for c in summary["caps"] if not c.endswith("(--limit)")]
        return rows

    def row(r):
        cells = [r.get("rank"), round(r["share"], 4), r["gpu_us"], r["calls"], r["short"], r.get("op"),
                 where(r) or f"({r['status']})", r.get("native_function")]
        traced = r.get("traced")
        return cells + ([" <- ".join(f"{h.name} {h.file}:{h.line}" if h.file else h.name for h in r["chain"]),
                         f"{r['call']} ends at {traced['end']} {traced['file']}:{traced['line']}; the kernel is "
                         f"{'in' if traced['in_trace'] else 'not in'} that trace" if traced else ""]
                        if full else [])
    def head():
        text = (f"profile: {summary['kernels']} kernel names, {summary['total_gpu_us']:,.1f} us of GPU time, "
                f"{100 * summary['attributed_share']:.1f}% attributed to a source location"
                + "".join(f"\nwarning: {w}" for w in summary["warnings"])
                + "".join(f"\ncap: {c}" for c in summary["caps"]))
        return text, {"summary": summary}
    return _paged("profile", a, fetch, columns, row, "kernels",
                  lambda: error("not_found", f"{a['path']}: no GPU kernels in this profile"), head)


# -- one record -------------------------------------------------------------------------------------------------------
def run_op(ix, a: dict) -> Answer:
    entries = ix.op(a["name"])
    if not entries:
        return _not_found(ix, a["name"], f"no native_functions.yaml entry named {a['name']!r}", "op")
    lines, data = [], []
    for e in entries:
        kind = "structured" if e.structured else (f"structured_delegate: {e.structured_delegate}"
                                                  if e.structured_delegate else "")
        lines += [f"aten::{e.full_name}  {e.location}" + (f"  ({kind})" if kind else ""), f"  {e.schema}"]
        lines += [f"  {d.dispatch_key}: {d.kernel}  :{d.location.line}" + ("  (implicit)" if d.implicit else "")
                  for d in e.dispatch]
        data.append({"function": e.full_name, "schema": e.schema, "at": str(e.location), "variants": e.variants,
                     "structured": e.structured, "structured_delegate": e.structured_delegate,
                     "dispatch": [{"key": d.dispatch_key, "kernel": d.kernel, "at": str(d.location),
                                   **({"implicit": True} if d.implicit else {})} for d in e.dispatch]})
    answer = Answer("\n".join(lines) + "\n", {"entries": data})
    overloads = lambda: [(f"name={e.full_name!r}", run_op(ix, {**a, "name": e.full_name}).size())
                         for e in entries[:8]] if len(entries) > 1 else []
    return fit(answer, a["max_chars"], overloads, f"the {len(entries)} entries of {a['name']}")


def run_stub(ix, a: dict) -> Answer:
    s = ix.stub(a["name"])
    if s is None:
        return _not_found(ix, a["name"], f"no dispatch stub named {a['name']!r}", "stub")
    lines = [f"stub {s.name}"]
    lines += [f"  declared/defined  {d}" for d in s.declarations]
    lines += [f"  called  {c.caller}  {c.location}" for c in s.callers]
    lines += [f"  {r.device}: {r.kernel or '(no kernel)'}  {r.location}  ({r.macro})" for r in s.registrations]
    data = {"stub": s.name, "declared": [str(d) for d in s.declarations],
            "called": [{"caller": c.caller, "device_arg": c.qualifier, "at": str(c.location)} for c in s.callers],
            "registered": [{"device": r.device, "kernel": r.kernel, "macro": r.macro, "at": str(r.location)}
                           for r in s.registrations]}
    return fit(Answer("\n".join(lines) + "\n", data), a["max_chars"], lambda: [],
               f"the answer for stub {s.name}")


# -- two indexes -------------------------------------------------------------------------------------------------------
def run_diff(ix, a: dict) -> Answer:
    """The served index (A) against `other` (B), or, with fork, what A's checkout changes against its upstream."""
    if a["fork"]:
        d = ix.fork_report(a["names"], macros=a["fork_macros"], device=a["device"])
    elif "other" in a:
        d = ix.diff(a["other"], a["names"], device=a["device"], trace_limit=a["trace_limit"],
                    max_hops=a["max_hops"])
    else:
        return error("bad_arguments", "diff: give other (an index file, or a checkout with its own index), or "
                                      "fork=true")
    answer = Answer(d.to_text(limit=a["limit"]), d.to_dict())
    # the text lists `limit` items a list (and says how many more); the structured content holds every item
    narrower = [] if a["names"] else [("names=['OP'] (one op's two main chains side by side)", None)]
    return fit(answer, a["max_chars"], lambda: narrower, "this diff")


DIFF = {
    "other": {"type": "string", "description": "Index B: an index file, or a checkout with its own index (the "
                                               "served index is A)."},
    "names": {"type": "array", "items": {"type": "string"}, "default": [],
              "description": "Ops (as trace takes them): each op's two main chains side by side, its device code, "
                             "registry entries and backward; none: the whole registries and C++/CUDA side."},
    "fork": {"type": "boolean", "default": False,
             "description": "What the served checkout, a vendor fork, changes against its upstream, from it alone."},
    "fork_macros": {"type": "array", "items": {"type": "string"}, "default": [],
                    "description": "With fork: its platform macros (default: those the checkout requires that "
                                   "upstream leaves undefined)."},
    "device": {"type": "string", "enum": list(DEVICE_OPTIONS), "default": "cuda"},
    "limit": {"type": "integer", "minimum": 0, "default": 10,
              "description": "Text: items shown per list, and how many more (0: all; the structured content "
                             "holds all)."},
    "trace_limit": {"type": "integer", "minimum": 0, "default": 6, "description": "The traces' fan-out caps."},
    "max_hops": {"type": "integer", "minimum": 0, "default": 5000, "description": "Each trace stops here."},
}


TOOLS = [
    ToolSpec("trace", "The chain of an op across PyTorch's layers: Python -> bridge -> native_functions.yaml -> C++ "
             "kernel -> dispatch stubs -> registrations -> CUDA launches / library calls, and the backward. The "
             "main chain by default; detail asks for more.", TRACE, run_trace, ("name",)),
    ToolSpec("find", "Definitions (C++, CUDA, Python) by name or qualified name; * and ? are wildcards.",
             {"name": _name("A name or qualified name; '*lstm*' matches any part."),
              "kind": {"type": "string", "description": "function, method, impl_func, global_kernel, class, ..."},
              "layer": {"type": "string", "enum": ["python", "cpp", "cuda"]},
              "exact": {"type": "boolean", "default": False, "description": "* and ? match only themselves."},
              "limit": _limit(50), "cursor": CURSOR}, run_find, ("name",)),
    ToolSpec("op", "The native_functions.yaml entry (or every overload of a name) and its dispatch rows.",
             {"name": _name("add, add.Tensor, aten::add.out")}, run_op, ("name",)),
    ToolSpec("stub", "A dispatch stub: where it is declared, who calls it, what each device registers.",
             {"name": _name("A DECLARE_DISPATCH stub: add_stub, layer_norm_stub")}, run_stub, ("name",)),
    ToolSpec("callers", "Call sites of a function (its unqualified name, or a qualified name's last part).",
             {"name": _name("relu, at::native::relu"), "limit": _limit(50), "cursor": CURSOR},
             _calls("callers"), ("name",)),
    ToolSpec("callees", "What a function calls (its qualified name, or a bare name of one definition).",
             {"name": _name("at::native::lstm, lstm"), "limit": _limit(50), "cursor": CURSOR},
             _calls("callees"), ("name",)),
    ToolSpec("kernels", "GPU launches (<<<>>>, TensorIterator launchers, cub/thrust); with op, the device code and "
             "library calls that op's trace reaches.",
             {"op": {"type": "string", "description": "Only the GPU code this op's trace reaches: nn.LSTM, relu"},
              "limit": _limit(50), "cursor": CURSOR}, run_kernels),
    ToolSpec("sql", "Read-only SQL over the index's tables and views (resource opindex://schema says what each "
             "column means); bind :NAME from params. A page of rows at a time.",
             {"query": _name("SELECT ... (one read-only statement)"),
              "params": {"type": "object", "default": {}, "description": "Values for :NAME placeholders."},
              "limit": _limit(100), "cursor": CURSOR,
              "timeout": {"type": "integer", "minimum": 0, "default": 30,
                          "description": "Seconds in SQLite before the query is stopped (0: no limit)."}},
             run_sql, ("query",)),
    ToolSpec("profile", "Each kernel of a torch.profiler Chrome trace (.json/.json.gz) or a list of kernel names, "
             "largest GPU time first, tied to its source: __global__, op body, stub, aten op, or library call site.",
             {"path": _name("The profile's path (relative to the server's working folder)."),
              "detail": {"type": "string", "enum": ["main", "full"], "default": "main",
                         "description": "main: a row per kernel; full: with each kernel's chain up to the op."},
              "limit": _limit(20, "kernels"), "cursor": CURSOR}, run_profile, ("path",)),
    ToolSpec("diff", "Two indexes side by side (two PyTorch versions, a fork and its upstream): ops added, "
             "removed, renamed, changed; stubs, registrations, kernels, library calls; with names, each op's two "
             "main chains hop by hop. fork=true: what the served checkout, a vendor fork, changes, from it alone.",
             DIFF, run_diff),
    ToolSpec("coverage", "Which ops a backend implements, inherits, falls back on, or lacks: per op overload and "
             "dispatch key, status kernel | inherited | composite_implicit | composite_explicit | fallback | missing, "
             "with the registering file:line; lacks: what a composite decomposes into that the key is missing.",
             {"device": {"type": "array", "items": {"type": "string"}, "default": [],
                         "description": "Dispatch keys or devices: cuda, mps, QuantizedCPU (none: the default set)"},
              "ops": {"type": "array", "items": {"type": "string"}, "default": [],
                      "description": "Only these ops: add (every overload), add.Tensor"},
              "missing": {"type": "boolean", "default": False,
                          "description": "Only what the one device lacks that CUDA has, most Python APIs first."},
              "for": {"type": "string", "description": "A torch.profiler trace path, or a name to trace (nn.LSTM): "
                                                       "only the ops it reaches"},
              "limit": _limit(50), "cursor": CURSOR}, run_coverage),
]
BY_NAME = {t.name: t for t in TOOLS}


def call(ix, name: str, arguments: dict) -> Answer:
    """One tool call: the arguments checked, the tool run; what the user can act on is a tool error, never a
    crash (a damaged index too: it is said, with how to mend it)."""
    spec = BY_NAME.get(name)
    if spec is None:
        import difflib
        close = difflib.get_close_matches(name, BY_NAME, n=3, cutoff=0.5)
        return error("unknown_tool", f"no tool named {name!r}; the tools are {', '.join(BY_NAME)}", close)
    try:
        return spec.run(ix, checked(name, spec.input_schema(), arguments))
    except listing.BadCursor as e:
        return error("bad_cursor", str(e))
    except BadArguments as e:
        return error("bad_arguments", str(e))
    except OpindexError as e:  # UsageError (bad SQL, a write), QueryTimeout, Broken (a damaged index), a bad path
        return error(type(e).__name__.lower(), str(e))
    except OSError as e:
        return error("os_error", f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
