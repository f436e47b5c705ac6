"""What one C++ call site leads to: an op through the dispatcher, a fill/copy (by its default path), a functor or
function passed as an argument, a chooser of the path, or a helper (bodies.local_call)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from .. import facts as q
from ..sequence import file_lines, views_at
from ...pytorch.call_expr import Tensor
from ...pytorch.devices import dispatch_keys, op_api_call, runs_on
from ...pytorch.operators import TENSOR_OPERATORS
from ...pytorch.plumbing import CONDITIONAL_WRITES, PLUMBING_OPS, WRITING_PLUMBING
from ...pytorch.receivers import may_be_tensor, takes_arguments
from ...pytorch.syntax import schema_arguments, split_top_level
from ..model import DEVICE_LAYERS, Condition, Hop
from ..writes import write_path
from .step import Step
from .text import op_call_text

MAX_NEST = 6  # ops followed through ops (composites do not use up --depth, this bounds them)
COMPOSITE_FREE_NEST = 3  # how deep composite ops are followed without using up --depth
MAX_UNEXPANDED = 5  # op calls listed per function when --depth is used up


@dataclass
class BodyCalls:
    """What the walk of one body's calls keeps while it goes (bodies.calls makes it)."""
    d: dict  # the definition whose body it is
    hop: Hop  # its hop
    depth: int
    skip: set  # (line, name) of calls walked elsewhere (a library wrapper, from its library hop)
    launched: set[str]  # kernels the body launches (launchers are walked from their launch hop)
    seen_ops: set[str]  # ops (and helpers named like one) this body's walk has handled
    forwards: bool  # the body's only device work is the ops it calls: they do not use up --depth
    seen_helpers: set = field(default_factory=set)  # (qualifier, name[, template arguments]) walked
    walked_ops: dict[str, int] = field(default_factory=dict)  # op name -> where its first call's hops start
    walked_helpers: dict[tuple, int] = field(default_factory=dict)  # helper -> its first call's hop
    writes: list[dict] = field(default_factory=list)  # calls of plumbing ops that write (zeros, copy_), shown
    # by their default path after the body's own work
    own_op: bool = False  # an op kernel's call of another overload of its own op was walked (dispatcher_call)


# a body's Tensor parameter (`const Tensor& src`, `const at::TensorBase &self`)
_TENSOR_PARAMETER = re.compile(r"\bTensor(?:Base)?\s*&?\s*&?\s*(\w+)\s*[,)=]")

MAX_AGAIN = 4  # later calls of one helper in one body kept as repeats (again_on_the_default_path)


class CallSiteWalk(Step):
    def __init__(self, root):
        super().__init__(root)
        self.nest = 0
        self.unexpanded: dict[int, int] = {}
        self.method_choosers: set[str] = set()  # method names shown as choosers (method_chooser)
        self.seen_writes: set[tuple] = set()  # fill/copy ops whose path is shown (write_call)

    def walk_calls(self, body: BodyCalls) -> None:
        """The calls of one body in source order (those another platform's build compiles skipped), then the
        helpers it calls that lead to no device code, then the fills and copies it makes besides its work."""
        d, hop = body.d, body.hop
        guards = self.conditions.over(d)  # asked again per body (cheap): calls() is entered without body() for some
        self.b.body_guards[hop.id] = guards
        calls = default_path_first(q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)), guards,
                                   lambda name: bool(q.native_for_cpp_api(self.con, name)))
        for call in calls:
            if self.b.full():
                return
            under = guards.at(call["line"])
            if under.off:
                continue  # `#ifdef __HIP_PLATFORM_HCC__` on --device cuda: another platform's build compiles it
            with self.b.noted(hop, under):
                self.walk_call(call, body)
        self.bodies.helper_leaves(hop)
        if body.writes and not self.b.full():  # after the body's own work: ranked after it too (rank.rank_end)
            for call in self.b.capped(body.writes, 3, "fill/copy calls", hop):
                entries = [e for e in q.native_for_cpp_api(self.con, call["callee"])
                           if not call["is_method"] or "method" in e["variants"]]
                if entries:
                    # grad_input.zero_() before the op's own kernel, or all select_backward does (at::zeros, then
                    # copy_): kernels the GPU runs too, each shown by its default path (copy_ has ~1,000 hops),
                    # under the conditions of its own line (clamp_out's NaN fill_ inside `if (min && max)`)
                    with self.b.noted(hop, guards.at(call["line"])):
                        self.write_call(call, entries, hop, self.written_views(call, d, guards))

    def walk_call(self, call: dict, body: BodyCalls) -> None:
        """One call of a body: a functor or function its callers pass, an op through the dispatcher, or a helper."""
        d, qual, name = body.d, call["qualifier"], call["callee"]
        if call["is_method"] and name in TENSOR_OPERATORS:
            if not operand_may_be_tensor(self.con, qual):
                return  # `at::has_internal_overlap(self) == MemOverlap::Yes`: not a Tensor operand
            name = TENSOR_OPERATORS[name]  # `(1 - ls) * nllloss` calls nllloss.mul(...): the op aten::mul
        if (call["line"], name) in body.skip:
            return  # a library wrapper, walked from its library hop
        temporary = name == "operator()" and not call["is_method"] and "::" not in qual  # OpFunctor<T>{}(iter)
        if "id" in d and (call["is_method"] or not qual or temporary) and ("functor", qual, name) in body.seen_helpers:
            self.again_on_the_default_path(call, ("functor", qual, name), body)  # normal_kernel<RNG>()(...) twice
            return
        if "id" in d and (call["is_method"] or not qual or temporary) and (qual, name) not in body.seen_helpers:
            # sorter.sort<A>(...) where a caller passed SmallBitonicSort{} for sorter; func_32bit(...) where a
            # caller passed raw_cudnn_convolution_forward_out_32bit for func_32bit; OpFunctor<at::Half, float>{}(iter)
            # where a caller wrote reduce_dispatch<sum_functor>(...)
            passed = q.functors_of(self.con, d["id"], qual, name) if call["is_method"] else \
                q.functors_of(self.con, d["id"], qual if temporary else name, "")
            if passed:
                body.seen_helpers.update({(qual, name), ("functor", qual, name)})
                mark = len(self.trace.hops)
                self.functor_call(call, passed, body.hop, body.depth)
                if len(self.trace.hops) > mark and self.trace.hops[mark].parent == body.hop.id:
                    body.walked_helpers[("functor", qual, name)] = mark
                return
        if call["is_method"] or op_api_call(qual, d.get("qualified_name") or "",
                                            (qual, name) in q.linked_callees(self.con, call["file"])) \
                and not (not qual and global_call(self.trace.root, call, name)):
            # at::x(...) and tensor.x(...) both go through the dispatcher when x is an op; at::cuda::x(...) calls
            # x's CUDA kernel (torchgen's per-key API); a bare x(...) in namespace at is at::x
            self.dispatcher_call(call, name, body)
        elif not qual.startswith(("c10", "std", "TORCH")):
            self.helper_call(call, name, body)

    def dispatcher_call(self, call: dict, name: str, body: BodyCalls) -> None:
        """A call of op `name` through the dispatcher: its op walked (once per body; a fill/copy kept for after the
        body's work; a repeat where the body called it before or a sibling calls it directly)."""
        d, hop, qual = body.d, body.hop, call["qualifier"]
        base = name.removesuffix("_symint")  # at::zeros_symint, select_symint: the op's own name
        if base in WRITING_PLUMBING and base not in body.seen_ops:
            body.seen_ops.add(base)
            body.writes.append(call)
        if name in body.walked_ops and body.walked_ops[name] < len(self.trace.hops) and not self.b.full():
            # the same op called again in this body (embedding: index_select at two lines): the call is a
            # hop, what it leads to is shown at the first
            again = self.b.add(hop, "native", "calls_op", op_call_text(call), call["file"], call["line"])
            self.b.repeat(again)
            again.repeats = body.walked_ops[name]  # the first call's hop (another line: finish could not tell)
            self.b.live.add(again.id)
            return
        # (a body calls no op of its own name again, except an op's kernel calling another overload of its op
        # through the dispatcher, once: where.ScalarOther's kernel at::native::where calls at::where(...), the
        # overload where.self, and index_fill_.int_Tensor's calls `self.index_fill_(dim, index, source.item())`,
        # index_fill_.int_Scalar; the op walk itself stops a recursion into the same overload)
        own = name == d.get("name") and (qual == "at" or call["is_method"]) and not body.own_op and \
            (d.get("file"), d.get("line")) in q.resident(self.con).op_kernel_places
        if (name in body.seen_ops and not own) or base in PLUMBING_OPS:
            return
        entries = q.native_for_cpp_api(self.con, name)
        if own and qual != "at":
            # a method call of its own name: another overload's (index_fill_.int_Tensor's `self.index_fill_(dim,
            # index, source.item())`), never the one this body is the kernel of (is_conj's `self.is_conj()`, a
            # method of TensorBase)
            mine = q.resident(self.con).ops_at_kernel_place.get((d.get("file"), d.get("line")), frozenset())
            entries = [e for e in entries if e["full_name"] not in mine]
            if not entries:
                return
        body.own_op = body.own_op or own
        if call["is_method"]:
            entries = [e for e in entries if "method" in e["variants"]]
            if entries and not may_be_tensor(qual, d.get("signature"), q.receiver_type(
                    self.con, call["file"], call["line"], qual)):
                return  # options.device().index(): a method of c10::Device, not the op aten::index
            if not entries:
                self.method_chooser(call, hop)
                return
        body.seen_ops.add(name)
        owner = self.b.reserved_ops.get(name)
        # (not inside the owner's own walk of that call: argsort's at::sort(self, dim, descending) walks sort, whose
        # kernel's at::sort(self, false, dim, descending) is another overload, sort.stable, walked here)
        if entries and owner is not None and owner != d.get("qualified_name") and name not in self.b.calling_ops:
            below = self.b.add(hop, "native", "calls_op", op_call_text(call), call["file"], call["line"],
                               f"calls the op {', '.join(e['full_name'] for e in entries[:3])} (shown below, "
                               f"where {owner} calls it directly)")
            self.b.live.add(below.id)
            return
        if entries:
            mark = len(self.trace.hops)
            # (another overload of the kernel's own op is the same op's work: sort(self, dim, descending)'s kernel
            # calls at::sort(self, false, dim, descending), sort.stable; it does not use up --depth)
            guards = self.conditions.over(d)
            self.op_call(call, entries, hop, body.depth, body.forwards or own, known=guards.values,
                         views=self.passed_views(call, d, guards), tensors=tensor_parameters(d.get("signature")))
            if len(self.trace.hops) > mark:  # shown (not pruned): a later call of it points here
                body.walked_ops[name] = mark

    def helper_call(self, call: dict, name: str, body: BodyCalls) -> None:
        """A call of a C++ helper (not through the dispatcher): walked once per body and instantiation; a legacy
        kernel, an op's kernel of another device called by its bare name, or an allocation kernel as they are."""
        d, hop, qual = body.d, body.hop, call["qualifier"]
        # gemm_internal_cublas<float>, <double>: two; so are two instantiations of one template written with other
        # arguments (1.8 cat_out_cuda's parallel_cat<scalar_t, CAT_ARRAY_BATCH_SIZE, 1> and <..., /2, /2>): the
        # second is a hop, its body shown at the first
        helper = (qual, name, q.specialization(self.con, call) or call.get("template_args"))
        # a function calling another of its own name (DistributionExponentialKernel.cu's exponential_kernel calls
        # templates::cuda::exponential_kernel) is not a recursion unless the call links back to it
        # (nor is a call of another overload of its name: its arguments do not fit the caller's parameters)
        args = q.arguments_of_call(self.con, call["file"], call["line"], name) if name == d.get("name") else None
        own = name == d.get("name") and name not in body.launched and (not any(
            t["id"] == d.get("id") for t in q.call_targets(self.con, call["file"], qual, name))
            or (args is not None and takes_arguments(d.get("signature"), len(args)) is False))
        if helper in body.seen_helpers:
            self.again_on_the_default_path(call, helper, body)
            return
        if name in body.seen_ops and not own:
            return
        body.seen_helpers.add(helper)  # sbtopk::launch and mbtopk::launch are two helpers
        if (qual, name) not in q.linked_callees(self.con, call["file"]):
            if qual.startswith("legacy::"):  # 1.4's bmm_cuda: legacy::cuda::_th_bmm(...), built from a
                self.ops.legacy_kernel(f"{qual}::{name}", hop, body.depth)  # Declarations.cwrap entry
            return  # no definition this call reaches (std::max, a lambda, a macro-made name)
        if not qual and self.foreign_kernel(name):
            # roll_common (TensorTransformations.h), reached from roll_cuda: `roll(flattened, ...)` links to
            # at::native::roll, the CPU/MPS kernel, which the CUDA file does not declare: there C++ finds
            # at::roll (ATen/ops/roll.h), the op, back through the dispatcher
            entries = q.native_for_cpp_api(self.con, name)
            if entries and name not in body.seen_ops:
                body.seen_ops.add(name)
                self.op_call(call, entries, hop, body.depth, body.forwards,
                             tensors=tensor_parameters(d.get("signature")))
            return
        if self.plumbing_kernel(name):
            if name in WRITING_PLUMBING and name not in body.seen_ops:  # addmm_out_cuda_impl's
                body.seen_ops.add(name)  # `at::native::copy_(result, *self_)`: a copy kernel the GPU runs
                body.writes.append(call)
            return  # at::native::empty_cuda(...): the kernel of an allocation op, called directly
        choice = q.choice_at(self.con, call)
        if choice is not None:
            self.chooser(call, choice, hop)
        mark = len(self.trace.hops)
        self.bodies.local_call(call, d, hop, body.depth, leaves=choice is None)
        if len(self.trace.hops) > mark and self.trace.hops[mark].parent == hop.id:
            body.walked_helpers[helper] = mark

    def again_on_the_default_path(self, call: dict, helper: tuple, body: BodyCalls) -> None:
        """A helper called again in one body, after a first call under a test the call's inputs rule out
        (logsumexp_out: `if (isIntegralType(...)) logsumexp_out_impl(result, self.to(...), ...); else
        logsumexp_out_impl(result, self, ...)`): this call is a hop too, a repeat of the first (its body is shown
        there), with its own call site and conditions, so that the main chain can take it; each later call, up to
        MAX_AGAIN (sortKeyValueInplace calls sortCommon three times, the first two under tests a call's sizes may
        rule out)."""
        first = body.walked_helpers.get(helper)
        again_key = ("again", helper)
        count = body.walked_helpers.get(again_key, 0)
        if first is None or first >= len(self.trace.hops) or self.b.full() or count >= MAX_AGAIN:
            return
        body.walked_helpers[again_key] = count + 1  # (each later call: sortKeyValueInplace's third sortCommon
        # call, after two under tests the inputs rule out, is the default path's)
        shown = self.trace.hops[first]
        if shown.parent != body.hop.id or not shown.not_default:
            return
        again = self.b.add(body.hop, shown.layer, shown.kind, shown.name, shown.file, shown.line)
        self.b.repeat(again)
        again.called_at, again.repeats = f"{call['file']}:{call['line']}", first
        again.conditions += self.b.passed_under.get(first, [])  # a functor passed under a test: still under it
        self.b.live.add(again.id)

    def chooser(self, call: dict, choice: dict, hop: Hop) -> None:
        """A call whose result the body branches on (`ConvBackend backend = _select_conv_backend(...)`, then
        `switch (backend)`): the chooser, shown where the choice is made though it runs no device code itself (the
        paths it picks between are the calls after it). One that reaches device code is walked as any helper."""
        for target in q.call_targets(self.con, call["file"], call["qualifier"], call["callee"],
                                     call.get("template_args")):
            if target["reach"] is not None or not runs_on(target["def_file"], self.device):
                continue
            target = q.symbol_by_id(self.con, target["id"])  # a link to code the walk does not enter: its row
            if choice["test"] == "if":  # `if (train && is_fused_kernel_acceptable(input, p))`
                test = Condition("if", f"if (... {call['callee']}(...) ...)", call["file"], call["line"])
                detail = f"chooses the path: {test.text} at {call['file']}:{call['line']}"
            else:
                how = f"switch ({choice['variable']})" if choice["test"] == "switch" else \
                    f"{choice['variable']} == {choice['declared']}::..."
                test = Condition("switch" if choice["test"] == "switch" else "if", how, call["file"],
                                 choice["tested_line"])
                detail = (f"chooses the path: `{choice['declared']} {choice['variable']} = {call['callee']}(...)` at "
                          f"{call['file']}:{call['line']}, then {how} at {call['file']}:{choice['tested_line']}")
            h = self.b.add(hop, "cpp", "chooser", target["qualified_name"], target["file"], target["line"], detail,
                         conditions=[test])
            h.called_at = f"{call['file']}:{call['line']}"

    def method_chooser(self, call: dict, hop: Hop) -> None:
        """A method call in an `if (...)` test (`else if (params.use_cudnn(input))` in 1.4's _convolution): when
        one class of the calling file defines a method of that name (ConvParams::use_cudnn, Convolution.cpp:149),
        that method is the chooser of the path below (the receiver's type is not read: a method of another file's
        class is not shown)."""
        choice = q.choice_at(self.con, call)
        if choice is None or call["callee"] in self.method_choosers:
            return
        defs = [s for s in q.symbols_named(self.con, call["callee"])
                if s["file"] == call["file"] and s["kind"] == "method"]
        if len({s["qualified_name"] for s in defs}) != 1:
            return
        self.method_choosers.add(call["callee"])
        target = defs[0]
        test = Condition("if", f"if (... {call['qualifier']}.{call['callee']}(...) ...)", call["file"], call["line"])
        h = self.b.add(hop, "cpp", "chooser", target["qualified_name"], target["file"], target["line"],
                     f"chooses the path: {test.text} at {call['file']}:{call['line']}", conditions=[test])
        h.called_at = f"{call['file']}:{call['line']}"

    def written_views(self, call: dict, d: dict, guards) -> str | None:
        """Whether a fill/copy call writes to or reads a strided view the body made before it (constant_pad_nd's
        `c_output.copy_(c_input)` after `c_output = c_output.narrow(...)`): "strided" where a view assignment runs
        whatever the inputs, "maybe" where each runs under a test they leave open (`if (pad[pad_idx] > 0)`), None
        where there is none or the inputs rule each out. A parameter of a body whose op was called with a view
        (passed_views) is one too: clone's `self.copy_(src)`."""
        args = q.arguments_of_call(self.con, call["file"], call["line"], call["callee"]) or []
        names = {w for part in [call["qualifier"] if call["is_method"] else "", *args]
                 for w in re.findall(r"[A-Za-z_]\w*", part or "")}
        return self.views_among(names, call, d, guards) or self.viewed_parameters(names, d)

    def passed_views(self, call: dict, d: dict, guards) -> str | None:
        """Whether an op call is given, as its receiver or as an argument, a strided view the body made before it
        (repeat_interleave_symint's `input.clone(...)` after `input = input.expand_symint(...)`, Repeat.cpp:112-123):
        that op's iterators then read as strided (or maybe strided), as written_views says of a fill/copy. Only a
        bare name counts (`input.contiguous()` is not the view)."""
        args = q.arguments_of_call(self.con, call["file"], call["line"], call["callee"]) or []
        names = {a.strip() for a in [call["qualifier"] if call["is_method"] else "", *args]
                 if a and a.strip().isidentifier()}
        return self.views_among(names, call, d, guards) or self.viewed_parameters(names, d) if names else None

    def views_among(self, names: set[str], call: dict, d: dict, guards) -> str | None:
        """"strided" where one of `names` holds a view body `d` made before the call's line whatever the inputs,
        "maybe" where each such view is made under a test they leave open or in a block the call is not in, else
        None (a view assigned over since, or under a test the inputs or the build rule out, does not count)."""
        if not self.trace.root or not d.get("file") or not d.get("end_line") or not names:
            return None
        views, depths, others = views_at(self.trace.root, d["file"], d["line"], d["end_line"])
        if not views or not d["line"] <= call["line"] <= d["end_line"]:
            return None
        here, found = depths[call["line"] - d["line"]], None
        for name in names & views.keys():
            for line, depth in (v for v in views[name] if v[0] < call["line"]):
                if any(line < other < call["line"] for other in others.get(name, ())):
                    continue  # assigned again since (`x = x.contiguous();`)
                under = guards.at(line)
                if under.off or any(c.assumed is False for c in under.conditions):
                    continue  # (a view the inputs or the build rule out)
                if not under.conditions and depth <= here:
                    return "strided"
                found = "maybe"  # under an open test, or inside a block the call is not in (a loop's `if`)
        return found

    def viewed_parameters(self, names: set[str], d: dict) -> str | None:
        """The views of the op being walked ("strided" or "maybe", passed_views of its caller), where `names`
        holds one of this body's Tensor parameters."""
        views = self.b.defaults[-1].get("views") if self.b.defaults else None
        if not views:
            return None
        params = tensor_parameters(d.get("signature"))
        return views if names & params else None

    def write_call(self, call: dict, entries: list[dict], hop: Hop, views: str | None = None) -> None:
        """A fill or copy a kernel makes besides its own work (nll_loss_backward's grad_input.zero_()): the call, then
        the default path of that op on the device, down to its kernel; the first time only, later ones point up.
        `views`: the call's operands are strided views ("strided"), or may be ("maybe"): the op's path is walked
        so, its `iter.is_contiguous()` read false or left open (written_views)."""
        entries = [e for e in entries if self.ops.runs_here(e)]
        if not entries:
            return
        path = write_path(self.con, entries, self.device, functools.partial(
            self.root.walk_entries, user=self.build.user, dtype=self.build.dtype, views=views),
            self.build.key() + (f"; operands {views}" if views else ""))
        if not path:
            return  # leads to no device code: nothing to show
        ops = ", ".join(e["full_name"] for e in entries[:3])
        when = CONDITIONAL_WRITES.get(entries[0]["name"])
        how = f"calls the op {ops}" if call["qualifier"] != "at::native" else \
            f"calls the kernel of {ops} itself (not through the dispatcher)"
        head = self.b.add(hop, "native", "writes", op_call_text(call), call["file"], call["line"],
                        f"{how}: a fill/copy{' (' + when + ')' if when else ''}; below, the default path "
                        f"of aten::{entries[0]['name']} on {self.device.upper()} and the other device code it can run")
        key = (*(e["id"] for e in entries), views)
        if key in self.seen_writes:
            self.b.live.add(head.id)
            self.b.repeat(head)
            return
        self.seen_writes.add(key)
        added: list[Hop] = []
        for above, h in path:
            added.append(self.b.add(added[above] if above >= 0 else head, h.layer, h.kind, h.name, h.file, h.line,
                                  h.detail, absent=h.absent, **h.copied()))
            added[-1].called_at = h.called_at

    def functor_call(self, call: dict, passed: list[dict], hop: Hop, depth: int) -> None:
        """A method call on a parameter that callers pass functor objects for: each passed class's method; a call of
        a parameter that callers pass functions for: each function. When the call that led here passes one, that
        ones only (Conv_v7.cpp:791, in raw_cudnn_convolution_forward_out_v7, passes the forward worker to
        split_batch_dim_to_32bit_out; :909 the backward one). The hop stands for every call of it in that body
        (sortKeyValueInplace passes three sorters to sortCommon, one per size)."""
        parent = self.trace.hops[hop.parent] if hop.parent is not None else None
        span = q.definition_span(self.con, parent.name, parent.file, parent.line) if parent and parent.file else None
        here = [f for f in passed if span and f["file"] == parent.file and span[0] <= f["line"] <= span[1]]
        if not here and hop.called_at and span:
            return  # the call that led here passes something else (a lambda): what other callers pass is not it
        # the definitions of one class passed (prod_functor's primary operator() and prod_functor<bool>'s): the
        # input's dtype picks among them as at a direct call (walk/specializations.py)
        defs = [q.symbol_by_id(self.con, f["symbol_id"]) for f in here or passed if f["symbol_id"] is not None]
        for f in here or passed:
            if f["symbol_id"] is None:
                api = f["functor"].rpartition("::")
                entries = q.native_for_cpp_api(self.con, api[2]) if api[0] in ("at", "at::_ops") else []
                if entries:  # unary_op_impl(self, at::sigmoid_out) calls out_impl(...): the op sigmoid.out
                    passed_call = {**call, "qualifier": api[0], "callee": api[2], "is_method": 0}
                    self.op_call(passed_call, entries, hop, depth)
                continue
            target = q.symbol_by_id(self.con, f["symbol_id"])
            if not runs_on(target["file"], self.device):
                continue
            mark, seen = len(self.trace.hops), target["id"] in self.b.seen_cpp
            self.bodies.cpp(target, hop, depth, kind="functor", call_site=(call["file"], call["line"]))
            if seen and target["id"] in self.b.useful_cpp:
                self.b.live.add(mark)  # passed here too (sum_functor, also called at its caller): shown above
            called = f"{call['qualifier']}.{call['callee']}" if call["is_method"] else call["callee"]
            self.trace.hops[mark].detail += f" [{called}(...): {f['functor']} passed at {f['file']}:{f['line']}]"
            if here and parent.id in self.b.body_guards:  # the test the passing line runs under is this way's:
                # sortKeyValueInplace passes WarpMergeSort<128>{} under `else if (sort_size <= 128)` (Sort.cu:405)
                under = self.b.body_guards[parent.id].at(f["line"])
                self.trace.hops[mark].conditions += [c for c in under.conditions
                                                     if c not in self.trace.hops[mark].conditions]
                self.b.passed_under[mark] = under.conditions  # (a later call of it in this body: the same)
            self.bodies.dtype_condition(self.trace.hops[mark], target, defs)

    def foreign_kernel(self, name: str) -> bool:
        """True when `name` is an op's kernel for other devices only (`roll`: CPU, MPS) on this trace's device."""
        if self.device == "all":
            return False
        rows = q.dispatch_rows_with_kernel(self.con, name)
        own = set(dispatch_keys(self.device)) | set(q.COMPOSITE_KEYS)
        return bool(rows) and not any(r["dispatch_key"] in own for r in rows)

    def plumbing_kernel(self, name: str) -> bool:
        """True when `name` is the kernel of a plumbing op (copy_, empty_like ...) in some dispatch row."""
        return any(full.split(".")[0] in PLUMBING_OPS for full in q.ops_with_kernel(self.con, name))

    def op_call(self, call: dict, entries: list[dict], hop: Hop, depth: int, forwards: bool = False,
                known: dict | None = None, views: str | None = None, tensors: frozenset[str] = frozenset()) -> None:
        """A kernel calling another op (at::clamp_min): back into the YAML layer. Shown when it leads to device
        code; a composite callee does not use up --depth (its work is in the ops it calls), nor does the op a
        forwarding kernel calls (_scaled_dot_product_flash_attention_cuda -> at::_flash_attention_forward)."""
        entries = [e for e in entries if self.ops.runs_here(e)]
        if not entries:
            return  # `if (self.is_mkldnn()) return at::mkldnn_linear(...)`: no kernel of it runs on this device
        if forwards:
            depth = max(depth, 1)
        if depth <= 0 or self.nest >= MAX_NEST:
            self.leaf_op_call(hop, call, entries, "(raise --depth to follow)")
            return
        args = q.arguments_of_call(self.con, call["file"], call["line"], call["callee"])
        entries = [e for e in entries if fits(e["schema"], args, call, tensors)] or entries
        inexact = not_exact(entries, args, call)
        entries = sorted(entries, key=lambda e: e["schema"] in inexact)  # (the exact one walked first)
        mark, saved = len(self.trace.hops), self.b.snapshot()
        head = self.b.add(hop, "native", "calls_op", op_call_text(call), call["file"], call["line"],
                          f"calls the op {', '.join(e['full_name'] for e in entries[:3])}: back into the YAML layer",
                          feeds=q.outer_call(self.con, call["file"], call["line"], call["caller"], call["callee"])
                          if call.get("caller") else None)
        self.nest += 1
        self.b.calling_ops.append(call["callee"])
        try:
            through_composite = bool(self.b.implicit) and self.b.implicit[-1]
            walked = self.b.capped(entries, 2, "overloads the call may reach", head)
            for e in walked:
                # a composite callee is free only near the top: deeper ones are helpers, not the algorithm
                free = (self.ops.composite(e) or forwards) and self.nest <= COMPOSITE_FREE_NEST
                given = {} if self.b.ruled_out(hop) else passed_arguments(e["schema"], args, call, known)
                mark_e = len(self.trace.hops)
                passed = {**({"given": given} if given else {}), **({"views": views} if views else {})}
                nh = self.ops.native({**e, **passed}, head, depth if free else depth - 1)
                if e["schema"] in inexact and mark_e < len(self.trace.hops):  # at::sort(self, dim, descending)
                    self.trace.hops[mark_e].conditions.append(Condition(
                        "overload", inexact[e["schema"]], call["file"], call["line"], assumed=False))
                if through_composite:  # autograd of a CompositeImplicitAutograd op is that of the ops it calls
                    self.ops.autograd_of(e, nh)
        finally:
            self.nest -= 1
            self.b.calling_ops.pop()
        if self.b.prune(mark, keep_if=DEVICE_LAYERS):
            self.b.useful_native.update(e["id"] for e in walked)
        else:
            self.b.restore(saved)
            # --depth only adds: an op call a shallower trace lists unexpanded stays, as a leaf, when it leads on
            # to no device code
            self.leaf_op_call(hop, call, entries, ": leads to no device code opindex found")

    def leaf_op_call(self, hop: Hop, call: dict, entries: list[dict], note: str) -> None:
        """An op call listed, not followed: at most MAX_UNEXPANDED per function, the cap said once where it cuts."""
        count = self.unexpanded.get(hop.id, 0)
        if count < MAX_UNEXPANDED or self.trace.limit == 0:
            self.unexpanded[hop.id] = count + 1
            sep = "" if note.startswith(":") else " "
            self.b.add(hop, "native", "calls_op", op_call_text(call), call["file"], call["line"],
                     f"calls the op {', '.join(e['full_name'] for e in entries[:3])}{sep}{note}")
        elif count == MAX_UNEXPANDED:
            self.unexpanded[hop.id] = count + 1  # said once per function
            self.b.add(hop, hop.layer, "capped", f"more op calls here not listed (the first {MAX_UNEXPANDED} are; "
                     "--depth follows them, --limit 0 lists all)", absent=True)


_SCHEMA_PARAMETER = re.compile(r"([A-Za-z_]\w*)\s*(?:=[^,]*)?$")


def default_path_first(calls: list[dict], guards, is_op) -> list[dict]:
    """The calls of a body in source order, except that a call of an op under a test the inputs rule out goes
    after a later call of the same op on the default path: softmax calls `at::_softmax(input_, dim_, true)` under
    its Half test and `at::_softmax(converted, dim_, false)` in the else; the op is walked once, at the first call
    walked, so with the values the default path passes (half_to_float=false), and the other call repeats it.
    (A helper called twice so is walked in order, then again_on_the_default_path.) `is_op`: name -> bool."""
    ruled = {i for i, c in enumerate(calls) if any(x.assumed is False for x in guards.at(c["line"]).conditions)}
    if not ruled:
        return list(calls)
    out, moved = [], set()
    for i, call in enumerate(calls):
        if i in moved:
            continue
        if i in ruled and is_op(call["callee"].removesuffix("_symint")):
            later = next((j for j in range(i + 1, len(calls)) if calls[j]["callee"] == call["callee"]
                          and j not in ruled and j not in moved), None)
            if later is not None:
                out.append(calls[later])
                moved.add(later)
        out.append(call)
    return out


def passed_arguments(schema: str, args: list[str] | None, call: dict, known: dict | None = None) -> dict[str, str]:
    """The schema parameters a C++ op call passes, by name, with the argument text (`at::clamp(self, min_val,
    max_val)`: min -> min_val, max -> max_val; a method call's receiver is `self`): the op's own defaults do not
    apply to them (conditions.BodyGuards reads a literal, the caller's value of a name, or nothing). A name whose
    number or bool the caller's tests know (`known`) is passed as that literal: softmax's `at::_softmax(converted,
    dim_, false)` passes the call's dim=-1 on as `-1`."""
    if args is None:
        return {}
    params = api_parameters(schema, call)
    texts = ([call["qualifier"]] if call.get("is_method") else []) + list(args)
    if len(texts) > len(params):
        return {}
    return {p: _known_literal(t, known) for p, t in zip(params, texts)}


@functools.lru_cache(maxsize=8192)
def _api_parameters(schema: str, out_first: bool) -> tuple[tuple[str, str], ...]:
    """(type, name) of each parameter of the C++ API function of `schema`, in its order (api_parameters)."""
    params, outs, keyword = [], [], False
    for part in split_top_level(schema_arguments(schema), ",", "([<"):
        m = _SCHEMA_PARAMETER.search(part.strip())
        keyword = keyword or part.strip() == "*"
        if m is not None and part.strip() != "*":
            (outs if keyword and "!" in part else params).append((part.strip().split()[0], m.group(1)))
    return tuple(outs + params if outs and out_first else params + outs)


def _api_order(schema: str, out_first: bool) -> tuple[str, ...]:
    return tuple(name for _, name in _api_parameters(schema, out_first))


def api_parameters(schema: str, call: dict) -> tuple[str, ...]:
    """The parameters of the C++ API function a call of `schema` reaches, in its order: the C++ API of an out=
    overload takes its keyword outputs first (`at::topk_out(values, indices, self, k)`); its `_outf` twin, and
    every other call, the schema's order (an in-place `Tensor(a!) self` stays first)."""
    return _api_order(schema, call.get("callee", "").endswith("_out"))


def _known_literal(text: str, known: dict | None) -> str | Tensor:
    value = known.get(text.strip()) if known and re.fullmatch(r"\s*[A-Za-z_]\w*\s*", text) else None
    if isinstance(value, Tensor):  # a tensor of the traced call's, or one made like it: its sizes go on
        return value
    if int_list(value):  # a tensor's sizes (the kernel size _convolution passes at::_conv_depthwise2d)
        return tuple(int(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, int) else text


def int_list(value) -> bool:
    """An int list a body knows (whole floats count: a literal read from C++ text is one)."""
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v.is_integer() for v in value)


def global_call(root: str | None, call: dict, name: str) -> bool:
    """Whether a bare call is written `::name(...)` wherever its line calls `name`: the global namespace's function
    (launch_clamp_scalar's device lambda `::max(static_cast<opmath_t>(v), lim0_val)`), never the op at::name."""
    lines = file_lines(root, call["file"])
    if not lines or not 0 < call["line"] <= len(lines):
        return False
    text = lines[call["line"] - 1]
    written = re.findall(rf"(?<![\w.>])(::\s*)?{re.escape(name)}\s*\(", text)
    return bool(written) and all(w for w in written)


def not_exact(entries: list[dict], args: list[str] | None, call: dict) -> dict[str, str]:
    """{schema: why} of the overloads a C++ op call reaches only through their defaults while another takes its
    arguments one for one: `at::sort(self, dim, descending)` (argsort, Sorting.cpp:984) is sort(Tensor self, int
    dim, bool descending), not sort.stable(Tensor self, *, bool? stable, int dim, bool descending), which would
    take `dim` for `stable` by a conversion C++ ranks below the exact match. Empty when none is exact."""
    if args is None:
        return {}
    count = len(args) + bool(call.get("is_method"))
    exact = {e["schema"] for e in entries if len(api_parameters(e["schema"], call)) == count}
    if not exact:
        return {}
    written = f"{call['qualifier']}::{call['callee']}" if call.get("qualifier") and not call.get("is_method") \
        else call["callee"]
    return {e["schema"]: f"C++ picks the overload that takes these {count} arguments one for one "
                         f"({written}(...) at its line)" for e in entries if e["schema"] not in exact}


def fits(schema: str, args: list[str] | None, call: dict, tensors: frozenset[str] = frozenset()) -> bool:
    """Whether an overload can take the call's arguments as written, in its C++ API's order (api_parameters): a
    number literal is no Tensor (relu's `at::clamp_min(self, 0)` calls clamp_min(Tensor self, Scalar min), not
    clamp_min.Tensor), and a Tensor the caller declares (`tensors`, its `const Tensor&` parameters) is no Scalar
    nor any other type but a Tensor (isnan's `self != self`, TensorCompare.cpp:363, calls ne.Tensor, not
    ne.Scalar: C++ converts no Tensor to a Scalar); unknown arguments fit anything."""
    if args is None:
        return True
    types = [kind for kind, _ in _api_parameters(schema, call.get("callee", "").endswith("_out"))]
    texts = ([call["qualifier"]] if call.get("is_method") else []) + list(args)
    if len(texts) > len(types):
        return False
    return not any(kind.startswith("Tensor") and _NUMBER.match(text.strip()) or
                   not kind.startswith("Tensor") and text.strip() in tensors for text, kind in zip(texts, types))


@functools.lru_cache(maxsize=8192)
def tensor_parameters(signature: str | None) -> frozenset[str]:
    """The names a C++ signature declares `Tensor` (`const Tensor& self`, `Tensor& out`; not an optional or a
    list)."""
    return frozenset(_TENSOR_PARAMETER.findall(signature or ""))


_NUMBER = re.compile(r"^(?:/\*.*?\*/\s*)?-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[fFlLuU]*$")
_AT_CALL = re.compile(r"^at::(\w+)\s*\(")


def operand_may_be_tensor(con, operand: str) -> bool:
    """An operator's operand recorded as a Tensor by its look (extract/cpp_operators.py): an `at::f(...)` call is
    one only when f is an op (at::has_internal_overlap returns an enum)."""
    m = _AT_CALL.match(operand)
    return m is None or m.group(1).removesuffix("_symint") in q.resident(con).op_names
