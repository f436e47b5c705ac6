"""The stub layer of a walk: a dispatch stub's call, its declaration, its REGISTER_*DISPATCH registrations for the
device and the kernels they register."""
from __future__ import annotations


from .. import facts as q
from ...extract.native_yaml import UFUNC_CODEGEN
from ...pytorch.devices import runs_on
from ...pytorch.stubs import is_stub_call
from .. import iterators
from ..model import Found, Hop
from ..sequence import file_lines
from .step import Step


PASSED_THROUGH = 3  # helpers a stub parameter is followed up through (passed_stub)


class StubWalk(Step):
    def stub(self, s: dict, parent: Hop, depth: int, d: dict | None = None) -> None:
        passed = self.passed_stub(s, parent)
        if passed:  # a helper called with the stub as an argument: argmax_argmin_impl(..., argmax_stub)
            s = {**s, "stub": passed, "device_arg": f"{s['device_arg'] or ''}; {s['stub']} = {passed} at the call"}
        elif d is not None and not is_stub_call(s["stub"], {r["stub"] for r in q.stub_declarations(
                self.con, s["stub"])}, d.get("signature")):
            return  # `Device(kCUDA, current_device())` in check_device: a constructor, not a stub
        hop = self.b.add(parent, "stub", "stub_call", s["stub"], s["file"], s["line"],
                       f"{s['stub']}({s['device_arg'] or ''}, ...)")
        if s["stub"] in self.b.seen_stub:
            self.b.repeats.add(hop.id)
            hop.detail += " (shown above)"
            hop.shown_above = True
            first = self.b.stub_hops.get(s["stub"])
            if first is not None and first < hop.id and self.trace.hops[first].name == s["stub"]:
                hop.repeats = first  # a call at another line: the same stub, walked at its first call
            return
        self.b.seen_stub.add(s["stub"])
        self.b.stub_hops[s["stub"]] = hop.id
        decl = [r for r in q.stub_declarations(self.con, s["stub"]) if r["action"] == "declare"]
        if decl:
            hop.detail += f"; declared {decl[0]['file']}:{decl[0]['line']}"
        regs = q.registrations(self.con, s["stub"], self.device)
        # the REGISTER_DISPATCH ufunc codegen writes (dispatch_registrations, from_macro ufunc_inner_loop) has no
        # source: walked as the op's inner loops below
        codegen = [r for r in regs if r["from_macro"] == UFUNC_CODEGEN]
        regs = [r for r in regs if r not in codegen]
        foreign = [r for r in regs if not runs_on(r["file"], self.device)]  # miopen/ registers as CUDA too
        regs = [r for r in regs if r not in foreign]
        if not regs and foreign:
            self.b.add(hop, "registration", "note", f"stub {s['stub']} is registered for {self.device.upper()} only "
                     f"in another platform's code ({foreign[0]['file']}:{foreign[0]['line']})", absent=True)
            return
        loops = q.ufunc_stub_loops(self.con, s["stub"]) if not regs and (self.device == "cuda" or codegen) else []
        if loops:
            # sub_out calls add_stub: torchgen's ufunc codegen registers it (REGISTER_DISPATCH(add_stub, &add_kernel)
            # in the UfuncCUDA_add.cu it writes), with the same kernel as ufunc_add_CUDA: the op's inner loops
            key = "cpu" if self.device == "cpu" else "cuda"
            writer = "compute_ufunc_cpu_kernel" if key == "cpu" else "compute_ufunc_cuda"
            cg = self.b.add(hop, "registration", "ufunc", f"{key.upper()}: {s['stub']} is registered by torchgen's "
                          f"ufunc codegen ({writer} writes REGISTER_DISPATCH({s['stub']}, ...) at build time)",
                          loops[0]["file"], loops[0]["line"])
            for loop in loops:
                self.ops.ufunc_loop(loop, cg)
            self.ops.ufunc_codegen(key, cg)
            return
        if not regs:
            others = sorted({r["device"] for r in q.registrations(self.con, s["stub"], "all")})
            self.b.add(hop, "registration", "note", f"no {self.device.upper()} registration of stub {s['stub']} found "
                     f"by opindex" + (f" (registered for: {', '.join(others)})" if others else
                                      " (a registration written by a macro of another file is not indexed)"),
                     absent=True)
            return
        shown = set()
        passed = self.passed_iterators(s, d)
        for r in regs:
            if (r["kernel"], r["cpu_capability"]) in shown:
                continue
            shown.add((r["kernel"], r["cpu_capability"]))
            self.registration(r, hop, depth, passed)

    def passed_iterators(self, s: dict, d: dict | None) -> dict[int, iterators.Operands]:
        """The iterators a stub call passes whose operands the trace knows, by the kernel parameter's place (the
        stub's device argument aside): a structured impl's `*this`, the op's own iterator (trace/iterators.py), or
        a local iterator its body made."""
        args = q.arguments_of_call(self.con, s["file"], s["line"], s["stub"]) if d is not None else None
        if not args:
            return {}
        known = self.conditions.over(d).values
        if "*this" in args and self.b.defaults:  # a structured impl hands on the op's own iterator (a name trace's
            # tensors are of the traced device): as its meta function builds it, else by the schema
            unknown = None if self.build.call else False
            own = None
            for meta in self.ops.meta_definitions(self.b.defaults[-1]) if self.trace.root else ():
                lines = file_lines(self.trace.root, meta["file"]) if meta.get("end_line") else None
                if lines:
                    text = "\n".join(lines[meta["line"] - 1:meta["end_line"]])
                    own = iterators.built(text, known, unknown)
                    if own is None:  # a meta function a macro writes (CREATE_COMPARISON_SCALAR_TENSOR_META_FUNC(gt);)
                        body = iterators.macro_meta_body(text, lambda name, f=meta["file"]: q.function_macro(
                            self.con, name, f), meta["name"])
                        own = iterators.built(body, known, unknown) if body else None
            if own is None:
                own = iterators.structured(self.b.defaults[-1]["schema"], known, unknown)
            known = {**known, "*this": own} if own is not None else known
        return iterators.passed_iterators(args, known, skip=1)

    def passed_stub(self, s: dict, parent: Hop) -> str | None:
        """The declared stub a helper's stub parameter stands for at the call that reached it (stub_arguments);
        through helpers that pass their own parameter on by the same name (abs_out passes abs_stub to
        unary_op_impl_with_complex_to_float_out, which passes `stub` on to unary_op_impl_out), up to
        PASSED_THROUGH calls."""
        hop = parent
        for _ in range(PASSED_THROUGH):
            if hop is None or hop.id not in self.b.call_sites:
                return None
            file, line = self.b.call_sites[hop.id]
            found = q.stub_argument(self.con, file, line, s["stub"])
            if found:
                return found["stub"]
            callee = hop.name.rpartition("::")[2]
            if s["stub"] not in (q.arguments_of_call(self.con, file, line, callee) or ()):
                return None
            hop = self.trace.hops[hop.parent] if hop.parent is not None else None
        return None

    def registration(self, r: dict, parent: Hop, depth: int, passed: dict | None = None) -> None:
        cap = f" [{r['cpu_capability']}]" if r.get("cpu_capability") else ""
        macro = f" (expanded from {r['from_macro']})" if r.get("from_macro") else ""
        if r["kernel"] is None:
            self.b.add(parent, "registration", r["macro"], f"{r['device']}: no kernel", r["file"], r["line"],
                     f"{r['macro']}({r['stub']}): no {r['device']} implementation{macro}", absent=True)
            return
        hop = self.b.add(parent, "registration", r["macro"], f"{r['device']}{cap}: {r['kernel']}", r["file"],
                       r["line"], f"{r['macro']}({r['stub']}, {r['kernel']}){macro}")
        link = q.registration_link(self.con, r["id"])
        if link is None or link["symbol_id"] is None:
            self.b.add(hop, "cpp", "note", f"no definition of {r['kernel']} found", absent=True)
            return
        d = q.symbol_by_id(self.con, link["symbol_id"])
        if not runs_on(d["file"], self.device):
            hop.detail += f" (not run on {self.device.upper()}: {d['file']} is another platform's code)"
            return
        mark = len(self.trace.hops)
        self.bodies.cpp(d, hop, depth, kind="registered_kernel", passed=passed)
        if r["device"] != "CPU" and not any(h.layer in ("cuda", "library") for h in self.trace.hops[mark:]):
            self.launches_in_file(d, hop)

    def launches_in_file(self, d: dict, parent: Hop) -> None:
        """A device kernel that reaches its launch through a functor or lambda (`sum_functor<T>{}(iter)`) has no
        call the index can follow: point at the launches of its own file, the ones named like it first."""
        stem = d["name"].split("_kernel")[0].split("_")[0]
        found = q.launches_in_file(self.con, d["file"], stem)
        for launch in found:
            first = len(self.trace.hops)
            self.launches.launch(launch, parent)
            self.trace.hops[first].detail += \
                f" (in {launch['caller'] or 'file scope'}, same file: reached through a functor or lambda)"
            self.trace.hops[first].found = Found.SAME_FILE
