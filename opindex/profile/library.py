"""Library kernels (cuBLAS, cuDNN, cub ...): from the op the profile names, down through its kernels, the stubs
they call (to their CUDA registrations), the helpers and the ops they call, to the first functions with a call into
that library. Handle, descriptor and workspace calls are on such paths too; they are not where a kernel runs."""
from __future__ import annotations

import re

from ..trace import facts
from .chrome import KernelGroup
from .index import CLASS_KINDS, DEVICE, DOWN_DEPTH, _other_device, _hop, _last, _loc, _profile_op_list
from .kernel_name import KernelName

_SETUP_CALL = re.compile(r"^(cudnn|cublas\w*|cusparse|cusolver\w*|cufft)(Get|Set|Create|Destroy)|Descriptor|"
                         r"WorkspaceSize|Handle|Stream$|Builder$|_plans?$")


class LibraryWalk:
    """Mixin for IndexFacts: the top-down walk from an op to its library calls."""

    def _library(self, g: KernelGroup, kn: KernelName, row: dict) -> None:
        chain = row["chain"]
        libs = {kn.library}
        if kn.namespace_parts[:1] == ["cutlass"]:
            libs = {"cublas", "cudnn"}        # CUTLASS kernels ship inside both; the op's calls decide
        row["status"] = "library"
        ops = _profile_op_list(g)
        if not ops:
            row["note"] = f"a {kn.library} kernel; give a Chrome trace (with its ops) to find the call sites"
            return
        for op in ops:
            hits = self._down_to_library(op, libs)
            if hits:
                lib_rows, path = hits
                lib = lib_rows[0][3]
                row["library"] = lib
                row["library_calls"] = [f"{_loc(f, l)} {fn} ({c})" for c, f, l, lib_, fn in lib_rows[:5]]
                setup_only = all(_SETUP_CALL.search(_last(h[4])) for h in lib_rows)
                # a handle or descriptor call (cudnnSetStream) is on the path but is not where the kernel runs: the
                # answer names it, and does not count it as the kernel's source location
                row["attributed"] = not setup_only
                row["status"] = "library" if not setup_only else "library (setup calls only)"
                # bottom-up like every chain: the library call, the functions above it, the dispatch row, the op
                c, f, l, lib_, fn = lib_rows[0]
                chain.append(_hop("library", lib, fn, f, l, f"in {c}"))
                for h in reversed(path):
                    chain.append(_hop(*h))
                disp = [h for h in path if h[0] == "dispatch"]
                if disp:
                    d = disp[0]
                    row["dispatch"] = f"{d[2]} {d[5]}"
                    row["native_function"] = d[2]
                    nf = self._ask(facts.native_by_full_name, d[2])
                    if nf:
                        chain.append(_hop("native", "native function", f"aten::{nf[0]['full_name']}", nf[0]["file"],
                                          nf[0]["line"], ""))
                same = [h for h in lib_rows if h[0] == c]
                if setup_only:
                    row["note"] = (f"a {lib} kernel, reached from {op}; the index records only handle/descriptor "
                                   f"{lib} calls on that path (the call that runs it is not one the index "
                                   f"classifies, e.g. a method of a cudnn_frontend graph)")
                    return
                row["note"] = f"a {lib} kernel, reached from {op}" + (
                    f"; {len(same)} {lib} calls in {c} (which one runs depends on build flags and arguments)"
                    if len(same) > 1 else "")
                return
        row["note"] = (f"a {'/'.join(sorted(libs))} kernel; no {'/'.join(sorted(libs))} call found below "
                       f"{', '.join(ops)}")

    def _down_to_library(self, op: str, libs: set[str]):
        """Breadth-first from the op's kernels through calls, stub calls (to their CUDA registrations) and
        at::op calls, to the first functions with a call into one of `libs`."""
        key = ("down", op, tuple(sorted(libs)))
        if key in self._cache:
            return self._cache[key]
        parent: dict[str, tuple | None] = {}
        frontier = []
        for fn, dkey, kernel, file, line, dispatch_id in self._op_kernels(op):
            for qn, kf, kl in self._kernel_defs(dispatch_id)[:2]:
                if qn not in parent:
                    parent[qn] = (None, [("dispatch", "dispatch", fn, file, line, f"{dkey}: {kernel}"),
                                         ("cpp", "op kernel", qn, kf, kl, "")])
                    frontier.append(qn)
        result = fallback = None
        for depth in range(DOWN_DEPTH):
            hits = []
            for f in frontier:
                hits += [(h["caller"], h["file"], h["line"], h["library"], h["function"])
                         for h in self._ask(facts.library_calls_of, f, tuple(sorted(libs)))]
                if "cudnn" in libs:
                    # cuDNN's graph API runs its kernels from a method of the graph object (mha_graph->execute(...)
                    # in cudnn/MHA.cpp), a call the library_calls table does not classify
                    hits += [(c["caller"], c["file"], c["line"], "cudnn",
                              f"cudnn_frontend graph {c['qualifier']}->execute")
                             for c in sorted(self._ask(facts.calls_in, f), key=lambda c: c["line"])
                             if c["callee"] == "execute" and c["is_method"] and "cudnn/" in c["file"]]
            # a handle/descriptor/workspace call (cudnnSetStream in getCudnnHandle) is not where the kernel runs:
            # keep looking below for the compute call, and fall back to the setup call only if none is found
            # a call site the build does not compile (`#if defined(USE_ROCM)` in Blas.cpp) runs nothing
            built = [h for h in hits if self._built(h[1], h[2])]
            hits = built or hits
            compute = [h for h in hits if not _SETUP_CALL.search(_last(h[4]))]
            if compute:
                # the calls of the first function reached first, in source order; which one runs depends on build
                # flags and arguments (gemm_and_bias for addmm with a bias, gemm otherwise), so all are listed
                first = compute[0][0]
                compute.sort(key=lambda h: (h[0] != first, h[1], h[2]))
                result = (compute, self._path(parent, compute[0][0]))
                break
            if hits and fallback is None:
                fallback = (hits, self._path(parent, hits[0][0]))
            nxt = []
            for f in frontier:
                for qn, edge in self._steps_down(f):
                    if qn not in parent:
                        parent[qn] = (f, edge)
                        nxt.append(qn)
            frontier = nxt[:400]
            if not frontier:
                break
        result = result or fallback
        self._cache[key] = result
        return result

    def _steps_down(self, f: str) -> list[tuple[str, list[tuple]]]:
        """The functions one step below f, each with the hops that lead there: the CUDA kernels its stub calls
        (and the stubs it passes to helpers) are registered as, the op kernels of its at::op calls, the definitions
        of its other callees (a functor built and called in one go, `UniqueCub<scalar_t>{}(...)`: its operator())."""
        out = []
        stubs = [(s["stub"], s["device_arg"]) for s in self._ask(facts.stub_calls_by, f)]
        stubs += [(st, "") for st in self._stubs_passed_in(f)]
        for stub, dev in stubs:
            if _other_device(dev):
                continue
            for rid, rf, rl in [(r["id"], r["file"], r["line"]) for r in self._ask(
                    facts.registrations, stub, DEVICE) if r["kernel"] is not None]:
                out += [(qn, [("registration", "REGISTER_DISPATCH", stub, rf, rl, "CUDA"),
                              ("cpp", "registered kernel", qn, kf, kl, "")])
                        for qn, kf, kl in self._registered_defs(rid)]
        for callee, qual in [(c["callee"], c["qualifier"]) for c in self._ask(facts.calls_in, f)]:
            if qual == "at" and self._op_kernels(callee):
                for fn, dkey, kernel, file, line, dispatch_id in self._op_kernels(callee)[:1]:
                    out += [(qn, [("dispatch", "calls op", fn, file, line, f"{dkey}: {kernel}"),
                                  ("cpp", "op kernel", qn, kf, kl, "")])
                            for qn, kf, kl in self._kernel_defs(dispatch_id)[:1]]
                continue
            targets = self._gpu_defs(callee)
            if not targets:
                classes = [s["qualified_name"] for s in self._ask(facts.symbols_named, callee)
                           if s["kind"] in CLASS_KINDS][:3]
                targets = [(r["qualified_name"], r["file"], r["line"]) for cls in classes
                           for r in self._ask(facts.symbols_qualified, cls + "::operator()")]
            if targets and len(targets) <= 3:       # else unknown, or too generic a name to follow
                out += [(qn, [("cpp", "calls", qn, kf, kl, "")]) for qn, kf, kl, *_ in targets]
        return out

    @staticmethod
    def _path(parent, node) -> list[tuple]:
        steps = []
        while node is not None and parent.get(node):
            prev, hops = parent[node]
            steps = hops + steps
            node = prev
        return steps
