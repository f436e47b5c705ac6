"""The index side of profile attribution: cached plain-SQL lookups over the opindex tables (symbols, calls,
native_dispatch, dispatch_registrations, stub_calls, stub_arguments ...), and the small rules shared by the walks.

Nothing here imports the trace package: the profile answers are read straight from the tables, so they do not move
when the trace walkers change."""
from __future__ import annotations

import functools
import re
import sqlite3
from pathlib import Path

from .chrome import KernelGroup
from .kernel_name import ANON

FUNCTION_KINDS = ("function", "method", "impl_func", "global_kernel", "device_function")
CLASS_KINDS = ("struct", "class")
# Folders whose code never runs on a GPU: a GPU kernel's lambda or functor is never defined there.
HOST_ONLY_DIRS = {"cpu", "mps", "vulkan", "metal", "mkldnn", "xnnpack", "qnnpack", "mkl", "sparse/cpu"}
DISPATCH_KEY_ORDER = ("CUDA", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "DefaultBackend",
                      "CompositeImplicitAutograd", "Math")
_UFUNC_FUNCTOR = re.compile(r"^CUDAFunctor(?:OnSelf|OnOther)?_(\w+)$")
UP_DEPTH, DOWN_DEPTH, FANOUT = 5, 6, 40
_HOST_DEVICE = re.compile(r"^(at::|c10::)?(k(CPU|MPS|XPU|Meta)|DeviceType::(CPU|MPS|XPU|Meta))$")


def _loc(file, line) -> str | None:
    return f"{file}:{line}" if file and line else None


def _scope(qualified: str) -> list[str]:
    return [p for p in qualified.split("::")[:-1] if p and p != ANON]


def _last(name: str) -> str:
    return name.split("::")[-1]


@functools.lru_cache(maxsize=65536)
def _host_only(path: str) -> bool:
    parts = path.split("/")[:-1]
    return any(p in HOST_ONLY_DIRS for p in parts)


def _op_base(op: str) -> str:
    """aten::_foreach_mul_ -> _foreach_mul_; aten::add.Tensor -> add."""
    return op.removeprefix("aten::").split(".")[0]


def _norm_op(name: str) -> str:
    """In-place and out= twins share their kernel: add_, add, add.out all normalize to add."""
    return name.split(".")[0].rstrip("_") or name


def _dedupe(rows: list[tuple]) -> list[tuple]:
    seen, out = set(), []
    for r in rows:
        if r[0] not in seen:
            seen.add(r[0])
            out.append(r)
    return out


def _profile_op_list(g: KernelGroup) -> list[str]:
    """The ops the profile names for this kernel, most specific first: innermost ops by count, then outermost."""
    ops = [o for o, _ in g.inner_ops.most_common()] + [o for o, _ in g.ops.most_common()]
    return list(dict.fromkeys(ops))


def _profile_ops(g: KernelGroup) -> set[str]:
    return {_norm_op(_op_base(o)) for o in _profile_op_list(g)}


def _hop(layer, kind, name, file, line, detail) -> dict:
    return {"layer": layer, "kind": kind, "name": name, "file": file, "line": line, "detail": detail}


class IndexFacts:
    """Lookups on one opened index. Every query result is cached: a profile asks about the same ops and helpers
    over and over."""

    def __init__(self, con: sqlite3.Connection, root: str | None = None):
        self.con = con
        self.root = Path(root) if root else None
        self._cache: dict = {}
        self._text_pass = False      # the second, text-assisted walk (see _up)

    # -- cached lookups ------------------------------------------------------------------------------------------

    def _q(self, sql: str, params: tuple = ()) -> list[tuple]:
        key = (sql, params)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self.con.execute(sql, params).fetchall()
        return hit

    def defs(self, name: str, kinds: tuple) -> list[tuple]:
        """(qualified_name, file, line, kind, language) of definitions named `name`."""
        marks = ",".join("?" * len(kinds))
        return self._q(f"SELECT s.qualified_name, s.file, s.line, s.kind, s.language FROM symbols s "
                       f"WHERE s.name = ? AND s.kind IN ({marks}) AND s.language != 'python' "
                       f"ORDER BY s.file, s.line", (name, *kinds))

    def _gpu_defs(self, name: str) -> list[tuple]:
        """Function definitions of a callee outside host-only folders; a name with many definitions (size, get) is
        too generic to follow and gives none."""
        key = ("gpudefs", name)
        if key not in self._cache:
            n = self._q("SELECT count(*) FROM symbols WHERE name = ?", (name,))[0][0]
            rows = [] if n > 12 else [d for d in self.defs(name, ("function", "method", "impl_func"))
                                      if not _host_only(d[1])]
            self._cache[key] = rows
        return self._cache[key]

    def pick(self, name: str, namespace: list[str], kinds: tuple, gpu_context: bool = True):
        """The definitions of `name` in `namespace`: (primary, alternates, note). Same name AND a compatible
        namespace: the index's scope equals the profile's (anonymous namespaces left out on both sides); a
        definition whose scope the index did not record (a parse error hid the namespace) is taken only when none
        matches exactly, and says so. In a GPU context, files under cpu/, mps/ ... are never candidates.
        Several equal candidates (a copy under #ifdef in a vendor folder): the shallowest path is primary."""
        rows = [r for r in self.defs(name, kinds) if not (gpu_context and _host_only(r[1]))]
        exact = [r for r in rows if _scope(r[0]) == namespace]
        note = None
        if not exact and namespace:
            exact = [r for r in rows if not _scope(r[0])]
            if exact:
                note = f"the index has no namespace for {name} (declared in {'::'.join(namespace)})"
        if not exact:
            return None, [], None
        # one definition per file is enough (a template and its specialization are the same answer)
        seen, uniq = set(), []
        for r in exact:
            if r[1] not in seen:
                seen.add(r[1])
                uniq.append(r)
        uniq.sort(key=lambda r: (r[4] != "cuda" and gpu_context, r[1].count("/"), r[1], r[2]))
        return uniq[0], uniq[1:], note

    def symbol_name(self, qualified: str) -> list[str]:
        """The names a function is known by in dispatch rows and registrations: its symbol name (TORCH_IMPL_FUNC(x)
        is named x though qualified structured_x), its last component, its qualified name."""
        names = {qualified, _last(qualified)}
        for (n,) in self._q("SELECT DISTINCT name FROM symbols WHERE qualified_name = ?", (qualified,)):
            names.add(n)
        return sorted(names)

    def _by_last(self, table: str) -> dict:
        """A table's rows keyed by the last component of the kernel name as written (`binary_internal::f` and
        `at::native::f` are f): dispatch rows and registrations are small, one read beats a LIKE scan per name."""
        key = ("bylast", table)
        if key not in self._cache:
            m: dict = {}
            if table == "native_dispatch":
                rows = self.con.execute("SELECT function, dispatch_key, kernel, file, line FROM native_dispatch")
                for r in rows:
                    m.setdefault(_last(r[2] or ""), []).append(tuple(r))
            else:
                rows = self.con.execute("SELECT stub, file, line, kernel FROM dispatch_registrations "
                                        "WHERE device = 'CUDA' AND kernel IS NOT NULL")
                for r in rows:
                    m.setdefault(_last(r[3].lstrip("&")), []).append(tuple(r[:3]))
            self._cache[key] = m
        return self._cache[key]

    def dispatch_rows(self, qualified: str) -> list[tuple]:
        """native_dispatch rows (function, key, kernel, file, line) naming this function (CUDA-capable keys)."""
        out = []
        for n in self.symbol_name(qualified):
            if "::" in n:
                continue
            for r in self._by_last("native_dispatch").get(n, ()):
                if r[1] in DISPATCH_KEY_ORDER or r[1].startswith("Composite"):
                    out.append(r)
        return sorted(set(out), key=lambda r: (r[3], r[4], r[1]))

    def registrations(self, qualified: str) -> list[tuple]:
        """CUDA registrations (stub, file, line) of this function, its name written bare or qualified."""
        out = []
        for n in self.symbol_name(qualified):
            if "::" not in n:
                out += self._by_last("dispatch_registrations").get(n, ())
        return sorted(set(out))

    def callers(self, name: str) -> list[tuple]:
        """(caller, file, line) of calls of `name`, C++/CUDA only."""
        return self._q("SELECT caller, file, line FROM calls WHERE callee = ? AND language != 'python' "
                       "AND caller != '' ORDER BY file, line", (_last(name),))

    # -- the answer for one kernel ---------------------------------------------------------------------------

    def _optional(self, sql: str, params: tuple) -> list[tuple]:
        """A query on a table that older indexes lack (stub_arguments comes with the link step): none there."""
        try:
            return self._q(sql, params)
        except sqlite3.OperationalError:
            return []

    def _stub_passed_by(self, stub: str) -> list[tuple]:
        """(caller, file, line) of calls that pass `stub` to a helper (`impl_func_cum_ops(..., cumsum_stub)`,
        `unary_op_impl_with_complex_to_float_out(result, self, abs_stub, ...)`): the helper calls the stub, so the
        caller of that call reaches the stub's registrations as a direct stub call would."""
        out = []
        for helper, file, line in self._optional("SELECT helper, file, line FROM stub_arguments WHERE stub = ?",
                                                 (stub,)):
            out += self._q("SELECT caller, file, line FROM calls WHERE callee = ? AND file = ? AND line = ? "
                           "AND caller != ''", (_last(helper), file, line))
        return out

    def _stubs_passed_in(self, f: str) -> list[str]:
        """The stubs the function f passes to helpers (the downward twin of _stub_passed_by)."""
        return [stub for stub, callee, helper in self._optional(
            "SELECT sa.stub, c.callee, sa.helper FROM calls c JOIN stub_arguments sa ON sa.file = c.file "
            "AND sa.line = c.line WHERE c.caller = ?", (f,)) if callee == _last(helper)]

    def _op_kernels(self, op: str) -> list[tuple]:
        """(function, key, kernel, file, line) of an op's CUDA-capable dispatch rows, every overload; a
        structured_delegate is followed to the entry that holds the kernel."""
        base = _op_base(op)
        key = ("opk", base)
        if key in self._cache:
            return self._cache[key]
        entries = self._q("SELECT id, full_name, structured_delegate FROM native_functions WHERE name = ?", (base,))
        out = []
        for eid, full, delegate in entries:
            rows = self._q("SELECT function, dispatch_key, kernel, file, line FROM native_dispatch "
                           "WHERE native_function_id = ?", (eid,))
            if not rows and delegate:
                rows = self._q("SELECT d.function, d.dispatch_key, d.kernel, d.file, d.line FROM native_dispatch d "
                               "JOIN native_functions n ON n.id = d.native_function_id WHERE n.full_name = ?",
                               (delegate,))
            out += [r for r in rows if r[1] in DISPATCH_KEY_ORDER]
        out.sort(key=lambda r: DISPATCH_KEY_ORDER.index(r[1]))
        self._cache[key] = out
        return out

    def _kernel_defs(self, kernel: str) -> list[tuple]:
        """Definitions of a dispatch row's kernel name: at::native ones first, never in a host-only folder."""
        rows = self._q("SELECT qualified_name, file, line, kind FROM symbols WHERE (name = ? OR qualified_name = ?) "
                       "AND kind IN ('function','impl_func','method') AND language != 'python'", (_last(kernel), kernel))
        rows = [r for r in rows if not _host_only(r[1])]
        rows.sort(key=lambda r: (not r[0].startswith("at::native::"), r[3] == "method", r[1]))
        return [(r[0], r[1], r[2]) for r in rows]
