"""The YAML layer of a walk: a native function's entry, its structured delegate and meta function, its dispatch rows
for the device, the C++ definitions their kernel names denote (or a ufunc's generated kernel), and the derivatives of
ops a composite kernel calls."""
from __future__ import annotations

import re

from .. import facts as q
from ...pytorch.devices import IMPLICIT_KEYS, runs_on
from ..call import schema_parameters
from ..conditions import MAYBE_STRIDED
from ..sequence import outputs_sized_at, strided_operands_at
from ..model import COMPOSITE_CALLEE, Found, Hop
from .step import Step

# calls that make a kernel a declared-but-unimplemented stand-in (NamedTensor.cpp's Dimname overloads)
NOT_IMPLEMENTED = frozenset({"reportNYIDimnameOverload"})


class OpWalk(Step):
    def __init__(self, root):
        super().__init__(root)
        self.autograd_shown: set[int] = set()  # entries whose backward formula is shown

    def native(self, entry: dict, parent: Hop | None, depth: int | None = None) -> Hop:
        depth = self.depth if depth is None else depth
        hop = self.b.add(parent, "native", "entry", f"aten::{entry['full_name']}", entry["file"], entry["line"],
                       entry["schema"], schema=entry["schema"], op=entry["full_name"])
        if entry["id"] in self.b.seen_native:
            if entry["id"] in self.b.useful_native or any(
                    a.kind == "entry" and a.name == hop.name for a in self.trace.path(hop)[:-1]):
                # reached again: what it leads to is shown above (or is being shown: roll_cuda's roll_common calls
                # at::roll again, for the flattened tensor)
                self.b.live.add(hop.id)
            return self.b.repeat(hop)
        self.b.seen_native.add(entry["id"])
        if not entry["structured_delegate"]:
            self.dispatch(entry, hop, depth)
            return hop
        found = q.native_by_full_name(self.con, entry["structured_delegate"])
        if not found:
            self.b.add(hop, "native", "note", f"structured_delegate {entry['structured_delegate']} not found",
                     absent=True)
            return hop
        target = found[0]
        if entry.get("given"):  # what the call passes holds for the out= overload that has the kernels
            target = {**target, "given": entry["given"]}
        if entry.get("views"):  # and so do the views it passes (walk/sites.py passed_views)
            target = {**target, "views": entry["views"]}
        sized = self.outputs_like(entry, target)
        if sized:  # its outputs, allocated by the meta function with an input's sizes (conditions.py reads them)
            target = {**target, "outputs_like": sized}
        delegate = self.b.add(hop, "native", "structured_delegate", f"aten::{target['full_name']}", target["file"],
                            target["line"], f"structured_delegate: {target['full_name']} holds the kernels")
        self.meta(entry, delegate)
        if target["id"] in self.b.useful_native:  # matmul's tensor1.mm(...) after its at::mm_out(...): mm.out led
            self.b.live.add(delegate.id)  # to device code above; the call is kept, its kernels marked shown above
        self.b.seen_native.add(target["id"])
        self.dispatch(target, delegate, depth)
        return hop

    def meta(self, entry: dict, parent: Hop) -> None:
        """The structured kernel's meta function (TORCH_META_FUNC2(add, Tensor) for add.Tensor): shape checks and
        the output's allocation, run before the device kernel."""
        for d in self.meta_definitions(entry):
            hop = self.b.add(parent, "cpp", d["kind"], d["qualified_name"], d["file"], d["line"],
                           f"TORCH_META_FUNC of {entry['full_name']}: checks the inputs and sets up the output")
            views = self.strided_operands(entry)
            if views:
                hop.detail += (f" [builds its TensorIterator from strided views ({', '.join(views[:4])}): the op's "
                               f"`iter.is_contiguous()` reads false]")
            self.bodies.body_helpers(d, hop)

    def meta_definitions(self, entry: dict) -> list[dict]:
        """The structured kernel's meta function (TORCH_META_FUNC2(add, Tensor) for add.Tensor; an in-place op
        such as scatter_add_ or add_.Tensor has its functional op's)."""
        found = []
        # an out= kernel's meta function is the one of the op that delegates to it (glu.out: TORCH_META_FUNC(glu))
        for e in [entry, *(q.delegating_entries(self.con, entry["full_name"]) if entry.get("full_name") else ())]:
            base = e["name"]
            for op in dict.fromkeys((base, base.rstrip("_"))):
                found = found or q.meta_functions(self.con, f"{op}_{e['overload']}" if e["overload"] else op)
        return found[:1]

    def outputs_like(self, entry: dict, target: dict) -> dict[str, str]:
        """{out= argument of `target`: the Tensor argument whose sizes the structured op's meta function gives it}:
        sort.stable's TORCH_META_FUNC2 (Sorting.cpp:73) writes `set_output_raw_strided(0, self.sizes(), ...)` and
        `(1, self.sizes(), ...)`, so sort.values_stable's `values` and `indices` have self's sizes (the kernel's
        `sortKeyValueInplace(values, ...)` then reads `key.size(dim)`)."""
        outs = [name for name, _, _, kind in schema_parameters(target["schema"]) if "!" in kind]
        for d in self.meta_definitions(entry) if outs and self.trace.root else ():
            sized = outputs_sized_at(self.trace.root, d["file"], d["line"], d["end_line"]) if d.get("end_line") else ()
            found = {outs[i]: like for i, like in sized if i < len(outs)}
            return {out: like for out, like in found.items()
                    if any(like == name for name, _, _, _ in schema_parameters(entry["schema"]))}
        return {}

    def strided_operands(self, entry: dict) -> list[str]:
        """The operands of the iterator an op's meta function builds that are strided views (pytorch/views.py):
        glu's `firstHalf` and `secondHalf`, each `self.narrow(...)`. The op's bodies then read `iter.is_contiguous()`
        as false (conditions.STRIDED)."""
        for d in self.meta_definitions(entry):
            if self.trace.root and d.get("end_line"):
                return list(strided_operands_at(self.trace.root, d["file"], d["line"], d["end_line"]))
        return []

    def strided_inputs(self, entry: dict) -> list[str]:
        """The op's Tensor parameters a traced call gives a view that is not contiguous (`torch.add(x.t(), y)`:
        self), by name as values flow down the op stack (trace/call.py): its iterator is then strided too."""
        call = self.build.call
        return call.strided_arguments(entry["schema"]) if call is not None else []

    def dispatch(self, entry: dict, parent: Hop, depth: int) -> None:
        all_rows = q.dispatch_rows(self.con, entry["id"])
        chosen = q.rows_for_device(all_rows, self.device)
        for loop in q.ufunc_loops(self.con, entry["id"]):
            self.ufunc_loop(loop, parent)
        self.b.implicit.append(bool(chosen) and all(r["dispatch_key"] in IMPLICIT_KEYS for r in chosen))
        strided = self.strided_operands(entry) or self.strided_inputs(entry)
        if not strided and entry.get("views"):  # a fill/copy of a body's views (walk/sites.py written_views)
            strided = [MAYBE_STRIDED if entry["views"] == "maybe" else "(operands)"]
        self.b.defaults.append({**entry, "strided": strided} if strided else entry)
        try:
            self.dispatch_rows(entry, parent, depth, all_rows, chosen)
        finally:
            self.b.implicit.pop()
            self.b.defaults.pop()

    def dispatch_rows(self, entry: dict, parent: Hop, depth: int, all_rows: list[dict], chosen: list[dict]) -> None:
        if not chosen:
            keys = ", ".join(sorted({r["dispatch_key"] for r in all_rows})) or "none"
            self.b.add(parent, "dispatch", "note", f"no {self.device.upper()} kernel for {entry['full_name']} "
                     f"(dispatch keys: {keys})", absent=True)
            return
        by_kernel: dict[str, list[str]] = {}
        for r in chosen:
            by_kernel.setdefault(r["kernel"], []).append(r["dispatch_key"])
        for kernel, keys in by_kernel.items():
            row = next(r for r in chosen if r["kernel"] == kernel)
            implicit = " (implicit: no dispatch: entry)" if row["implicit"] else ""
            hop = self.b.add(parent, "dispatch", ", ".join(keys), f"{', '.join(keys)}: {kernel}", row["file"],
                           row["line"], f"dispatch {', '.join(keys)}: {kernel}{implicit}")
            if kernel.startswith("ufunc_"):
                cg = self.b.add(hop, "codegen", "ufunc", f"{kernel} is generated by torchgen's ufunc codegen "
                              "(torchgen/dest/ufunc.py) from the ufunc_inner_loop entries above")
                self.ufunc_codegen(kernel.rsplit("_", 1)[-1].lower(), cg)
                continue
            # rows "CPU, CUDA: k" share a kernel name: the CUDA row's link prefers the definition in CUDA code
            linked = next((r for r in chosen if r["kernel"] == kernel and r["dispatch_key"] == "CUDA"), row)
            self.kernel_definitions(linked, kernel, hop, depth)

    def kernel_definitions(self, row: dict, kernel: str, parent: Hop, depth: int) -> None:
        """The definitions a dispatch row's kernel name denotes (op_kernel_links: chosen ones walked)."""
        links = q.kernel_links(self.con, row["id"])
        chosen = [ln for ln in links if ln["chosen"] and ln["symbol_id"] is not None]
        elsewhere = [ln for ln in chosen if not runs_on(ln["def_file"], self.device)]
        if elsewhere and len(elsewhere) == len(chosen):
            where = ", ".join(f"{ln['def_file']}:{ln['def_line']}" for ln in elsewhere[:2])
            self.b.add(parent, "cpp", "note", f"{kernel} is defined only in another platform's code ({where}): not "
                     f"run on {self.device.upper()}", absent=True)
            return
        chosen = [ln for ln in chosen if ln not in elsewhere]
        if not chosen:
            if self.legacy_kernel(kernel, parent, depth):
                return
            self.b.add(parent, "cpp", "note", f"no C++ definition of {kernel} found by opindex (none in its index: it may "
                     "be written by a macro opindex does not expand, e.g. one defined in another file, or generated "
                     "at build time)", absent=True)
            return
        rest = [ln for ln in links if not ln["chosen"]]
        hop = None
        for ln in chosen:
            d = q.symbol_by_id(self.con, ln["symbol_id"])
            raises = self.only_raises(d)
            if raises:  # sort(Tensor, Dimname): a named-tensor overload PyTorch declares but does not implement
                self.b.add(parent, "cpp", "raises", f"{kernel} ({d['file']}:{d['line']}) only raises ({raises}): this "
                         f"overload runs no kernel", d["file"], d["line"], absent=True)
                continue
            hop = self.bodies.cpp(d, parent, depth)
            if len(chosen) > 1:
                hop.detail += f" [one of {len(chosen)} C++ overloads of {kernel} in this file]"
                hop.found = Found.OVERLOADS
            if ln["condition"]:  # `#if !AT_CUDNN_ENABLED()` placeholders beside the real definition
                self.bodies.link_condition(hop, ln["condition"], d["file"])
        if rest and hop is not None:
            others = ", ".join(f"{ln['def_file']}:{ln['def_line']}" for ln in rest[:3])
            hop.detail += f" (other definitions of {kernel}: {others}{', ...' if len(rest) > 3 else ''})"

    def legacy_kernel(self, kernel: str, parent: Hop, depth: int) -> bool:
        """A legacy kernel the build generates (1.4's legacy::cuda::_th_sort, written into LegacyTHFunctionsCUDA.cpp
        from Declarations.cwrap): its declaration, then the generic TH/THC/THNN function it calls, walked."""
        links = q.legacy_kernel_links(self.con, kernel)
        if not links:
            return False
        first = links[0]
        hop = self.b.add(parent, "cpp", "legacy_declaration", f"{kernel} (generated at build time)",
                       first["decl_file"], first["decl_line"],
                       f"no source definition: the build writes {kernel} from the declaration {first['declaration']} "
                       f"here; it calls {', '.join(dict.fromkeys(ln['cname'] for ln in links))} for each dtype")
        for ln in links:
            if ln["symbol_id"] is not None:
                self.bodies.cpp(q.symbol_by_id(self.con, ln["symbol_id"]), hop, depth, kind="generated_call")
        return True

    def ufunc_codegen(self, key: str, parent: Hop) -> None:
        """The torchgen def that writes a ufunc kernel for a key (compute_ufunc_cuda), the launcher calls the C++ it
        writes makes (generated_launches), and the launch machinery they go through."""
        for gen in q.python_defs_named(self.con, f"compute_ufunc_{key}"):
            gh = self.b.add(parent, "codegen", "generator", gen["qualified_name"], gen["file"], gen["line"],
                          f"writes the {key.upper()} kernel of each ufunc op at build time")
            for g in q.generated_launches(self.con, gen):
                lh = self.b.add(gh, "cuda", "tensor_iterator", g["launcher"], g["file"], g["line"],
                              f"tensor_iterator launch via {g['launcher']} in the generated code (written by "
                              f"{g['function']}); the op's body is the ufunc functor it is handed")
                for d in q.launcher_definitions(self.con, g["launcher"]):
                    if runs_on(d["file"], self.device):  # walked once; later a "(shown above)" hop
                        self.bodies.cpp(d, lh, self.depth, kind="launcher")

    def ufunc_loop(self, loop: dict, parent: Hop) -> None:
        defs = [s for s in q.symbols_named(self.con, loop["loop"]) if "/ufunc/" in s["file"]]
        if defs:
            d = defs[0]
            self.b.add(parent, "cpp", "ufunc_inner_loop", f"{loop['ufunc_key']}: {d['qualified_name']}", d["file"],
                     d["line"], f"ufunc_inner_loop {loop['ufunc_key']}: {loop['loop']} ({loop['dtypes'] or ''})")
        else:
            self.b.add(parent, "cpp", "ufunc_inner_loop", f"{loop['ufunc_key']}: {loop['loop']}", loop["file"],
                     loop["line"], "no definition found under native/ufunc/", absent=True)

    def composite(self, entry: dict) -> bool:
        """True when `device` runs this op through a Composite* kernel (no kernel of the device's own)."""
        if entry["structured_delegate"]:
            found = q.native_by_full_name(self.con, entry["structured_delegate"])
            entry = found[0] if found else entry
        rows = q.rows_for_device(q.dispatch_rows(self.con, entry["id"]), self.device)
        return bool(rows) and all(r["dispatch_key"] in q.COMPOSITE_KEYS for r in rows)

    def runs_here(self, entry: dict) -> bool:
        """False when the op has no kernel that runs on --device: no dispatch row for it (mkldnn_linear is
        MkldnnCPU only), or only definitions in another platform's code (mkldnn_convolution's in mkldnn/,
        miopen_batch_norm's in miopen/). An op with no dispatch rows at all is composite: it runs anywhere."""
        if self.device == "all":
            return True
        if entry["structured_delegate"]:
            found = q.native_by_full_name(self.con, entry["structured_delegate"])
            entry = found[0] if found else entry
        dispatch = q.dispatch_rows(self.con, entry["id"])
        if not dispatch:
            return True
        for row in q.rows_for_device(dispatch, self.device):
            links = [ln for ln in q.kernel_links(self.con, row["id"]) if ln["chosen"]]
            if not links or any(ln["def_file"] is None or runs_on(ln["def_file"], self.device) for ln in links):
                return True
        return False

    def autograd_of(self, entry: dict, parent: Hop) -> None:
        """The derivatives.yaml formulas of an op a CompositeImplicitAutograd kernel calls: where its backward is."""
        ders = q.derivatives_of(self.con, entry)
        if not ders or entry["id"] in self.autograd_shown:
            return
        self.autograd_shown.add(entry["id"])
        for der in ders:
            hop = self.b.add(parent, "backward", "derivative", f"derivatives.yaml: {der['full_name']}", der["file"],
                           der["line"], f"{der['schema']} ({COMPOSITE_CALLEE})", found=Found.COMPOSITE_CALLEE)
            for f in q.formulas(self.con, der["id"]):
                if not f["is_forward"]:
                    fh = self.b.add(hop, "backward", "formula", f"{f['inputs']}: {f['formula']}", f["file"], f["line"],
                                  "grad formula")
                    if self.backward:  # --backward: the ops the formula calls, as for an op's own formulas
                        for op in self.b.capped(backward_ops(self.con, f["formula"]), 3, "ops of the formula", fh):
                            self.native(op, fh, 0)

    def only_raises(self, d: dict) -> str | None:
        """The not-implemented call a definition consists of, if that is all it calls."""
        callees = {c["callee"] for c in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d))}
        return next(iter(callees)) if len(callees) == 1 and callees <= NOT_IMPLEMENTED else None


def backward_ops(con, formula: str) -> list[dict]:
    out, seen = [], set()
    for name in re.findall(r"\b([A-Za-z_]\w*)\s*\(", formula):
        if name in seen:
            continue
        seen.add(name)
        found = q.native_for_cpp_api(con, name)
        if found:
            out.append(found[0])
    return out
