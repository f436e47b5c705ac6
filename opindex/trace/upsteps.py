"""One step up the graph from a C++/CUDA function: the registrations that name it, the calls that reach it, and the
stub calls that reach a registration. One set of rules, read by both upward walks: the trace's up walk (trace/up.py,
every caller, capped per step, up to Python) and the profile's attribution (profile/attribute.py, breadth-first
toward the op the profile names). They differ in how they search, never in what counts as a step.

The rules, each with its reason:
- a registration names a function of its own file when that name is defined in several files (LayerNormKernelImpl
  exists once per device); a name defined once may be registered from another file (a kernel in a header);
- a kernel written qualified in a registration or a dispatch row (`binary_internal::div_kernel`) is the function of
  that last name;
- a stub call with a literal device of another backend (`stub(kCPU, ...)`) never reaches this device's
  registration; a call that passes the stub to a helper (`impl_func_cum_ops(..., cumsum_stub)`) reaches it as a
  direct call would;
- a caller in the function's own file counts; a caller in another file counts when the link step resolved that
  call to this very definition (call_links); without such callers, and only when nothing else leads up (no
  registration, no dispatch row) and the name has one definition, an unlinked call in another file counts, unless its
  namespace qualifier names another scope (`mbtopk::launch` is not sbtopk::launch);
- a name called all over the tree (more than COMMON_CALLS calls: fill_, copy_) is read in its own file only;
- a functor's operator() is reached through the calls that build the functor (`Functor<T>()(iter, ...)`).
"""
from __future__ import annotations

import re

from ..pytorch.devices import COMPOSITE_KEYS, literal_device
from . import facts as q

COMMON_CALLS = 160  # calls of one name past which only its own file's calls are read
FUNCTION_KINDS = ("function", "method", "impl_func", "global_kernel", "device_function")


def last(name: str) -> str:
    return name.split("::")[-1]


def dispatch_key_order(device_keys: tuple[str, ...]) -> tuple[str, ...]:
    """The keys a device's dispatch rows are ranked by: the device's own, then the composites in the dispatcher's
    precedence (pytorch/devices.COMPOSITE_KEYS)."""
    return (*device_keys, *COMPOSITE_KEYS)


class UpSteps:
    """The steps up from functions of one index. Answers are kept for the life of the object (one trace or one
    profile): the same helpers come back many times."""

    def __init__(self, con):
        self.con = con
        self._kept: dict = {}

    def _keep(self, key, make):
        hit = self._kept.get(key)
        if hit is None:
            hit = self._kept[key] = make()
        return hit

    # -- registrations and dispatch rows -------------------------------------------------------------------------
    def definition_files(self, name: str) -> set[str]:
        return self._keep(("deffiles", name), lambda: {s["file"] for s in q.symbols_named(self.con, name)
                                                      if s["kind"] in FUNCTION_KINDS})

    def _registrations_by_kernel(self) -> dict[str, list[dict]]:
        def make():
            by: dict[str, list[dict]] = {}
            for r in q.all_registrations(self.con):
                by.setdefault(last((r["kernel"] or "").lstrip("&")), []).append(r)
            return by
        return self._keep("regs", make)

    def registrations(self, names: list[str], file: str | None) -> list[dict]:
        """dispatch_registrations rows naming a function known by `names` (its symbol name, its last component:
        TORCH_IMPL_FUNC(x) is named x though qualified structured_x) and defined in `file` (None: wherever it is
        defined), every device."""
        by = self._registrations_by_kernel()
        found = {r["id"]: r for n in names if "::" not in n for r in by.get(n, ())}
        multi = any(len(self.definition_files(n)) > 1 for n in names if "::" not in n)
        return sorted((r for r in found.values() if not multi or file is None or r["file"] == file), key=lambda r: r["id"])

    def dispatch_rows(self, names: list[str]) -> list[dict]:
        """native_dispatch rows (with the entry's full_name) whose kernel, as written, ends in one of `names`."""
        def make():
            by: dict[str, list[dict]] = {}
            for r in q.all_dispatch_rows(self.con):
                by.setdefault(last(r["kernel"] or ""), []).append(r)
            return by
        by = self._keep("rows", make)
        found = {r["id"]: r for n in names if "::" not in n for r in by.get(n, ())}
        return sorted(found.values(), key=lambda r: (r["line"], r["id"]))

    def kernel_of(self, rows: list[dict], file: str, line: int) -> list[dict]:
        """Of dispatch rows found by their kernel's name, those whose kernel is this definition: the link step
        chose it for the row (op_kernel_links), or chose none. An anonymous-namespace helper named like an op
        kernel (transformer.cpp's `norm`, which calls at::layer_norm) is no kernel of aten::norm."""
        def make():
            chosen: dict[int, set[tuple[str, int]]] = {}
            for r in q.chosen_kernel_definitions(self.con):
                chosen.setdefault(r["dispatch_id"], set()).add((r["def_file"], r["def_line"]))
            return chosen
        chosen = self._keep("chosen", make)
        return [r for r in rows if r["id"] not in chosen or (file, line) in chosen[r["id"]]]

    def stub_calls(self, stub: str, device: str | None) -> list[dict]:
        """The calls that reach `stub`'s registration for `device` (None: any): direct calls whose device argument
        may be that device, then calls passing the stub to a helper. Each row: caller, file, line, device_arg, via
        (the helper, or None)."""
        def make():
            direct = [dict(c, via=None) for c in q.stub_callers(self.con, stub)]
            passed = [{"caller": c["caller"], "file": c["file"], "line": c["line"], "device_arg": "",
                       "via": last(a["helper"])}
                      for a in q.stub_arguments_of(self.con, stub)
                      for c in q.calls_at(self.con, a["file"], a["line"], last(a["helper"]))]
            return [c for c in direct + passed if c["caller"]]
        every = self._keep(("stubcalls", stub), make)
        return [c for c in every if may_reach(c["device_arg"], device)]

    # -- calls ---------------------------------------------------------------------------------------------------
    def _calls_of(self, name: str, file: str) -> list[dict]:
        """C++/CUDA calls of `name` made inside a function (its own file's only for a name called everywhere)."""
        def make():
            if q.call_count(self.con, name) > COMMON_CALLS:
                return [dict(r, language="cpp") for r in q.calls_of_in_file(self.con, name, file)]
            return [r for r in q.callers_of(self.con, name) if r["language"] != "python" and r["caller"]]
        return self._keep(("calls", name, file if q.call_count(self.con, name) > COMMON_CALLS else None), make)

    def callers(self, d: dict, ends_here: bool) -> list[dict]:
        """The calls that reach definition `d` (a symbols row: id, qualified_name, file). `ends_here`: something else
        leads up from it (a registration or a dispatch row), so unlinked calls in other files are not followed."""
        qualified, file = d["qualified_name"], d["file"]
        parts = qualified.split("::")
        name, scope = parts[-1], set(parts[:-1])
        rows = self._calls_of(name, file)
        if name == "operator()" and len(parts) > 1:
            rows = rows + self._calls_of(parts[-2], file)
        # (a call of the same name from another overload is a caller: the public log_softmax calls the static one;
        # `at::log_softmax(...)` is the op's API, not at::native::log_softmax: the op's own callers are op_callers)
        op_api = "native" in scope and self.is_op(name)
        rows = [c for c in rows if (c["caller"] != qualified or c["file"] != file or not
                                    d.get("line") <= c["line"] <= (d.get("end_line") or d.get("line")))
                and _qualifier_fits(c, scope) and not (op_api and (c.get("qualifier") or "") == "at")]
        same = [c for c in rows if c["file"] == file]
        linked = [c for c in rows if c["file"] != file and self._links_to(c, d["id"])]
        if same or linked or ends_here or name == "operator()" or len(self.definition_files(name)) > 1:
            return same + linked
        return rows

    def is_op(self, name: str) -> bool:
        """Whether `name` is a native function's (an at::name(...) call is then the op's API)."""
        return self._keep(("op", name), lambda: bool(q.native_by_name(self.con, name)))

    def _links_to(self, call: dict, definition_id: int) -> bool:
        return any(ln["id"] == definition_id for ln in q.call_targets(
            self.con, call["file"], call.get("qualifier") or "", call["callee"], call.get("template_args")))


def _qualifier_fits(call: dict, scope: set[str]) -> bool:
    """A call written with a namespace qualifier fits a definition in that scope (at:: and native:: fit all)."""
    qual = (call.get("qualifier") or "").split("::")[-1]
    return not qual or call.get("is_method") or not re.fullmatch(r"\w+", qual) or qual in scope \
        or qual in ("at", "native")


def may_reach(device_arg: str | None, device: str | None) -> bool:
    """A stub call with a literal device (kCPU) only reaches the registration of that device (a
    dispatch_registrations.device value: CUDA, CPU ...)."""
    if device is None or not device_arg:
        return True
    literal = literal_device(device_arg)
    return literal is None or literal == device
