"""Attribute each profiled kernel to the indexed checkout, with the index's lookups (opindex/trace/facts.py).

For a `__global__` kernel: its definition (same name AND a compatible namespace, never a look-alike), its <<<>>>
launch sites, then the op body named by its template arguments (a functor's struct and the function that builds it;
a lambda's enclosing function), and bottom-up from that function: the stub registration that names it, the stub,
the op kernel that calls the stub, the dispatch row and the native function. A kernel shared by hundreds of ops
(vectorized_elementwise_kernel) is answered only through its own template arguments, never by walking up from the
shared launcher (that would list every elementwise op).

For a library kernel (cuBLAS, cuDNN, ...): the library, and top-down from the op the profile names (aten::mm), the
library call sites that op reaches (addmm_out_cuda_impl's at::cuda::blas::gemm).

The walks are breadth-first with small depth and fan-out bounds, and every lookup is cached: a profile repeats the
same ops and helpers many times. The lookups are in index.py, the reading of checkout text in source.py, the walk
from an op down to library calls in library.py; this module holds the __global__ side and the walk up.
"""
from __future__ import annotations

import bisect
import re

from ..pytorch import jiterator
from ..pytorch.syntax import split_top_level
from ..trace import facts
from .chrome import KernelGroup
from .index import (ANON, CLASS_KINDS, DISPATCH_KEY_ORDER, FANOUT, FUNCTION_KINDS, UP_DEPTH, _UFUNC_FUNCTOR,
                    IndexFacts, REGISTRATION_DEVICE, _dedupe, _hop, _host_only, _last, _loc, _norm_op, _op_base,
                    _profile_op_list, _profile_ops, _scope, number_chain)
from .kernel_name import KernelName, parse_kernel_name
from .library import LibraryWalk
from .source import SourceText, _pasted_patterns


class Attributor(LibraryWalk, SourceText, IndexFacts):
    """One profile's kernels against one index: `attribute(group)` answers one kernel name."""

    def attribute(self, g: KernelGroup, kn: KernelName | None = None) -> dict:
        kn = kn or parse_kernel_name(g.name)
        row = {"kernel": g.name, "short": short_name(kn), "kind": g.kind if g.kind != "kernel" else kn.kind,
               "calls": g.calls, "gpu_us": round(g.total_us, 3), "share": g.share, "op": g.inner_op or g.op,
               "outer_op": g.op, "scope": g.scopes.most_common(1)[0][0] if g.scopes else None,
               "python": g.python.most_common(1)[0][0] if g.python else None,
               "module": g.modules.most_common(1)[0][0] if g.modules else None,
               "library": kn.library, "status": "", "attributed": False, "definition": None,
               "launch_sites": [], "body": None, "registration": None, "stub": None, "dispatch": None,
               "native_function": None, "library_calls": [], "chain": [], "note": ""}
        if kn.mangled:
            row["demangled"] = kn.demangled
        if row["kind"] in ("memcpy", "memset") or kn.kind == "runtime":
            row["status"] = "runtime"
            row["note"] = "a copy or fill by the CUDA runtime: no kernel source"
        elif kn.demangle_error:
            row["status"] = "unresolved"
            row["note"] = kn.demangle_error
        elif kn.kind == "generated":
            row["status"] = "generated"
            row["note"] = ("generated at run time by torch.compile (Inductor/Triton): no source kernel in the "
                           "checkout; its op is the compiled graph's")
        elif kn.kind == "library":
            self._library(g, kn, row)
        else:
            self._global(g, kn, row)
        number_chain(row["chain"])
        return row

    # -- __global__ kernels ---------------------------------------------------------------------------------------

    def _global(self, g: KernelGroup, kn: KernelName, row: dict) -> None:
        ns = kn.namespace_parts
        prim, alts, note = self.pick(kn.name, ns, ("global_kernel",))
        chain = row["chain"]
        if prim is None and self._jitted(g, kn, row):
            return
        if prim is None:
            others = self.defs(kn.name, ("global_kernel",))
            row["status"] = "not in this checkout"
            row["note"] = (f"no __global__ {kn.qualified_name} in this checkout" +
                           (f" (a kernel of that name exists in {', '.join(sorted({'::'.join(_scope(o[0])) or '::' for o in others}))}: "
                            f"another namespace, not this one)" if others else "") +
                           " - a kernel of another PyTorch version?")
            return
        row["definition"] = _loc(prim[1], prim[2])
        row["status"] = "attributed"
        row["attributed"] = True
        notes = [note] if note else []
        if alts:
            notes.append("also defined at " + ", ".join(_loc(a[1], a[2]) for a in alts[:3]))
        chain.append(_hop("cuda", "__global__", prim[0], prim[1], prim[2], kn.qualified_name))
        launches = self._launch_sites(kn, prim, alts)
        row["launch_sites"] = [f"{_loc(f, l)} ({c})" for c, f, l, *_ in launches[:5]]
        for c, f, l, targs, cfg in launches[:3]:
            chain.append(_hop("cuda", "launch", c, f, l, f"{kn.name}{targs or ''}<<<{cfg or ''}>>>"))
        if not launches:
            notes.append("no <<<>>> launch of it by name (launched through a function pointer or a launcher)")

        starts, body = self._body(kn, row, chain)
        if not kn.hints:
            # a kernel of its own: the functions that launch it are its op body
            starts = list(dict.fromkeys((c, f) for c, f, *_ in launches if c))
        if body == "ufunc":
            pass
        elif starts:
            self._up(starts, g, row, chain, kn.hints)
        elif row["op"]:
            self._op_down_context(g, row, chain)
        row["note"] = "; ".join(n for n in notes + ([row["note"]] if row["note"] else []) if n)

    def _jitted(self, g: KernelGroup, kn: KernelName, row: dict) -> bool:
        """A kernel the jiterator compiles at run time (`reduction_prod_kernel`, `exp_kernel_vectorized2_kernel`:
        pytorch/jiterator.py): no __global__ has its name, but the jitted launch whose name constant makes it is the
        op's body, walked up from as a __global__'s launches are. False when no jitted launch makes the name."""
        if kn.namespace_parts or not self.root:
            return False
        found = jiterator.launches_of(kn.name, self._ask(facts.jitted_launches),
                                      lambda f: (self._read(f) or "").splitlines() or None)
        if not found:
            return False
        chain = row["chain"]
        launch, line = found[0]
        row.update(definition=_loc(launch["file"], line), status="attributed", attributed=True)
        chain.append(_hop("cuda", "jitted", kn.name, launch["file"], line,
                          f"compiled at run time by the jiterator (NVRTC) from this name constant"))
        row["launch_sites"] = [f"{_loc(r['file'], r['line'])} ({r['caller']})" for r, _ in found[:5]]
        for r, _ in found[:3]:
            chain.append(_hop("cuda", "launch", r["caller"], r["file"], r["line"],
                              f"{r['kernel']}{r['template_args'] or ''}(...)"))
        notes = ["a jitted kernel: " + ("; ".join(f"{_loc(r['file'], r['line'])}" for r, _ in found[1:4]) +
                                        " launch it too" if len(found) > 1 else "one launch makes it")]
        starts = list(dict.fromkeys((r["caller"], r["file"]) for r, _ in found if r["caller"]))
        if starts:
            self._up(starts, g, row, chain)
        elif row["op"]:
            self._op_down_context(g, row, chain)
        row["note"] = "; ".join(n for n in notes + ([row["note"]] if row["note"] else []) if n)
        return True

    def _launch_sites(self, kn: KernelName, prim, alts) -> list[tuple]:
        rows = [(r["caller"], r["file"], r["line"], r["template_args"], r["config"])
                for r in self._ask(facts.launches_of, kn.name) if r["kind"] == "chevron"]
        alt_files = {a[1] for a in alts} - {prim[1]}
        rows = [r for r in rows if r[1] not in alt_files and not _host_only(r[1])]
        # launches whose literal template arguments contradict the profile's (<4, ...> vs <2, ...>) are not it
        narrowed = [r for r in rows if _targs_agree(r[3], kn.template_args)]
        return narrowed or rows or self._text_launches(kn, prim)

    def _text_launches(self, kn: KernelName, prim) -> list[tuple]:
        """Launches the index did not record (a `k<...><<<...>>>` inside a #define, such as PersistentSoftmax.cuh's
        LAUNCH_SOFTMAX_WARP_FORWARD): looked for in the definition's own file, with the enclosing function."""
        text = self._read(prim[1]) if self.root else None
        if not text:
            return []
        out = []
        pat = re.compile(r"\b" + re.escape(kn.name) + r"\s*(<[^;{}]*?>)?[\s\\]*<<<([^;]*?)>>>", re.S)
        for m in pat.finditer(text):
            line = bisect.bisect_right(self._line_starts(prim[1], text), m.start())
            enc = self._enclosing(prim[1], line)
            out.append((enc[0] if enc else "", prim[1], line, m.group(1), " ".join(m.group(2).split())))
        return out

    def _body(self, kn: KernelName, row: dict, chain: list) -> tuple[list[str], str | None]:
        """The op body named by the template arguments: returns the functions to walk up from."""
        starts: list[tuple[str, str]] = []     # (function, its file): helpers of one name live in many files
        for lam in kn.lambdas:
            ns, name = [p for p in lam.split("::")[:-1] if p != ANON], _last(lam)
            prim, alts, note = self.pick(name, ns, FUNCTION_KINDS)
            if prim is None:
                continue
            row["body"] = {"kind": "lambda", "name": lam, "definition": _loc(prim[1], prim[2]), "function": prim[0]}
            chain.append(_hop("cpp", "op body", prim[0], prim[1], prim[2], f"the lambda inside {name}"))
            starts.append((prim[0], prim[1]))
            return starts, "lambda"
        # Every functor with a definition is walked up from (a multi_tensor_apply kernel names the list functor
        # and the op's own functor: BinaryOpScalarFunctor + std::multiplies, UnaryOpFunctor + Sqrt); the body shown
        # is the innermost one, the op's math (Sqrt), unless only the outer one is defined here.
        found = []
        for fun in kn.functors:
            ns, name = [p for p in fun.split("::")[:-1] if p != ANON], _last(fun)
            if ns == ["std"]:
                continue
            prim, alts, note = self.pick(name, ns, CLASS_KINDS)
            if prim is None:
                m = _UFUNC_FUNCTOR.match(name)
                if m and not found and self._ufunc(m.group(1), fun, row, chain):
                    return [], "ufunc"
                continue
            found.append((fun, name, prim, self._users(name, prim)))
        if not found:
            return starts, None
        fun, name, prim, users = found[-1]
        row["body"] = {"kind": "functor", "name": fun, "definition": _loc(prim[1], prim[2]),
                       "function": users[0][0] if users else None,
                       "function_at": _loc(users[0][1], users[0][2]) if users else None,
                       "functors": [f[0] for f in found]}
        for ofun, oname, oprim, ousers in found[:-1]:
            chain.append(_hop("cpp", "functor", oprim[0], oprim[1], oprim[2], f"functor {oname}"))
        chain.append(_hop("cpp", "op body", prim[0], prim[1], prim[2], f"functor {name}"))
        for u in users[:1]:
            chain.append(_hop("cpp", "uses functor", u[0], u[1], u[2], f"{name} is built here"))
        # the functions that build every one of the functors (lerp with a scalar weight builds TernaryOpScalarFunctor
        # and LerpFunctor; the list-weight overload only LerpFunctor) are the op body; else any that builds one
        sets = [{(u[0], u[1]) for u in f[3]} for f in found if f[3]]
        both = set.intersection(*sets) if len(sets) > 1 else set()
        for f in reversed(found):
            starts += [(u[0], u[1]) for u in f[3] if (u[0], u[1]) not in starts and (not both or (u[0], u[1]) in both)]
        return starts, "functor"

    def _users(self, name: str, prim) -> list[tuple]:
        """Functions that build the functor: constructor calls (calls rows), else the functions of CUDA files whose
        text names it (brace-initialized functors, `MeanOps<...>{factor}`, are not calls)."""
        users = [(c, f, l) for c, f, l in self.callers(name) if not _host_only(f) and c != prim[0]
                 and not c.startswith(prim[0] + "::")]
        if users:
            return _dedupe(users)
        return self._text_users(name)

    def _ufunc(self, op: str, functor: str, row: dict, chain: list) -> bool:
        """CUDAFunctor_add and its OnSelf/OnOther twins are written by torchgen's ufunc codegen at build time from
        the entry's ufunc_inner_loop; the source is the inner loop (native/ufunc/add.h) and the YAML entry."""
        loops = self._ask(facts.ufunc_loops_named, op)
        if not loops:
            return False
        fn, key, loop, yfile, yline = (loops[0][c] for c in ("function", "ufunc_key", "loop", "file", "line"))
        inner = [r for r in self.defs(loop, FUNCTION_KINDS) if "/ufunc/" in r[1]]
        gen = [(d["qualified_name"], d["file"], d["line"])
               for d in self._ask(facts.python_defs_named, "compute_ufunc_cuda_functors")[:1]]
        if inner:
            r = inner[0]
            row["body"] = {"kind": "ufunc", "name": functor, "definition": _loc(r[1], r[2]), "function": r[0]}
            chain.append(_hop("cpp", "op body", r[0], r[1], r[2], f"ufunc inner loop {loop} ({_last(functor)} is "
                                                                     f"generated around it)"))
        if gen:
            chain.append(_hop("codegen", "generated by", gen[0][0], gen[0][1], gen[0][2],
                              f"writes {_last(functor)} into UfuncCUDA_{op}.cu at build time"))
        disp = [(d["function"], d["dispatch_key"], d["kernel"], d["file"], d["line"])
                for n in self._ask(facts.native_by_full_name, fn) for d in self._ask(facts.dispatch_rows, n["id"])
                if d["dispatch_key"] == "CUDA"]
        chain.append(_hop("native", "ufunc_inner_loop", fn, yfile, yline, f"{key}: {loop}"))
        if disp:
            d = disp[0]
            row["dispatch"] = f"{d[0]} {d[1]}: {d[2]}"
            row["native_function"] = d[0]
            chain.append(_hop("dispatch", "dispatch", d[0], d[3], d[4], f"{d[1]}: {d[2]} (generated)"))
        else:
            row["native_function"] = fn
        return True

    # -- bottom-up: body function -> registration -> stub -> op kernel -> dispatch row ----------------------------

    def _caller_edges(self, f: str, file: str, ends_here: bool) -> list[tuple]:
        """(caller, file, line) of the calls that reach function f (defined in `file`): the up walks' one rule
        (trace/upsteps.py UpSteps.callers); in the text-assisted pass, with none, the uses the index does not
        record as calls (a function handed to a macro)."""
        d = self._ask(facts.enclosing_definition, f, file)
        callers = [(c["caller"], c["file"], c["line"]) for c in self.steps.callers(d, ends_here)] if d else []
        if not callers and _last(f) != "operator()" and self._text_pass:
            callers = self._text_refs(f, file)
        return callers

    def _up(self, starts: list[tuple[str, str]], g: KernelGroup, row: dict, chain: list,
            hints: list[str] = ()) -> None:
        """Walk up from the op body; when the recorded calls lead to no dispatch row of the profile's op, walk again
        letting uses the index does not record as calls (a function handed to a macro) count too."""
        n = len(chain)
        self._walk_up(starts, g, row, chain, hints)
        wanted = _profile_ops(g)
        if row["dispatch"] is None or (wanted and _norm_op(row["native_function"] or "") not in wanted):
            del chain[n:]
            for k in ("dispatch", "native_function", "registration", "stub"):
                row[k] = None
            row["note"] = ""
            self._text_pass = True
            try:
                self._walk_up(starts, g, row, chain, hints)
            finally:
                self._text_pass = False

    def _walk_up(self, starts: list[tuple[str, str]], g: KernelGroup, row: dict, chain: list,
                 hints: list[str] = ()) -> None:
        """From the op body's functions (qualified name, file) up to the dispatch row of the profile's op: the
        search (_search_up), the choice among the rows it reached (_row_score), then the path written as the chain."""
        wanted = _profile_ops(g)
        parent, found = self._search_up(starts, g)
        extra = None
        if wanted and not any(_norm_op(r[0]) in wanted for _, rs in found for r in rs):
            macro = self._macro_link(list(parent), g, hints)
            if macro:
                node, rs, extra = macro
                found.insert(0, (node, rs))
        if not found:
            row["note"] = "no dispatch row reached from the op body" + (f" (profile op {row['op']})" if row["op"] else "")
            return
        score = _row_score(g, hints)
        node, rs = min(found, key=lambda fr: min(score(r) for r in fr[1]))
        rs = sorted(rs, key=score)
        if wanted and _norm_op(rs[0][0]) not in wanted:
            # the walk reached other ops only (sortKeyValueInplace serves sort as well as topk): they are named in
            # the note, and no dispatch row is claimed for this kernel
            row["note"] = (f"the profile's op ({row['op']}) is not among the ops reached bottom-up, which are: "
                           + ", ".join(sorted({r[0] for _, rs_ in found for r in rs_})[:5]))
            return
        self._write_path(_path_to(parent, node), row, chain)
        if extra is not None:
            chain.append(extra)
        else:
            kdef = sorted(self._ask(facts.symbols_qualified, node[0]), key=lambda s: s["file"] != node[1])[:1]
            if kdef and not any(h.name == node[0] for h in chain):
                chain.append(_hop("cpp", "op kernel", node[0], kdef[0]["file"], kdef[0]["line"], ""))
        # equally good rows (masked_fill_.Scalar and .Tensor share masked_fill__cuda) are all named: never a guess
        self._write_rows([r for r in rs if score(r) == score(rs[0])], row, chain)

    def _search_up(self, starts: list[tuple[str, str]], g: KernelGroup) -> tuple[dict, list]:
        """Breadth-first, with the up walks' steps (trace/upsteps.py), to the first dispatch rows: through CUDA
        registrations to the stub's callers, and through calls. A row of exactly the profile's op ends the search.
        Returns each reached node's parent edge and the (node, rows) found."""
        exact = {_op_base(o) for o in _profile_op_list(g)}
        parent: dict[tuple, tuple | None] = {s: None for s in starts}
        frontier, found = list(dict.fromkeys(starts)), []
        for depth in range(UP_DEPTH):
            nxt = []
            for node in frontier:
                f, file = node
                rows = self.dispatch_rows(f)
                if rows:
                    found.append((node, rows))
                    continue
                regs = self.registrations(f, file)
                edges = [((c["caller"], c["file"]), (node, ("registration", stub, rf, rl),
                                                     ("stub call", c["caller"], c["file"], c["line"])))
                         for stub, rf, rl in regs for c in self.steps.stub_calls(stub, REGISTRATION_DEVICE)]
                callers = self._caller_edges(f, file, ends_here=bool(regs))
                if len(callers) <= FANOUT:
                    edges += [((caller, cf), (node, ("call", caller, cf, cl))) for caller, cf, cl in callers
                              if not _host_only(cf)]
                for key, edge in edges:
                    if key not in parent:
                        parent[key] = edge
                        nxt.append(key)
            if any(_op_base(r[0]) in exact for _, rs in found for r in rs) or not nxt:
                break
            frontier = nxt
        return parent, found

    def _write_path(self, steps: list[tuple], row: dict, chain: list) -> None:
        """The path from the body function to the op kernel, bottom-up, as chain hops."""
        for kind, name, file, line in steps:
            if kind == "registration":
                row["registration"] = _loc(file, line)
                row["stub"] = name
                decl = [d for d in self._ask(facts.stub_declarations, name) if d["action"] == "declare"][:1]
                chain.append(_hop("registration", "REGISTER_DISPATCH", name, file, line, "CUDA"))
                if decl:
                    chain.append(_hop("stub", "stub", name, decl[0]["file"], decl[0]["line"], "DECLARE_DISPATCH"))
            elif kind == "stub call":
                chain.append(_hop("cpp", "calls the stub", name, file, line, row.get("stub") or ""))
            else:
                chain.append(_hop("cpp", "called from", name, file, line, ""))

    def _write_rows(self, best: list[tuple], row: dict, chain: list) -> None:
        row["dispatch"] = " | ".join(f"{d[0]} {d[1]}: {d[2]}" for d in best)
        row["native_function"] = " | ".join(dict.fromkeys(d[0] for d in best))
        for d in best:
            chain.append(_hop("dispatch", "dispatch", d[0], d[3], d[4], f"{d[1]}: {d[2]}"))
        for d in best[:3]:
            nf = self._ask(facts.native_by_full_name, d[0])
            if nf:
                chain.append(_hop("native", "native function", f"aten::{nf[0]['full_name']}", nf[0]["file"],
                                  nf[0]["line"], ""))

    def _macro_link(self, visited: list[tuple], g: KernelGroup, hints: list[str]):
        """Op kernels written by a macro (`FOREACH_BINARY_OP_SCALAR(all_types_..., mul, std::multiplies, false)`
        defines foreach_tensor_mul_scalar_kernel_cuda_) are missing from the calls table. The link is still
        checkable: a #define in the same file as a function the walk reached calls that function (by name, or by
        a pasted name such as FUNCTION##_ that fits it), and a name it pastes together
        (foreach_tensor_##NAME##_scalar_kernel_cuda_) is the CUDA kernel of the profile's op. Both must hold, in
        that one file. When macros for several overloads qualify (foreach_pointwise_op_ is called by the Scalar and
        the ScalarList macro), the overload named inside the kernel's own functor (PointwiseOpScalarListFunctor) is
        taken; failing that, all are named."""
        rows = []
        for op in _profile_op_list(g):
            rows += [r for r in self._op_kernels(op) if r[1] == "CUDA"]
        if not rows:
            return None
        hits = {}
        for f, file in visited:
            name = _last(f)
            for mname, mline, params, body in self._macros(file):
                pats = _pasted_patterns(body, params)
                calls_it = re.search(r"\b" + re.escape(name) + r"\b", body or "") or any(
                    p.fullmatch(name) for p in pats)
                if not calls_it:
                    continue
                for pat in pats:
                    for r in rows:
                        if pat.fullmatch(r[2]) and r not in hits:
                            hits[r] = _hop("cpp", "op kernel (macro)", f, file, mline,
                                           f"{r[2]} is defined by #define {mname}, which calls {name}")
        if not hits:
            return None
        chosen = list(hits)
        overloads = {r: r[0].split(".", 1)[1] if "." in r[0] else "" for r in chosen}
        if len(set(overloads.values())) > 1:
            text = " ".join(_last(h) for h in hints).lower()
            named = [r for r in chosen if overloads[r] and overloads[r].lower() in text]
            if named:
                longest = max(len(overloads[r]) for r in named)
                chosen = [r for r in named if len(overloads[r]) == longest]
        hop = hits[chosen[0]]
        return (hop.name, hop.file), chosen, hop

    def _op_down_context(self, g: KernelGroup, row: dict, chain: list) -> None:
        """A kernel launched through a function pointer: the op kernel of the profile's op is its context."""
        for op in _profile_op_list(g):
            for fn, key, kernel, file, line, dispatch_id in self._op_kernels(op):
                for qn, kf, kl in self._kernel_defs(dispatch_id)[:1]:
                    chain.append(_hop("cpp", "op kernel", qn, kf, kl, f"the kernel of {op} (from the profile)"))
                row["dispatch"] = f"{fn} {key}: {kernel}"
                row["native_function"] = fn
                chain.append(_hop("dispatch", "dispatch", fn, file, line, f"{key}: {kernel}"))
                return

    # -- library kernels: top-down from the profile's op to its library calls ------------------------------------


def _row_score(g: KernelGroup, hints: list[str]):
    """How well a dispatch row fits the profiled kernel, lowest best: the profile's op exactly (_foreach_mul_; of
    several, the one the profile names most often), then its in-place/out twins, then the row whose kernel name shares most with the functor's
    (PointwiseOpScalarListFunctor: ..._scalarlist_cuda_), then the key."""
    wanted = _profile_ops(g)
    # the profile's ops most frequent first: one kernel name launched by two ops (launch_clamp_scalar's lambda under
    # aten::clamp_min for relu and aten::clamp for clip_grad_norm_) is answered for the op that launched it most
    exact: dict[str, int] = {}
    for o in _profile_op_list(g):
        exact.setdefault(_op_base(o), len(exact))
    hint_text = " ".join(hints).lower()

    def score(r):
        return (exact.get(_op_base(r[0]), len(exact)), _norm_op(r[0]) not in wanted,
                -sum(len(w) for w in str(r[2]).lower().split("_") if len(w) > 3 and w in hint_text),
                DISPATCH_KEY_ORDER.index(r[1]) if r[1] in DISPATCH_KEY_ORDER else 9)
    return score


def _path_to(parent: dict, node: tuple) -> list[tuple]:
    """The steps (kind, name, file, line) from the search's start to `node`, in walk order (bottom-up)."""
    steps, cur = [], node
    while parent.get(cur):
        prev, *hops = parent[cur]
        steps = list(hops) + steps
        cur = prev
    return steps


def _targs_agree(launch_targs: str | None, profile_targs: list[str]) -> bool:
    """A launch `<4, func_t, array_t>` agrees with a profile `<4, FillFunctor<float>, ...>` unless a position that
    is an integer literal on both sides differs (`max_threads / 4` is not a literal; its 4 is not compared)."""
    if not launch_targs:
        return True
    parts = [p.strip() for p in split_top_level(launch_targs.strip().lstrip("<").rstrip(">"), brackets="<([")]
    for a, b in zip(parts, profile_targs):
        ai, bi = _int_literal(a), _int_literal(b)
        if ai is not None and bi is not None and ai != bi:
            return False
    return True


def _int_literal(s: str) -> int | None:
    m = re.fullmatch(r"(\d+)[uUlL]*", s.strip())
    return int(m.group(1)) if m else None



def short_name(kn: KernelName, width: int = 90) -> str:
    """A readable one-line name: the kernel and its op hint (vectorized_elementwise_kernel[FillFunctor])."""
    base = kn.name if kn.kind != "library" or not kn.template_args else f"{kn.name}<{kn.template_args[0]}>"
    hint = [_last(h) for h in kn.lambdas] or [_last(h) for h in kn.functors]
    s = f"{base}[{', '.join(hint)}]" if hint else base
    return s if len(s) <= width else s[:width - 3] + "..."
