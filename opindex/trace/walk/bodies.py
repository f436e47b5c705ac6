"""The C++ layer of a walk: a definition and its body (AT_DISPATCH, stub calls, launches, library calls, calls), the
helpers it calls, and those without device code shown as leaves."""
from __future__ import annotations

import functools
import json
import re

from .. import facts as q
from ...pytorch.call_expr import Tensor
from ...pytorch.devices import CPP_HEADERS, CPP_SOURCES, op_api_call, runs_on
from ...pytorch.plumbing import PLUMBING_OPS
from ...pytorch.receivers import split_parameters, takes_arguments
from ...pytorch.syntax import closes_at_end
from ..conditions import MAYBE_STRIDED
from ..iterators import Operands
from ..model import DEVICE_LAYERS, Condition, Found, Hop
from .step import Step
from .sites import BodyCalls, int_list
from .specializations import not_taken
from .template_values import template_arguments
from ..sequence import file_lines, strided_operands_at
from ..typeids import declared_types, object_class, parameter_class, passed_types
from .text import cpp_detail

MAX_HELPERS = 6  # helpers without device code shown per body (helper leaves; --limit 0: all)
_HELPER_FOLDERS = ("aten/src/ATen/", "aten/src/THC", "aten/src/TH/", "aten/src/THCUNN", "aten/src/THNN")
DEVICE_CODE = ("global_kernel", "device_function")  # definitions whose body runs on the GPU


class BodyWalk(Step):
    def __init__(self, root):
        super().__init__(root)
        self.leaves: dict[int, list[tuple[dict, dict, int]]] = {}  # body hop -> (call, target, overloads) of the
        # helpers it calls that run no device code, shown as leaves after the body's own work (helper_leaves)
        self.leaf_hops: dict[int, Hop] = {}  # helper id -> the leaf hop showing it (once per trace; see leaf_shown)

    def cpp(self, d: dict, parent: Hop, depth: int, kind: str | None = None,
            call_site: tuple[str, int] | None = None, caller: dict | None = None,
            passed: dict | None = None) -> Hop | None:
        """`passed`: values a stub call hands the kernel it registers, by the parameter's place (the iterators
        whose operands the trace knows: StubWalk.passed_iterators)."""
        key = d["id"]  # by definition: the gemm<float> and gemm<double> specialisations are two
        if parent is not None and q.runs_what_it_is_passed(self.con, key):  # (a trace that starts here: once)
            # split_batch_dim_to_32bit_out calls the worker its caller passes (the forward one from Conv_v7.cpp:791,
            # the backward-input one from :909): what it leads to depends on the caller, so once per caller
            key = (key, parent.name, parent.file)
        key = self.walk_key(key)
        types = argument_types(self.con, d, call_site, caller)
        if types:  # its typeid tests read the classes this call passes: once per set of them (scatter's TensorAssign,
            key = (key, tuple(sorted(types.items())))  # scatter_add's ReduceAdd)
        hop = self.b.add(parent, "cpp", kind or d["kind"], d["qualified_name"], d["file"], d["line"],
                       cpp_detail(d))
        if call_site is not None:
            self.b.call_sites[hop.id] = call_site
            hop.called_at = f"{call_site[0]}:{call_site[1]}"
        if key in self.b.seen_cpp:
            if key in self.b.useful_cpp:  # _embedding_bag's kernel, walked for _embedding_bag_forward_only above: the
                self.b.live.add(hop.id)   # op leads to device code, shown there
            return self.b.repeat(hop)
        self.b.seen_cpp.add(key)
        if d["kind"] == "global_kernel":
            hop.layer = "cuda"
        if d.get("from_macro"):  # foreach_tensor_add_list_kernel_cuda_, written by FOREACH_BINARY_OP_LIST_ALPHA(...)
            m = q.macro_definition(self.con, d["from_macro"], d["file"])
            if m is not None:
                self.b.add(hop, "cpp", "macro", f"#define {m['name']}", m["file"], m["line"],
                         f"the macro whose use at {d['file']}:{d['line']} writes {d['name']}: its body is the code")
        mark = len(self.trace.hops)
        known = self.conditions.over(caller).values if caller is not None else {}
        given = {} if self.b.ruled_out(parent) else {**template_arguments(self.con, self.trace.root, d, call_site, known),
                                                     **literal_arguments(self.con, d, call_site, known)}
        if passed and not self.b.ruled_out(parent):
            given.update(by_place(d, passed))
        self.body({**d, **({"call_values": given} if given else {}), **({"call_types": types} if types else {})},
                  hop, depth)
        if any(h.layer in DEVICE_LAYERS for h in self.trace.hops[mark:]):
            self.b.useful_cpp.add(key)
        return hop

    def body(self, d: dict, hop: Hop, depth: int) -> None:
        if d.get("kind") in DEVICE_CODE:
            self.launches.device_calls(d, hop)
            return
        caller, file, lines = d["qualified_name"], d["file"], q.span(d)
        guards = self.conditions.over(d)
        sites = [t for t in q.in_function(self.con, "type_dispatches", caller, file, lines)
                 if not guards.at(t["line"]).off]
        for t in self.b.capped(sites, 2, "AT_DISPATCH sites", hop):
            self.b.add(hop, "cpp", "AT_DISPATCH", t["macro"], t["file"], t["line"],
                     f"{t['macro']}(..., \"{t['name'] or ''}\", ...): dtypes {t['dtypes']}")
        reach = d["reach"] if "reach" in d else q.device_reach_distance(self.con, d["id"])
        if reach != 0:  # it launches, calls a library or a stub itself only at distance 0 (device_reach)
            self.calls(d, hop, depth)
            return
        launches = q.in_function(self.con, "kernel_launches", caller, file, lines)
        stubs = q.in_function(self.con, "stub_calls", caller, file, lines)
        views = self.strided_iterator(d, launches, stubs)
        if views and self.b.defaults and not self.b.defaults[-1].get("strided"):
            # the iterator this body builds and hands on is not contiguous: read so below it, in this op
            hop.detail += f" [builds a TensorIterator from strided or broadcast operands ({', '.join(views[:3])})]"
            outer = self.b.defaults[-1]
            self.b.defaults[-1] = {**outer, "strided": views}
            try:
                self.own_work(d, hop, depth, launches, stubs, guards)
            finally:
                self.b.defaults[-1] = outer
            return
        self.own_work(d, hop, depth, launches, stubs, guards)

    def walk_key(self, key):
        """How a definition is known as walked: under an op whose iterator is strided its contiguity tests read
        otherwise, so it is walked again there, not repeated."""
        views = self.b.defaults[-1].get("strided") if self.b.defaults else None
        return (key, "maybe" if views == [MAYBE_STRIDED] else "strided") if views else key

    def strided_iterator(self, d: dict, launches: list[dict], stubs: list[dict]) -> list[str]:
        """The strided or broadcast operands (pytorch/views.py) of a TensorIterator this body builds, where it
        launches one or calls a stub (group_norm's GroupNormKernelImplInternal: `mean.view({N * G, 1})` beside
        `X.view({N * G, D * HxW})`, then gpu_kernel(iter, ...))."""
        if not (stubs or any(ln["kind"] == "tensor_iterator" for ln in launches)) or not d.get("end_line") \
                or not self.trace.root:
            return []
        return list(strided_operands_at(self.trace.root, d["file"], d["line"], d["end_line"]))

    def own_work(self, d: dict, hop: Hop, depth: int, launches: list[dict], stubs: list[dict], guards) -> None:
        """What a body that reaches device code itself runs: its stub calls, launches and library calls, then its
        other calls."""
        caller, file, lines = d["qualified_name"], d["file"], q.span(d)
        for s in stubs:
            under = guards.at(s["line"])
            if not under.off:
                with self.b.noted(hop, under):
                    self.stubs.stub(s, hop, depth, d)
        for launch in launches:
            under = guards.at(launch["line"])
            if launch["kernel"] != d["name"] and not under.off:  # gpu_kernel(sub_iter, f) in gpu_kernel: a recursion
                with self.b.noted(hop, under):
                    self.launches.launch(launch, hop, d)
        wrappers = set()
        for lib in q.in_function(self.con, "library_calls", caller, file, lines):
            under = guards.at(lib["line"])
            if not under.off:
                with self.b.noted(hop, under):
                    self.library_call(lib, d, hop, depth, wrappers)
        self.calls(d, hop, depth, skip=wrappers)

    def body_helpers(self, d: dict, hop: Hop) -> None:
        """The helpers without device code a body that is not walked calls (a meta function's
        common_checks_baddbmm_bmm, meta_func_cum_ops), as helper_leaves shows them for walked bodies."""
        guards = self.conditions.over(d)
        for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
            if call["is_method"] or guards.at(call["line"]).off or \
                    (call["qualifier"], call["callee"]) not in q.linked_callees(self.con, call["file"]):
                continue
            links = q.call_targets(self.con, call["file"], call["qualifier"], call["callee"], call.get("template_args"))
            self.keep_leaf(call, links, hop)
        self.helper_leaves(hop)

    def library_call(self, lib: dict, d: dict, hop: Hop, depth: int, wrappers: set) -> None:
        """A library call; PyTorch's own wrapper of one (at::cuda::blas::gemm<T>) is followed to the vendor call it
        makes (its line and name go into `wrappers`: the body's calls skip it)."""
        lh = self.b.add(hop, "library", lib["library"], lib["function"], lib["file"], lib["line"],
                      f"{lib['library']} call")
        qualifier, _, name = lib["function"].rpartition("::")
        if qualifier and q.call_targets(self.con, d["file"], qualifier, name):
            lh.detail = f"{lib['library']} call through PyTorch's wrapper {lib['function']}"
            wrappers.add((lib["line"], name))
            self.local_call({"file": d["file"], "line": lib["line"], "qualifier": qualifier, "callee": name}, d,
                            lh, depth, kind="wrapper")

    def calls(self, d: dict, hop: Hop, depth: int, skip: set = frozenset()) -> None:
        # launchers (gpu_kernel) are walked from their launch hop; their calls are not helpers of this body
        launches = q.in_function(self.con, "kernel_launches", d["qualified_name"], d["file"], q.span(d))
        launched = {r["kernel"] for r in launches}
        own = q.device_reach(self.con, d["id"]) if "id" in d else None
        # a kernel whose only device work is the ops it calls forwards to them: they do not use up --depth
        forwards = own is not None and own["distance"] == 0 and own["reaches"] == "op"
        body = BodyCalls(d, hop, depth, skip, launched, launched | {d["name"]}, forwards)
        # the helpers this body calls itself are walked at its own call, not first inside a sibling helper that
        # calls them too (copy_device_to_device calls conj_kernel_cuda, which calls direct_copy_kernel_cuda, and
        # direct_copy_kernel_cuda itself: the plain copy's path is the direct call)
        reserved = [i for i in self.direct_helpers(d) if i not in self.b.reserved and i not in self.b.seen_cpp]
        self.b.reserved.update((i, d["qualified_name"]) for i in reserved)
        # the same for ops: cross_entropy_loss_symint's default branch calls at::log_softmax and at::nll_loss_nd
        # itself; its label-smoothing helper, called first, calls them too (the default path is the direct call)
        ops = [n for n in self.direct_ops(d, body.seen_ops) if n not in self.b.reserved_ops]
        self.b.reserved_ops.update((n, d["qualified_name"]) for n in ops)
        try:
            self.sites.walk_calls(body)
        finally:
            for i in reserved:
                self.b.reserved.pop(i, None)
            for n in ops:
                self.b.reserved_ops.pop(n, None)

    def direct_helpers(self, d: dict) -> list[int]:
        """Ids of the definitions this body's own helper calls reach (those local_call would walk); read once per
        process, index and device (q.resident: what the index says of a body does not change)."""
        key = ("direct_helpers", d["qualified_name"], d["file"], q.span(d), self.device)
        kept = q.resident(self.con).bodies
        if key not in kept:
            out = []
            for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
                qual, name = call["qualifier"], call["callee"]
                if call["is_method"] or qual in ("at", "at::_ops") or qual.startswith(("c10", "std", "TORCH")):
                    continue
                out += [ln["id"] for ln in q.call_targets(self.con, call["file"], qual, name,
                                                          call.get("template_args"))
                        if ln["reach"] is not None and runs_on(ln["def_file"], self.device)]
            kept[key] = tuple(out)
        return list(kept[key])

    def direct_ops(self, d: dict, skip: set[str]) -> list[str]:
        """The ops this body calls by their API (at::x(...), not a method: its receiver may not be a Tensor) that
        the walk has not shown yet, at a call the values do not rule out (_convolution_mode's at::convolution under
        `not (padding == "same")`, Convolution.cpp:1073, is no default path for padding='same': convolution_same's
        own call, :1037, walks the op)."""
        out, guards = [], None
        for name, ids, line in self.api_ops(d):
            if name in skip or name in out or all(i in self.b.seen_native for i in ids):
                continue
            guards = guards or self.conditions.over(d)
            if not any(c.assumed is False for c in guards.at(line).conditions):
                out.append(name)
        return out

    def api_ops(self, d: dict) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """(name, its native entries' ids, the call's line) of each op call this body makes by its API, in order
        (read once per process and index, as direct_helpers)."""
        key = ("api_ops", d["qualified_name"], d["file"], q.span(d))
        kept = q.resident(self.con).bodies
        if key not in kept:
            out = []
            for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
                name = call["callee"]
                if call["is_method"] or name.removesuffix("_symint") in PLUMBING_OPS:
                    continue
                if op_api_call(call["qualifier"], d.get("qualified_name") or "",
                               (call["qualifier"], name) in q.linked_callees(self.con, call["file"])):
                    entries = q.native_for_cpp_api(self.con, name)
                    if entries:
                        out.append((name, tuple(e["id"] for e in entries), call["line"]))
            kept[key] = tuple(out)
        return kept[key]

    def local_call(self, call: dict, d: dict, hop: Hop, depth: int, kind: str = "calls", leaves: bool = False,
                   passed: dict | None = None) -> None:
        """A helper the kernel calls (LayerNormKernelImpl, addmm_out_cuda_impl): followed through any number of
        levels when device code or an op is reachable from it (device_reach), and shown only if it leads on. With
        `leaves`, one that leads to no device code is kept for helper_leaves. A call that may reach several C++
        overloads walks each, marked."""
        links = [ln for ln in q.call_targets(self.con, call["file"], call["qualifier"], call["callee"],
                                             call.get("template_args"))
                 if runs_on(ln["def_file"], self.device)  # miopen/ on --device cuda: the ROCm build's code
                 and not ln["device_function"]]  # only device code calls those (device_calls)
        links = self.in_translation_unit(call, links, hop)
        if len(links) > 1:  # C++ first picks the overloads its arguments fit (their number)
            args = q.arguments_of_call(self.con, call["file"], call["line"], call["callee"])
            fit = [ln for ln in links if args is None or takes_arguments(ln.get("signature"), len(args)) is not False]
            links = fit or links
        stand_in = self.stand_in(links)
        if stand_in is not None:
            links = [*links, stand_in]
        if leaves:
            self.keep_leaf(call, links, hop)
        passed_over = self.overloads_by_class(call, links, d) if len(links) > 1 else {}
        for target in links:
            if target["reach"] is not None and target["kind"] in ("struct", "class"):
                self.launches.functor_body(call, target, hop, len(links))
                continue
            walked = self.walk_key(target["id"])
            seen = walked in self.b.seen_cpp
            if (seen and walked not in self.b.useful_cpp) or target["reach"] is None:
                continue  # leads to no launch, library call, stub or op (or did not, above): nothing to walk
            owner = self.b.reserved.get(target["id"])
            if not seen and owner is not None and owner != d.get("qualified_name"):
                below = self.b.add(hop, "cpp", kind, target["qualified_name"], target["file"], target["line"],
                                 f"(shown below, where {owner} calls it directly)")
                below.called_at = f"{call['file']}:{call['line']}"
                self.b.live.add(below.id)
                continue
            mark = len(self.trace.hops)
            self.cpp(target, hop, depth, kind=kind, call_site=(call["file"], call["line"]),
                     caller=d if d.get("file") else None, passed=passed)
            if len(links) > 1 and target is not stand_in:
                self.trace.hops[mark].detail += f" [one of {len(links)} overloads the call may reach]"
                self.trace.hops[mark].found = Found.OVERLOADS
            if target["link_condition"]:
                self.link_condition(self.trace.hops[mark], target["link_condition"], target["file"])
            if target is stand_in:
                self.mark_stand_in(self.trace.hops[mark], target)
            elif len(links) > 1:
                self.dtype_condition(self.trace.hops[mark], target, links)
            if target["id"] in passed_over:
                arg, cls, other = passed_over[target["id"]]
                self.trace.hops[mark].detail += f" [not the overload the call takes: {arg} is a {cls}]"
                self.trace.hops[mark].conditions.append(Condition(
                    "if", f"{arg} is {other}" if other else f"{arg} is not {cls}", call["file"], call["line"],
                    assumed=False))
            if seen:
                self.b.live.add(mark)  # called here too; what it leads to is shown above
            elif self.b.prune(mark + 1):
                self.b.useful_cpp.add(walked)
            else:
                self.b.seen_cpp.discard(walked)
                self.b.truncate(mark)

    def stand_in(self, links: list[dict]) -> dict | None:
        """Where the build leaves out every definition a call reaches (each under a false #if of its file), the
        definition the call's code would need instead: one beside it with the same parameters, named by its stem
        (facts.stand_in). A vendor fork calls its own launcher where upstream calls the stem (mcPytorch's
        `gpu_kernel_maca_arity1(iter, ...)`, defined only under `#ifdef USE_MACA`; upstream 2.4 writes
        `gpu_kernel(iter, ...)`): on a build without the vendor's macro, the stem is the path upstream's code
        takes. Walked after the left-out one and marked, so the text and JSON say it is a stand-in."""
        if len(links) != 1:  # (several definitions: the build keeps one of them, or the call is ambiguous)
            return None
        link = links[0]
        key = ("stand-in", link["id"])
        if key not in self.b.memo:  # asked at every call of a helper: read once per trace
            false = self.build.false_at(link["def_file"], link["def_line"])
            found = q.stand_in(self.con, link) if false is not None else None
            if found is not None and self.build.false_at(found["file"], found["line"]) is not None:
                found = None
            self.b.memo[key] = {**found, "left_out": false} if found is not None else None
        return self.b.memo[key]

    def mark_stand_in(self, hop: Hop, target: dict) -> None:
        """Say so on the stand-in's hop: `found` stand_in, the left-out definition and its #if in the detail, and
        that #if's negation as a condition read true (the render's header and folded launch name it)."""
        gone, why = target["stands_in_for"], target["left_out"]
        hop.found = Found.STAND_IN
        hop.detail += (f" [stands in for {gone['name']} ({gone['file']}:{gone['line']}), which this build leaves out "
                       f"(#if {why['condition']}, line {why['line']}): the same parameters, named by its stem]")
        hop.conditions.append(Condition("#if", f"!({why['condition']})", gone["file"], why["line"], assumed=True))

    def overloads_by_class(self, call: dict, links: list[dict], caller: dict) -> dict[int, tuple[str, str, str]]:
        """Of the overloads a call may reach, those C++ would not choose for the class of an argument
        (trace/typeids.py): where one overload declares that parameter with the argument's class, the others
        (another class, a template parameter) -> (argument, its class, the class that overload declares or '').
        The argument's class: a parameter of the
        caller declared with it, else an object the call's file declares."""
        args = q.arguments_of_call(self.con, call["file"], call["line"], call["callee"])
        typed = [ln for ln in links if ln.get("signature")]
        if not args or len(typed) < 2 or len(typed) < len(links):
            return {}
        theirs = declared_types(caller.get("signature"), _template_parameters(caller)) if caller.get("signature") \
            else {}
        per_link = {ln["id"]: split_parameters(ln["signature"]) for ln in typed}
        out: dict[int, tuple[str, str, str]] = {}
        for i, arg in enumerate(a.strip() for a in args):
            number = _number_type(arg)
            if number is not None:  # `dx.toDouble()`, `0.5`: an overload taking a built-in number there wins over
                # one taking a class (a user-defined conversion ranks after an arithmetic one; a Tensor takes
                # none): trapezoid's `do_trapezoid(y, dx.toDouble(), dim)` is the `double dx` overload
                # (Integration.cpp:42), not the `const Tensor& dx` one (:32)
                builtin = {ln["id"]: _builtin_number(per_link[ln["id"]][i]) if i < len(per_link[ln["id"]]) else None
                           for ln in typed}
                if True in builtin.values():
                    out.update({sid: (arg, number, parameter_class(per_link[sid][i], ()) or "")
                                for sid, is_number in builtin.items() if is_number is False})
                continue
            if not re.fullmatch(r"[A-Za-z_]\w*", arg):
                continue
            cls = theirs.get(arg)
            if cls is None:
                cls = _object_class(self.trace.root, call["file"], arg)
            if cls is None:
                continue
            declared = {ln["id"]: parameter_class(per_link[ln["id"]][i], _template_parameters(ln))
                        if i < len(per_link[ln["id"]]) else None for ln in typed}
            if cls in declared.values():
                out.update({sid: (arg, cls, kind or "") for sid, kind in declared.items() if kind != cls})
        return out

    def in_translation_unit(self, call: dict, links: list[dict], hop: Hop) -> list[dict]:
        """Of the definitions a header's call may reach in several files, those the translation unit being walked
        reads: a header is compiled inside the .cu/.cpp file that includes it (maca_kernels/CUDALoops_maca_arity3.cuh
        calls launch_vectorized_kernel, which both CUDALoops.cuh and CUDALoops_copy.cuh define before including it;
        TensorCompare.cu reads CUDALoops.cuh only). The source file is the nearest one on the path above the call;
        all links are kept when none of them, or all of them, are read there."""
        if len({ln["def_file"] for ln in links}) < 2 or not call["file"].endswith(CPP_HEADERS):
            return links
        source = next((h.file for h in reversed(self.trace.path(hop)) if h.file and h.file.endswith(CPP_SOURCES)),
                      None)
        if source is None:
            return links
        unit = q.included_in(self.con, source)
        kept = [ln for ln in links if ln["def_file"] in unit]
        return kept or links

    def link_condition(self, hop: Hop, test: str, file: str | None) -> None:
        """A definition a call or kernel name reaches under an #if (one of several same-named ones): said, and read
        under the build traced (false: not in this build, ranked after the rest; true: nothing to say)."""
        value = self.build.holds(test)
        if value is not True:
            hop.detail += f" [#if {test}]" if value is None else f" [not in this build: #if {test}]"
            hop.conditions.append(Condition("#if", test, file, assumed=value))

    def dtype_condition(self, hop: Hop, target: dict, links: list[dict]) -> None:
        """One of several definitions of a template a call may reach (`gemm<scalar_t>(...)` inside an AT_DISPATCH
        reaches gemm<double>, gemm<float>, gemm<at::Half> ...; `prod_functor<scalar_t>{}(iter)` the primary
        template's operator() and prod_functor<bool>'s): the input's dtype picks the specialization written for it,
        else the primary template (walk/specializations.py); the others are said and ranked after."""
        test = not_taken(self.con, target, links, self.build.dtype)
        if test is None:
            return
        primary = test.text.startswith("scalar_t is not ")
        hop.detail += f" [the primary template: {self.build.dtype} has its own specialization]" if primary else \
            f" [called when {test.text}: the input is {self.build.dtype}]"
        hop.conditions.append(test)

    def keep_leaf(self, call: dict, links: list[dict], hop: Hop) -> None:
        """Keep a call for helper_leaves when what it reaches is ATen's, in one file, with no device code below it
        (the overloads of one name there, meta::make_reduction's two: one leaf at the first, marked)."""
        if links and len({ln["def_file"] for ln in links}) == 1 and not self.leaf_shown(links[0]["id"]) \
                and links[0]["def_file"].startswith(_HELPER_FOLDERS) and runs_on(links[0]["def_file"], self.device) \
                and all(ln["reach"] is None and not ln["device_function"] for ln in links):
            # (a functor class always reaches: distance 0)
            self.leaves.setdefault(hop.id, []).append((call, links[0], len(links)))

    def helper_leaves(self, hop: Hop) -> None:
        """The helpers a body calls that run no device code (expand_size, make_reduction, getSliceSize: shapes,
        checks, iterator set-up), as leaves after its calls: an expert names them, and they tell what the body
        does before its kernels. ATen's code only (not c10, torch/csrc or third-party), each once per
        trace, at most MAX_HELPERS per body (a 'capped' hop says how many more; --limit 0 shows all). Leaves never
        make a body worth showing (they are no device code: _prune drops a body that leads to nothing else)."""
        first: dict[int, tuple[dict, dict, int]] = {}
        for call, target, overloads in self.leaves.pop(hop.id, []):
            if not self.leaf_shown(target["id"]):
                first.setdefault(target["id"], (call, target, overloads))  # each once, at its first call
        # an op's own kernel called directly (the CUDA foreach kernel's fallback foreach_tensor_add_list_kernel_slow_)
        # is no helper: it runs that op's work, which its calls on list elements hide from device_reach
        found = [(c, t, n) for c, t, n in first.values() if not q.ops_with_kernel(self.con, c["callee"])]
        # the body's own file first, then ATen's native code, then the rest of ATen (getSliceSize before ceil_div
        # and globalContext): the cap keeps what is most the op's own
        found.sort(key=lambda ct: (ct[1]["def_file"] != ct[0]["file"], "/native/" not in ct[1]["def_file"]))
        for call, target, overloads in self.b.capped(found, MAX_HELPERS, "helpers without device code", hop):
            if self.b.full():
                return
            d = q.symbol_by_id(self.con, target["id"])
            h = self.b.add(hop, "cpp", "helper", d["qualified_name"], d["file"], d["line"],
                         f"a helper it calls at {call['file']}:{call['line']}; no device code below it (opindex finds "
                         f"no launch, library call, stub or op call there)"
                         + (f" [the first of {overloads} overloads the call may reach]" if overloads > 1 else ""),
                         found=Found.HELPER_LEAF)
            h.called_at = f"{call['file']}:{call['line']}"
            self.leaf_hops[target["id"]] = h

    def leaf_shown(self, symbol_id: int) -> bool:
        """Whether a helper is shown as a leaf still: a leaf under a body the walk dropped later (truncate) is
        gone, and a later body shows it again."""
        h = self.leaf_hops.get(symbol_id)
        return h is not None and h.id < len(self.trace.hops) and self.trace.hops[h.id] is h



def _template_parameters(d: dict) -> list[str]:
    try:
        return json.loads(d.get("template_parameters") or "[]")
    except ValueError:
        return []


def argument_types(con, d: dict, call_site: tuple[str, int] | None, caller: dict | None) -> dict[str, str]:
    """The class of each parameter of `d` that its body's `typeid(x) == typeid(T)` tests can read (trace/typeids.py):
    declared with a concrete type in its own signature, or passed a parameter its caller declares so (the call at
    `call_site`). Empty when no test of the body asks (read only for a body with `typeid` in its conditions)."""
    if not d.get("signature") or d.get("language") == "python" or not q.tests_typeid(con, d):
        return {}
    types = declared_types(d["signature"], _template_parameters(d))
    args = q.arguments_of_call(con, call_site[0], call_site[1], d["name"]) if call_site and caller else None
    if args and caller.get("signature"):
        types.update(passed_types(split_parameters(d["signature"]), args,
                                  declared_types(caller["signature"], _template_parameters(caller))))
    return types


_LITERAL_ARGUMENT = re.compile(r"^(?:/\*.*?\*/\s*)?(true|false|nullptr|-?\d+(?:\.\d*)?[fFlLuU]*|[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+)$")
_PARAMETER_NAME = re.compile(r"([A-Za-z_]\w*)\s*(?:=.*)?$", re.S)


def by_place(d: dict, passed: dict[int, object]) -> dict[str, object]:
    """`passed` (values by parameter place) by `d`'s parameter names."""
    names = [_PARAMETER_NAME.search(p.strip()) for p in split_parameters(d.get("signature") or "()")]
    return {names[i].group(1): v for i, v in passed.items() if i < len(names) and names[i] is not None}


def literal_arguments(con, d: dict, call_site: tuple[str, int] | None, known: dict | None = None) -> dict[str, str]:
    """The parameters of `d` its call at `call_site` passes a literal for (`/*promotes_integer_to_float=*/false`,
    `0`, `at::Reduction::Mean`), or a name whose value the caller's tests know (`known`), by name, as written: the
    tests of the body read them (conditions.BodyGuards). The body is walked once, at its first call: a later call
    with other values repeats it."""
    if call_site is None or not d.get("signature") or d.get("language") == "python":
        return {}
    args = q.arguments_of_call(con, call_site[0], call_site[1], d["name"])
    params = split_parameters(d["signature"])
    if args is None or len(args) > len(params):
        return {}
    out = {}
    for param, arg in zip(params, args):
        name, value = _PARAMETER_NAME.search(param.strip()), _LITERAL_ARGUMENT.match(arg)
        if name is not None and value is not None:
            out[name.group(1)] = value.group(1)
        elif name is not None and known and isinstance(known.get(arg), (bool, int, float)):
            # a name whose value the caller's tests read (batch_norm_cuda passes its `train` on)
            value = known[arg]
            out[name.group(1)] = ("true" if value else "false") if isinstance(value, bool) else repr(value)
        elif name is not None and known and isinstance(known.get(arg), Tensor):
            # a traced call's tensor passed on by name (matmul -> _matmul_impl(out, tensor1, tensor2)): its rank and
            # sizes decide the helper's tests (`dim_tensor1 == 3`)
            out[name.group(1)] = known[arg]
        elif name is not None and known and isinstance(known.get(arg), Operands):
            out[name.group(1)] = known[arg]  # an iterator whose operands the trace knows (trace/iterators.py)
        elif name is not None and known and int_list(known.get(arg)):
            out[name.group(1)] = tuple(int(v) for v in known[arg])  # an int list (conv's kernel_size) passed on
        elif name is not None and known and (item := _ITEM.fullmatch(arg.strip())) and int_list(
                known.get(item.group(1))) and -len(known[item.group(1)]) <= int(item.group(2)) < len(
                known[item.group(1)]):
            # one element of it (`kernel_size[1], kernel_size[0]` as conv_depthwise2d_forward_out's kW, kH)
            out[name.group(1)] = repr(int(known[item.group(1)][int(item.group(2))]))
    return out


_NUMBER_CALL = re.compile(r"\.\s*(toDouble|toFloat|toLong|toInt|toBool)\s*\(\s*\)$")
_NUMBER_CAST = re.compile(r"^static_cast<\s*((?:u?int(?:8|16|32|64)_t)|int|long|double|float|bool|size_t)\s*>\s*\(")
_BUILTIN = frozenset({"double", "float", "int", "long", "bool", "size_t", "int8_t", "int16_t", "int32_t", "int64_t",
                      "uint8_t", "uint16_t", "uint32_t", "uint64_t", "unsigned", "short"})


def _number_type(arg: str) -> str | None:
    """The built-in number type of a call argument written as one (`dx.toDouble()`, `0.5`, `static_cast<int64_t>
    (n)`, a bool or int literal); None for anything else."""
    m = _NUMBER_CALL.search(arg)
    if m is not None:
        return {"toDouble": "double", "toFloat": "float", "toLong": "int64_t", "toInt": "int", "toBool": "bool"}[
            m.group(1)]
    m = _NUMBER_CAST.match(arg)
    if m is not None and closes_at_end(arg[m.end() - 1:]):
        return m.group(1)
    if re.fullmatch(r"-?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?", arg):
        return "double"
    if re.fullmatch(r"-?\d+[lL]*", arg):
        return "int"
    return "bool" if arg in ("true", "false") else None


def _builtin_number(param: str) -> bool | None:
    """Whether a parameter is declared with a built-in number type (`double dx`); False for a class (`const
    Tensor& dx`), None where this reading cannot say (a template parameter, `auto`)."""
    words = re.sub(r"\b(?:const|volatile)\b|[&*]|=.*$", " ", param, flags=re.S).split()
    if len(words) < 2:
        return None
    kind = " ".join(words[:-1])
    if all(w in _BUILTIN for w in kind.split()):
        return True
    return False if re.fullmatch(r"(?:[A-Za-z_]\w*::)*[A-Z]\w*(?:<.*>)?", kind) else None


_ITEM = re.compile(r"([A-Za-z_]\w*)\s*\[\s*(-?\d+)\s*\]")


@functools.lru_cache(maxsize=4096)
def _object_class(root: str | None, file: str, name: str) -> str | None:
    """typeids.object_class of a file's own lines, read once per (file, name): a file's text does not change while
    a process traces."""
    return object_class(file_lines(root, file), name)

