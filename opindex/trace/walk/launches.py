"""The device layer of a walk: a <<<>>> launch and its __global__ kernel, a TensorIterator launcher and the shared
machinery it goes through, a functor object handed to one, and the __device__ functions device code calls."""
from __future__ import annotations

import re

from ...pytorch import jiterator
from .. import facts as q
from ..iterators import passed_iterators
from ..model import Found, Hop
from ..sequence import file_lines
from .step import Step
from .text import cpp_detail

MAX_DEVICE_CALLS = 8  # __device__ functions shown per kernel or device function (device_calls; --limit 0: all)


class LaunchWalk(Step):
    def launch(self, launch: dict, parent: Hop, caller: dict | None = None) -> None:
        if launch["kind"] in ("chevron", "handed"):
            targs = launch.get("template_args") or ""
            if launch["kind"] == "chevron":
                hop = self.b.add(parent, "cuda", "launch", f"{launch['kernel']}{targs}<<<{launch['config'] or ''}>>>",
                               launch["file"], launch["line"], "kernel launch", kernel=launch["kernel"])
            else:  # cb(AttentionKernel<...>(), fmha_cutlassF_...): the callee launches what it is handed
                hop = self.b.add(parent, "cuda", "handed", f"{launch['kernel']} (handed to a launcher)",
                               launch["file"], launch["line"], "a __global__ kernel passed by name to a call that "
                               "launches it (kernel_fn<<<...>>>)", kernel=launch["kernel"])
            target = launch["launch_symbol_id"] if "launch_symbol_id" in launch else q.launched(self.con, launch)
            if target is None and launch["kind"] == "chevron":
                self.passed_in(launch, hop)
            if target is not None:
                k = q.launched_definition(launch) if "launch_qualified_name" in launch else \
                    q.symbol_by_id(self.con, target)
                gh = self.b.add(hop, "cuda", "global_kernel", f"__global__ {k['qualified_name']}", k["file"], k["line"],
                              cpp_detail(k), kernel=k["name"])
                if ("kernel", target) not in self.b.seen_cpp:  # what its body calls, under its first launch only
                    self.b.seen_cpp.add(("kernel", target))
                    self.device_calls(k, gh)
        elif launch["kind"] == "tensor_iterator":  # cub/thrust launches are shown as their library calls
            hop = self.b.add(parent, "cuda", launch["kind"], launch["kernel"], launch["file"], launch["line"],
                           f"{launch['kind']} launch via {launch['kernel']}: the op's own body is the functor or "
                           f"lambda passed at {launch['file']}:{launch['line']}")
            first = len(self.trace.hops)
            self.launcher(launch, hop, caller)
            if launch["kernel"] in jiterator.JITTED_LAUNCHERS:
                self.jitted(launch, hop, first)

    def jitted(self, launch: dict, hop: Hop, first: int) -> None:
        """A jiterator launch (pytorch/jiterator.py): its machinery's launch functions below `hop` (hops from
        `first` on) name the kernel NVRTC compiles at run time, which no __global__ of the source is."""
        found = jiterator.name_constant(launch.get("template_args"), file_lines(self.trace.root, launch["file"]))
        if found is None:
            return
        name, line = found
        names = jiterator.kernel_names(launch["kernel"], name)
        hop.detail += (f"; the jiterator compiles its kernel at run time as "
                       f"{' or '.join(names[k] for k in sorted(names, reverse=True))} ({launch['file']}:{line}: "
                       f"\"{name}\")")
        below = {hop.id}
        for h in self.trace.hops[first:]:
            if h.parent not in below:
                continue
            below.add(h.id)
            kernel = names.get(h.name)
            if kernel is not None:
                h.kernel = kernel
                h.detail += f" [launches {kernel}: compiled at run time from {launch['file']}:{line}'s \"{name}\"]"

    def passed_in(self, launch: dict, hop: Hop) -> None:
        """`kernel_fn<<<blocks, ...>>>(p)` where kernel_fn is a parameter of the lambda it is written in
        (attention.cu:1136 `auto launchKernel = [&](auto _k, auto kernel_fn) {`): it launches the kernels the code
        that calls the lambda hands in (`cb(AttentionKernel<...>(), fmha_cutlassF_...)`, the handed hops of
        dispatch_cutlassF beside it); marked, it is no end of the chain (Trace.ends)."""
        at = _parameter_of(file_lines(self.trace.root, launch["file"]), launch["line"], launch["kernel"])
        if at is not None:
            hop.found = Found.PASSED_IN
            hop.detail = (f"kernel launch of `{launch['kernel']}`, a parameter of the lambda at "
                          f"{launch['file']}:{at}: it runs the kernel its caller hands in (the handed hops beside it)")

    def launcher(self, launch: dict, hop: Hop, caller: dict | None = None) -> None:
        """The shared TensorIterator machinery a launcher call goes through (gpu_kernel -> gpu_kernel_impl ->
        launch_vectorized_kernel -> <<<vectorized_elementwise_kernel>>>), followed to its launches; an iterator
        whose operands the trace knows is handed on (opmath_gpu_kernel_with_scalars' `iter.is_cpu_scalar(2)`)."""
        for call in q.calls_at(self.con, launch["file"], launch["line"], launch["kernel"], launch.get("caller")):
            passed = {}
            if caller is not None:
                passed = passed_iterators(q.arguments_of_call(self.con, call["file"], call["line"], call["callee"]),
                                          self.conditions.over(caller).values)
            self.bodies.local_call(call, {}, hop, self.depth, kind="launcher", passed=passed)
            return

    def device_calls(self, d: dict, hop: Hop) -> None:
        """What a __global__ kernel or a __device__ function calls of the __device__ functions (call_links): a
        `device_call` hop each (scatter_add's kernel -> fastAtomicAdd, KernelUtils.cuh), followed through their own
        calls; each function once per trace, later `(shown above)`; the overloads of one name as one hop at the
        first; at most MAX_DEVICE_CALLS per body, said where it cuts (--limit 0 lifts both)."""
        guards, found = self.conditions.over(d), {}
        for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
            if call["is_method"] or guards.at(call["line"]).off:
                continue
            for ln in q.call_targets(self.con, call["file"], call["qualifier"], call["callee"],
                                     call.get("template_args")):
                # the overloads and specialisations of one name (TopKTypeConfig<T>::convert, eight of them): one
                # hop, at the first, which says how many the call may reach (--limit 0: each)
                if ln["device_function"] and ln["id"] != d.get("id"):
                    key = (call["qualifier"], call["callee"], ln["id"] if self.trace.limit == 0 else None)
                    found.setdefault(key, (call, ln))
        for call, ln in self.b.capped(list(found.values()), MAX_DEVICE_CALLS, "__device__ functions called", hop):
            if self.b.full():
                return
            target = q.symbol_by_id(self.con, ln["id"])
            many = ""
            if ln["overloads"] > 1 and self.trace.limit == 0:
                many = f" [one of {ln['overloads']} overloads the call may reach]"
            elif ln["overloads"] > 1:
                many = f" [the first of {ln['overloads']} overloads the call may reach; --limit 0 shows each]"
            h = self.b.add(hop, "cuda", "device_call", f"__device__ {target['qualified_name']}", target["file"],
                         target["line"], cpp_detail(target) + many)
            h.called_at = f"{call['file']}:{call['line']}"
            key = ("device", target["id"])
            if key in self.b.seen_cpp:
                self.b.repeat(h)
                continue
            self.b.seen_cpp.add(key)
            self.device_calls(target, h)

    def functor_body(self, call: dict, target: dict, hop: Hop, overloads: int) -> None:
        """A call that builds a functor object (`binary_internal::MulFunctor<opmath_t>()`, handed to
        opmath_symmetric_gpu_kernel_with_scalars; `BinaryOpListAlphaFunctor<...>()`, handed to multi_tensor_apply):
        the op's own body, whose __device__ operator() the kernel runs (the profiler's kernel name carries it as a
        template argument). A leaf: the kernel it runs in is reached through the launcher's own hop."""
        h = self.b.add(hop, "cuda", "op_body", target["qualified_name"], target["file"], target["line"],
                     f"the op's body: a functor object built at {call['file']}:{call['line']} "
                     f"(`{call['callee']}{call.get('template_args') or ''}(...)`) and handed on; the kernel runs its "
                     f"__device__ operator()")
        h.called_at = f"{call['file']}:{call['line']}"
        if overloads > 1:
            h.detail += f" [one of {overloads} definitions the call may build]"
            h.found = Found.OVERLOADS
        if target["link_condition"]:
            self.bodies.link_condition(h, target["link_condition"], target["file"])
        for op in q.device_operators(self.con, target["qualified_name"], target["file"]):
            if ("device", op["id"]) not in self.b.seen_cpp:  # what the body calls on the device
                self.b.seen_cpp.add(("device", op["id"]))
                self.device_calls(op, h)


_LAMBDA_REACH = 200  # lines above a launch searched for the lambda whose parameter it launches


def _parameter_of(lines: list[str] | None, line: int, name: str) -> int | None:
    """The line of the lambda above `line` that takes `name` as a parameter (`[&](auto _k, auto kernel_fn) {`),
    or None."""
    if not lines:
        return None
    pattern = re.compile(r"\[[^\]]*\]\s*\(([^()]*)\)")
    for i in range(min(line, len(lines)) - 1, max(-1, line - 1 - _LAMBDA_REACH), -1):
        for m in pattern.finditer(lines[i]):
            if re.search(rf"\b{re.escape(name)}\s*(?:,|$)", m.group(1).strip()):
                return i + 1
    return None
