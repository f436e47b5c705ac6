"""walk: build a Trace top-down (Python -> YAML -> C++ -> stubs -> CUDA -> backward) over the index.

The walk is general: it follows the facts (bridges, dispatch rows, definitions, stub calls, registrations,
launches, op calls) and knows no op by name. Fan-out is capped so a trace on a real tree stays small and fast.
"""
from __future__ import annotations

import contextlib
import re

from . import facts as q
from ..pytorch.devices import IMPLICIT_KEYS, dispatch_keys, op_api_call, runs_on
from ..pytorch.operators import TENSOR_OPERATORS
from ..pytorch.plumbing import CONDITIONAL_WRITES, PLUMBING_OPS, WRITING_PLUMBING
from ..pytorch.receivers import may_be_tensor
from ..pytorch.stubs import is_stub_call
from ..pytorch.python_rules import ENTRY_METHODS
from .conditions import Guards, python_defaults, schema_defaults
from .model import COMPOSITE_CALLEE, DEVICE_LAYERS, Condition, Found, Hop, Trace
from .writes import write_path
from .python import bases_text, bridged_entries, find_method, follow_python, module_of, self_method

MAX_OVERLOADS = 4  # native entries shown per bridged name
MAX_HOPS = 5000  # the default cap of a trace's size (Trace.max_hops; the CLI's --max-hops)
# Hops that make a followed C++ helper worth showing.
_INTERESTING = {"stub", "registration", "cuda", "library", "native"}
# calls that make a kernel a declared-but-unimplemented stand-in (NamedTensor.cpp's Dimname overloads)
NOT_IMPLEMENTED = frozenset({"reportNYIDimnameOverload"})
MAX_NEST = 6  # ops followed through ops (composites do not use up --depth, this bounds them)
COMPOSITE_FREE_NEST = 3  # how deep composite ops are followed without using up --depth
MAX_UNEXPANDED = 5  # op calls listed per function when --depth is used up
MAX_DEVICE_CALLS = 8  # __device__ functions shown per kernel or device function (device_calls; --limit 0: all)
MAX_HELPERS = 6  # helpers without device code shown per body (helper leaves; --limit 0: all)
_HELPER_FOLDERS = ("aten/src/ATen/", "aten/src/THC", "aten/src/TH/", "aten/src/THCUNN", "aten/src/THNN")
DEVICE_CODE = ("global_kernel", "device_function")  # definitions whose body runs on the GPU



class Walker:
    def __init__(self, con, trace: Trace, backward: bool = False):
        self.con, self.trace = con, trace
        self.device, self.depth, self.backward = trace.device, trace.depth, backward
        self.seen_native: set[int] = set()
        self.seen_cpp: set = set()  # symbol ids walked down (the up walk keeps (qualified name, file) pairs)
        self.seen_stub: set[str] = set()
        self.seen_writes: set[tuple] = set()  # fill/copy ops whose path is shown (write_call)
        self.reserved: dict[int, str] = {}  # helper id -> the body being walked that calls it directly (calls)
        self.defaults: list[dict] = []  # per op being walked: its entry (the schema's default arguments)
        self.guard_cache: dict[tuple, Guards] = {}
        self.call_notes: dict[int, list[Hop]] = {}  # hop id -> the hops a noted call adds below it (noted)  # (body, schema) -> its conditions, read (guards)
        self.reserved_ops: dict[str, str] = {}  # op API name -> the body being walked that calls it directly
        self.nest = 0
        self.unexpanded: dict[int, int] = {}
        self.call_sites: dict[int, tuple[str, int]] = {}  # helper hop -> where its caller called it
        self.repeats: set[int] = set()  # hops that stand for something shown above (not walked again)
        self.implicit: list[bool] = []  # per op being walked: runs through CompositeImplicitAutograd on the device
        self.autograd_shown: set[int] = set()  # entries whose backward formula is shown
        # what led to device code when walked: a later call of it is kept as a "(shown above)" hop (live)
        self.useful_cpp: set[int] = set()
        self.useful_native: set[int] = set()
        self.live: set[int] = set()
        self.leaves: dict[int, list[tuple[dict, dict, int]]] = {}  # body hop -> (call, target, overloads) of the
        # helpers it calls that run no device code, shown as leaves after the body's own work (helper_leaves)
        self.method_choosers: set[str] = set()  # method names shown as choosers (method_chooser)
        self.leaf_hops: dict[int, Hop] = {}  # helper id -> the leaf hop showing it (once per trace; see leaf_shown)

    # -- bookkeeping --------------------------------------------------------------------------------------------
    def add(self, parent: Hop | None, layer: str, kind: str, name: str, file=None, line=None, detail="",
            absent=False, **fields) -> Hop:
        """A hop below `parent`; `fields` are Hop's typed fields (found, conditions, kernel, schema, op)."""
        hop = Hop(len(self.trace.hops), parent.id if parent else None, layer, kind, name, file, line, detail, absent,
                  **fields)
        if parent is not None and parent.id in self.call_notes:  # a hop a noted call adds below the body
            self.call_notes[parent.id].append(hop)
        self.trace.hops.append(hop)
        return hop

    @contextlib.contextmanager
    def noted(self, parent: Hop, under):
        """A call under conditions (`#if`, an `if` the defaults do not take): the hops it adds directly below
        `parent` end in those notes, appended when the call is walked (after what the walk adds to them)."""
        if not under.notes:
            yield
            return
        added: list[Hop] = []
        self.call_notes[parent.id] = added
        try:
            yield
        finally:
            del self.call_notes[parent.id]
            kept = len(self.trace.hops)
            for h in added:
                if h.id < kept and self.trace.hops[h.id] is h:  # not cut since
                    h.detail += under.suffix
                    h.conditions += under.conditions

    def capped(self, items: list, k: int, what: str, parent: Hop | None) -> list:
        """items[:k], the down walk's fan-out cap for `what`, stated where it cuts (a note hop and
        truncated["fan_out"]) and lifted by limit=0 (`--limit 0`)."""
        if self.trace.limit == 0 or len(items) <= k:
            return items
        if parent is not None:
            self.add(parent, parent.layer, "capped", f"{len(items) - k} more {what} not followed (the first {k} "
                     f"are; --limit 0 follows all)", absent=True)
        return items[:k]

    def state_caps(self) -> None:
        """truncated["fan_out"]: the fan-out caps that cut what the trace shows (a capped branch the walk later
        dropped, because it led nowhere, does not count)."""
        cut = [h for h in self.trace.hops if h.kind == "capped"]
        if cut:
            self.trace.cut("fan_out", len(cut), f"{len(cut)} hops follow only the first few of what they lead to "
                           "and say so ('more ... not followed'); --limit 0 (Index.trace(..., limit=0)) follows all")

    def repeat(self, hop: Hop) -> Hop:
        """Mark a hop as a repeat of one shown above (Trace.finish finds which)."""
        self.repeats.add(hop.id)
        hop.detail, hop.shown_above = "(shown above)", True
        return hop

    def truncate(self, mark: int) -> None:
        """Drop the hops from `mark` on (a helper that led nowhere)."""
        del self.trace.hops[mark:]
        self.repeats.difference_update([i for i in self.repeats if i >= mark])
        self.live.difference_update([i for i in self.live if i >= mark])
        while self.call_sites and next(reversed(self.call_sites)) >= mark:  # ids only grow: drop from the end
            self.call_sites.popitem()

    def full(self) -> bool:
        limit = self.trace.max_hops
        if limit and len(self.trace.hops) >= limit:
            self.trace.cut("hops", limit, f"the walk stopped at {limit} hops; raise max_hops (--max-hops N, 0 for "
                           "no limit) to see the rest")
            return True
        return False

    def _prune(self, mark: int, keep_if=_INTERESTING) -> bool:
        """Drop hops added since `mark` unless one of them is interesting; True when kept."""
        if any(h.layer in keep_if or h.id in self.live for h in self.trace.hops[mark:]):
            return True
        self.truncate(mark)
        return False

    # -- where a walk starts --------------------------------------------------------------------------------------
    def start(self, targets: list, name: str) -> None:
        """Walk down from the looked-up targets (opindex.trace.targets.Target)."""
        if all(x.kind == "python_binding" for x in targets):
            alias = self.alias(targets[0].via)
            if alias is None:
                self.binding(name, [x.obj for x in targets])
            else:
                self.alias_binding(name, alias)
        elif all(x.kind == "by_name" for x in targets):
            hop = self.add(None, "python", "by_name", name, detail=f"no Python definition or binding of {name} "
                           f"found; traced as the op {targets[0].obj['name']} by name")
            for target in self.capped(targets, 4, "ops of that name", hop):
                self.tail(target.obj, self.native(target.obj, hop))
        elif len({x.dispatch for x in targets}) == 1 and targets[0].dispatch:
            self.boolean_dispatch(targets)
        else:
            for target in targets:
                self.start_one(target)

    def boolean_dispatch(self, targets: list) -> None:
        """F.max_pool2d = boolean_dispatch(..., if_true=max_pool2d_with_indices, if_false=_max_pool2d): the object,
        at its assignment, then each branch def (the argument's value picks one at run time)."""
        module, _, name = targets[0].dispatch.rpartition(".")
        found = q.rows(self.con, "SELECT file, line FROM python_imports WHERE module = ? AND name = ? AND "
                                 "kind = 'dispatch' ORDER BY line LIMIT 1", (module, name))
        where = found[0] if found else {"file": None, "line": None}
        hop = self.add(None, "python", "boolean_dispatch", targets[0].dispatch, where["file"], where["line"],
                       "boolean_dispatch: calls one of the defs below by the value of an argument (return_indices "
                       "for the max pools)")
        for target in targets:
            self.python_function(target.obj, hop, target.label)
        self.tails_below()

    def start_one(self, target) -> None:
        if target.kind == "native":
            hop = self.native(target.obj, None)
            self.tail(target.obj, hop)
            self.surfaces(target.obj, hop)
        elif target.kind == "python_class":
            self.python_class(target.obj, None, target.label)
            self.tails_below()
        elif target.kind == "python_function":
            self.python_function(target.obj, None, target.label)
            self.tails_below()
        elif target.kind in ("cpp", "global_kernel"):
            hop = self.cpp(target.obj, None, self.depth)
            for r in self.capped(q.dispatch_rows_with_kernel(self.con, target.obj["name"]), 2, "dispatch rows", hop):
                entry = q.native_by_id(self.con, r["native_function_id"])
                self.add(hop, "native", "kernel_of", f"aten::{entry['full_name']}", entry["file"], entry["line"],
                         f"{r['dispatch_key']} kernel of {entry['full_name']}")

    def binding(self, name: str, entries: list[dict]) -> None:
        """torch.add / Tensor.add_: no Python def; every non-out overload the variants bind is walked."""
        entries = [e for e in entries if not e["is_out"]] or entries
        first = entries[0]
        variants = sorted({v.strip() for e in entries for v in e["variants"].split(",")})
        hop = self.add(None, "python", "binding", name, first["file"], first["line"],
                       f"no Python wrapper: bound from variants: {', '.join(variants)} of "
                       f"{', '.join(e['full_name'] for e in entries)}")
        for e in self.capped(entries, 4, "overloads", hop):
            self.tail(e, self.native(e, hop))

    def alias(self, via: tuple[str, ...]) -> dict | None:
        """The module-level assignment a Python name resolved through (`linear = _add_docstr(torch._C._nn.linear,
        ...)` in torch/nn/functional.py): it is the Python hop of a C++ binding, at its line."""
        for step in via[1:]:
            module, _, name = step.rpartition(".")
            found = q.alias_at(self.con, module, name) if module else None
            if found:
                return found
        return None

    def alias_binding(self, name: str, alias: dict) -> None:
        hop = self.add(None, "python", "alias", f"{alias['module']}.{alias['name']}", alias["file"], alias["line"],
                       f"{alias['name']} = {alias['target']} (a C++ binding given a Python name; no Python def)")
        bridges = q.module_bridges_at(self.con, alias["file"], alias["line"])
        for b in bridges:
            self.bridge(b, hop)
        if not bridges:
            self.add(hop, "bridge", "note", f"no bridge recorded at {alias['file']}:{alias['line']}", absent=True)
        self.tails_below()

    def tails_below(self) -> None:
        """Backward, decompositions and codegen of the ops a Python surface reaches directly (first showings)."""
        for h in list(self.trace.hops):
            parent = self.trace.hops[h.parent] if h.parent is not None else None
            if (h.layer == "native" and h.kind == "entry" and parent is not None and parent.layer == "bridge"
                    and h.id not in self.repeats):
                entry = q.native_by_full_name(self.con, h.name.removeprefix("aten::"))
                if entry:
                    self.tail(entry[0], h)

    def tail(self, entry: dict, hop) -> None:
        self.backward_of(entry, hop)
        self.decompositions(entry, hop)
        self.codegen(entry, hop)

    # -- Python ---------------------------------------------------------------------------------------------------
    def python_class(self, cls: dict, parent: Hop | None = None, label: str | None = None) -> Hop:
        hop = self.add(parent, "python", "class", label or cls["qualified_name"], cls["file"], cls["line"],
                       f"class {cls['name']}{bases_text(self.con, cls)}")
        found = [(m, find_method(self.con, cls, m)) for m in ENTRY_METHODS]
        method, forward = next(((m, d) for m, d in found if d is not None), (None, None))
        if forward is None:
            self.add(hop, "python", "note", f"no {'(), '.join(ENTRY_METHODS)}() in this class or its bases",
                     absent=True)
            return hop
        fwd = self.add(hop, "python", method if method == "forward" else "method", forward["qualified_name"],
                       forward["file"], forward["line"], f"def {method}{forward.get('signature') or '(...)'}")
        self.python_body(forward, fwd, python_depth=2)
        return hop

    def python_function(self, fn: dict, parent: Hop | None = None, label: str | None = None) -> Hop:
        hop = self.add(parent, "python", "function", label or fn["qualified_name"], fn["file"], fn["line"],
                       f"def {fn['name']}{fn.get('signature') or '(...)'}")
        composed = q.rows(self.con, "SELECT ops, op_names FROM python_compositions WHERE function = ? AND file = ?",
                          (fn["qualified_name"], fn["file"]))
        if composed:
            hop.detail += f"; composed in Python of {composed[0]['ops']} ops: {composed[0]['op_names']}"
        self.python_body(fn, hop, python_depth=2)
        return hop

    def python_body(self, fn: dict, parent: Hop, python_depth: int) -> None:
        """A Python def's bridges into C++ and the defs and bindings it calls, in source order (the first call of
        an op is walked in full, later ones point up: torch.norm's default `torch.linalg.vector_norm(...)` at
        functional.py:1616 comes before its `_VF.norm(...)` at :1645, whichever way each is found)."""
        bridges = q.rows(self.con, "SELECT * FROM python_bridges WHERE caller = ? AND file = ? ORDER BY line",
                         (fn["qualified_name"], fn["file"]))
        # F.embedding's `if max_norm is not None:` (max_norm=None): the renorm under it is not the default path
        guards = Guards(q.conditions_over(self.con, fn["file"], q.span(fn)), self.device,
                        python_defaults(fn.get("signature")), fn["file"])
        seen: set[tuple[int, str]] = set()
        steps: list[tuple[int, int, dict]] = []  # (line, 0 for a bridge row / 1 for a call, the row)
        for b in bridges:
            if b["op"] not in PLUMBING_OPS and (b["line"], b["op"]) not in seen:
                seen.add((b["line"], b["op"]))
                steps.append((b["line"], 0, b))
        if python_depth > 0:
            steps += [(call["line"], 1, call) for call in q.rows(
                self.con, "SELECT * FROM calls WHERE caller = ? AND file = ? AND language = 'python' ORDER BY line",
                (fn["qualified_name"], fn["file"])) if (call["line"], call["callee"]) not in seen]  # not bridges
        steps.sort(key=lambda step: step[:2])
        for _, is_call, row in steps:
            if self.full():
                return
            if not is_call:
                with self.noted(parent, guards.at(row["line"])):
                    self.bridge(row, parent)
            else:
                self.python_call(fn, row, parent, guards, python_depth)

    def python_call(self, fn: dict, call: dict, parent: Hop, guards: Guards, python_depth: int) -> None:
        """A call in a Python def: into another def (walked) or a binding found through names (a bridge)."""
        if call["qualifier"] in ("self", "cls"):
            target = self_method(self.con, fn, call["callee"])
        else:
            target = follow_python(self.con, module_of(self.con, fn), call["qualifier"], call["callee"])
        if target is None:
            return
        kind, obj = target
        mark = len(self.trace.hops)
        with self.noted(parent, guards.at(call["line"])):
            if kind == "def" and obj["qualified_name"] != fn["qualified_name"]:
                hop = self.add(parent, "python", "calls", obj["qualified_name"], obj["file"], obj["line"],
                               f"{_dotted(call)}(...) at {call['file']}:{call['line']}")
                self.python_body(obj, hop, python_depth - 1)
                self._prune(mark + 1, keep_if={"bridge"}) or self._prune(mark, keep_if={"bridge"})
            elif kind == "bridge" and obj.get("alias_file"):
                # torch.linalg.vector_norm(...): the hop is the assignment that names the binding, called here
                hop = self.bridge({**obj, "file": obj["alias_file"], "line": obj["alias_line"]}, parent)
                hop.called_at = f"{call['file']}:{call['line']}"
                hop.detail += f" (its Python name is assigned here; called at {hop.called_at})"
            elif kind == "bridge":
                self.bridge({**obj, "file": call["file"], "line": call["line"]}, parent)

    def bridge(self, b: dict, parent: Hop) -> Hop:
        hop = self.add(parent, "bridge", b["kind"], b["text"], b["file"], b["line"], _bridge_detail(b))
        entries = bridged_entries(self.con, b)
        if not entries and b["kind"] == "tensor_method":
            self.truncate(hop.id)  # x.dim(), x.size(): a method of the Python object, not an op
            return hop
        if not entries:
            self.add(hop, "native", "note", f"no native_functions.yaml entry named {b['op']}", absent=True)
        for entry in self.capped(entries, MAX_OVERLOADS, "overloads", hop):
            self.native(entry, hop)
        return hop

    # -- YAML -----------------------------------------------------------------------------------------------------
    def native(self, entry: dict, parent: Hop | None, depth: int | None = None) -> Hop:
        depth = self.depth if depth is None else depth
        hop = self.add(parent, "native", "entry", f"aten::{entry['full_name']}", entry["file"], entry["line"],
                       entry["schema"], schema=entry["schema"], op=entry["full_name"])
        if entry["id"] in self.seen_native:
            if entry["id"] in self.useful_native or any(
                    a.kind == "entry" and a.name == hop.name for a in self.trace.path(hop)[:-1]):
                # reached again: what it leads to is shown above (or is being shown: roll_cuda's roll_common calls
                # at::roll again, for the flattened tensor)
                self.live.add(hop.id)
            return self.repeat(hop)
        self.seen_native.add(entry["id"])
        if not entry["structured_delegate"]:
            self.dispatch(entry, hop, depth)
            return hop
        found = q.native_by_full_name(self.con, entry["structured_delegate"])
        if not found:
            self.add(hop, "native", "note", f"structured_delegate {entry['structured_delegate']} not found",
                     absent=True)
            return hop
        target = found[0]
        delegate = self.add(hop, "native", "structured_delegate", f"aten::{target['full_name']}", target["file"],
                            target["line"], f"structured_delegate: {target['full_name']} holds the kernels")
        self.meta(entry, delegate)
        if target["id"] in self.useful_native:  # matmul's tensor1.mm(...) after its at::mm_out(...): mm.out led
            self.live.add(delegate.id)  # to device code above; the call is kept, its kernels marked shown above
        self.seen_native.add(target["id"])
        self.dispatch(target, delegate, depth)
        return hop

    def meta(self, entry: dict, parent: Hop) -> None:
        """The structured kernel's meta function (TORCH_META_FUNC2(add, Tensor) for add.Tensor): shape checks and
        the output's allocation, run before the device kernel."""
        base = entry["name"]
        found = []
        # an in-place op (scatter_add_, add_.Tensor) has the meta function of its functional op (scatter_add,
        # TORCH_META_FUNC2(add, Tensor))
        for op in dict.fromkeys((base, base.rstrip("_"))):
            found = found or q.meta_functions(self.con, f"{op}_{entry['overload']}" if entry["overload"] else op)
        for d in found[:1]:
            hop = self.add(parent, "cpp", d["kind"], d["qualified_name"], d["file"], d["line"],
                           f"TORCH_META_FUNC of {entry['full_name']}: checks the inputs and sets up the output")
            self.body_helpers(d, hop)

    def body_helpers(self, d: dict, hop: Hop) -> None:
        """The helpers without device code a body that is not walked calls (a meta function's
        common_checks_baddbmm_bmm, meta_func_cum_ops), as helper_leaves shows them for walked bodies."""
        guards = self.guards(d)
        for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
            if call["is_method"] or guards.at(call["line"]).off or \
                    (call["qualifier"], call["callee"]) not in q.linked_callees(self.con, call["file"]):
                continue
            links = q.call_targets(self.con, call["file"], call["qualifier"], call["callee"], call.get("template_args"))
            self._leaf(call, links, hop)
        self.helper_leaves(hop)

    def dispatch(self, entry: dict, parent: Hop, depth: int) -> None:
        all_rows = q.dispatch_rows(self.con, entry["id"])
        chosen = q.rows_for_device(all_rows, self.device)
        for loop in q.ufunc_loops(self.con, entry["id"]):
            self.ufunc_loop(loop, parent)
        self.implicit.append(bool(chosen) and all(r["dispatch_key"] in IMPLICIT_KEYS for r in chosen))
        self.defaults.append(entry)
        try:
            self._dispatch(entry, parent, depth, all_rows, chosen)
        finally:
            self.implicit.pop()
            self.defaults.pop()

    def _dispatch(self, entry: dict, parent: Hop, depth: int, all_rows: list[dict], chosen: list[dict]) -> None:
        if not chosen:
            keys = ", ".join(sorted({r["dispatch_key"] for r in all_rows})) or "none"
            self.add(parent, "dispatch", "note", f"no {self.device.upper()} kernel for {entry['full_name']} "
                     f"(dispatch keys: {keys})", absent=True)
            return
        by_kernel: dict[str, list[str]] = {}
        for r in chosen:
            by_kernel.setdefault(r["kernel"], []).append(r["dispatch_key"])
        for kernel, keys in by_kernel.items():
            row = next(r for r in chosen if r["kernel"] == kernel)
            implicit = " (implicit: no dispatch: entry)" if row["implicit"] else ""
            hop = self.add(parent, "dispatch", ", ".join(keys), f"{', '.join(keys)}: {kernel}", row["file"],
                           row["line"], f"dispatch {', '.join(keys)}: {kernel}{implicit}")
            if kernel.startswith("ufunc_"):
                cg = self.add(hop, "codegen", "ufunc", f"{kernel} is generated by torchgen's ufunc codegen "
                              "(torchgen/dest/ufunc.py) from the ufunc_inner_loop entries above")
                self.ufunc_codegen(kernel.rsplit("_", 1)[-1].lower(), cg)
                continue
            # rows "CPU, CUDA: k" share a kernel name: the CUDA row's link prefers the definition in CUDA code
            linked = next((r for r in chosen if r["kernel"] == kernel and r["dispatch_key"] == "CUDA"), row)
            self.kernel_definitions(linked, kernel, hop, depth)

    def ufunc_codegen(self, key: str, parent: Hop) -> None:
        """The torchgen def that writes a ufunc kernel for a key (compute_ufunc_cuda), the launcher calls the C++ it
        writes makes (generated_launches), and the launch machinery they go through."""
        for gen in q.python_defs_named(self.con, f"compute_ufunc_{key}"):
            gh = self.add(parent, "codegen", "generator", gen["qualified_name"], gen["file"], gen["line"],
                          f"writes the {key.upper()} kernel of each ufunc op at build time")
            for g in q.generated_launches(self.con, gen):
                lh = self.add(gh, "cuda", "tensor_iterator", g["launcher"], g["file"], g["line"],
                              f"tensor_iterator launch via {g['launcher']} in the generated code (written by "
                              f"{g['function']}); the op's body is the ufunc functor it is handed")
                for d in q.launcher_definitions(self.con, g["launcher"]):
                    if runs_on(d["file"], self.device):  # walked once; later a "(shown above)" hop
                        self.cpp(d, lh, self.depth, kind="launcher")

    def ufunc_loop(self, loop: dict, parent: Hop) -> None:
        defs = [s for s in q.symbols_named(self.con, loop["loop"]) if "/ufunc/" in s["file"]]
        if defs:
            d = defs[0]
            self.add(parent, "cpp", "ufunc_inner_loop", f"{loop['ufunc_key']}: {d['qualified_name']}", d["file"],
                     d["line"], f"ufunc_inner_loop {loop['ufunc_key']}: {loop['loop']} ({loop['dtypes'] or ''})")
        else:
            self.add(parent, "cpp", "ufunc_inner_loop", f"{loop['ufunc_key']}: {loop['loop']}", loop["file"],
                     loop["line"], "no definition found under native/ufunc/", absent=True)

    # -- C++ ------------------------------------------------------------------------------------------------------
    def kernel_definitions(self, row: dict, kernel: str, parent: Hop, depth: int) -> None:
        """The definitions a dispatch row's kernel name denotes (op_kernel_links: chosen ones walked)."""
        links = q.kernel_links(self.con, row["id"])
        chosen = [ln for ln in links if ln["chosen"] and ln["symbol_id"] is not None]
        elsewhere = [ln for ln in chosen if not runs_on(ln["def_file"], self.device)]
        if elsewhere and len(elsewhere) == len(chosen):
            where = ", ".join(f"{ln['def_file']}:{ln['def_line']}" for ln in elsewhere[:2])
            self.add(parent, "cpp", "note", f"{kernel} is defined only in another platform's code ({where}): not "
                     f"run on {self.device.upper()}", absent=True)
            return
        chosen = [ln for ln in chosen if ln not in elsewhere]
        if not chosen:
            if self.legacy_kernel(kernel, parent, depth):
                return
            self.add(parent, "cpp", "note", f"no C++ definition of {kernel} found by opindex (none in its index: it may "
                     "be written by a macro opindex does not expand, e.g. one defined in another file, or generated "
                     "at build time)", absent=True)
            return
        rest = [ln for ln in links if not ln["chosen"]]
        hop = None
        for ln in chosen:
            d = q.symbol_by_id(self.con, ln["symbol_id"])
            raises = self.only_raises(d)
            if raises:  # sort(Tensor, Dimname): a named-tensor overload PyTorch declares but does not implement
                self.add(parent, "cpp", "raises", f"{kernel} ({d['file']}:{d['line']}) only raises ({raises}): this "
                         f"overload runs no kernel", d["file"], d["line"], absent=True)
                continue
            hop = self.cpp(d, parent, depth)
            if len(chosen) > 1:
                hop.detail += f" [one of {len(chosen)} C++ overloads of {kernel} in this file]"
                hop.found = Found.OVERLOADS
            if ln["condition"]:
                hop.detail += f" [#if {ln['condition']}]"
                hop.conditions.append(Condition("#if", ln["condition"], d["file"]))
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
        hop = self.add(parent, "cpp", "legacy_declaration", f"{kernel} (generated at build time)",
                       first["decl_file"], first["decl_line"],
                       f"no source definition: the build writes {kernel} from the declaration {first['declaration']} "
                       f"here; it calls {', '.join(dict.fromkeys(ln['cname'] for ln in links))} for each dtype")
        for ln in links:
            if ln["symbol_id"] is not None:
                self.cpp(q.symbol_by_id(self.con, ln["symbol_id"]), hop, depth, kind="generated_call")
        return True

    def cpp(self, d: dict, parent: Hop, depth: int, kind: str | None = None,
            call_site: tuple[str, int] | None = None) -> Hop | None:
        key = d["id"]  # by definition: the gemm<float> and gemm<double> specialisations are two
        if q.runs_what_it_is_passed(self.con, key):
            # split_batch_dim_to_32bit_out calls the worker its caller passes (the forward one from Conv_v7.cpp:791,
            # the backward-input one from :909): what it leads to depends on the caller, so once per caller
            key = (key, parent.name, parent.file)
        hop = self.add(parent, "cpp", kind or d["kind"], d["qualified_name"], d["file"], d["line"],
                       _cpp_detail(d))
        if call_site is not None:
            self.call_sites[hop.id] = call_site
            hop.called_at = f"{call_site[0]}:{call_site[1]}"
        if key in self.seen_cpp:
            if key in self.useful_cpp:  # _embedding_bag's kernel, walked for _embedding_bag_forward_only above: the
                self.live.add(hop.id)   # op leads to device code, shown there
            return self.repeat(hop)
        self.seen_cpp.add(key)
        if d["kind"] == "global_kernel":
            hop.layer = "cuda"
        if d.get("from_macro"):  # foreach_tensor_add_list_kernel_cuda_, written by FOREACH_BINARY_OP_LIST_ALPHA(...)
            m = q.macro_definition(self.con, d["from_macro"], d["file"])
            if m is not None:
                self.add(hop, "cpp", "macro", f"#define {m['name']}", m["file"], m["line"],
                         f"the macro whose use at {d['file']}:{d['line']} writes {d['name']}: its body is the code")
        mark = len(self.trace.hops)
        self.body(d, hop, depth)
        if any(h.layer in DEVICE_LAYERS for h in self.trace.hops[mark:]):
            self.useful_cpp.add(key)
        return hop

    def body(self, d: dict, hop: Hop, depth: int) -> None:
        if d.get("kind") in DEVICE_CODE:
            self.device_calls(d, hop)
            return
        caller, file, lines = d["qualified_name"], d["file"], q.span(d)
        guards = self.guards(d)
        sites = [t for t in q.in_function(self.con, "type_dispatches", caller, file, lines)
                 if not guards.at(t["line"]).off]
        for t in self.capped(sites, 2, "AT_DISPATCH sites", hop):
            self.add(hop, "cpp", "AT_DISPATCH", t["macro"], t["file"], t["line"],
                     f"{t['macro']}(..., \"{t['name'] or ''}\", ...): dtypes {t['dtypes']}")
        reach = d["reach"] if "reach" in d else q.device_reach_distance(self.con, d["id"])
        if reach != 0:  # it launches, calls a library or a stub itself only at distance 0 (device_reach)
            self.calls(d, hop, depth)
            return
        for s in q.in_function(self.con, "stub_calls", caller, file, lines):
            under = guards.at(s["line"])
            if not under.off:
                with self.noted(hop, under):
                    self.stub(s, hop, depth, d)
        for launch in q.in_function(self.con, "kernel_launches", caller, file, lines):
            under = guards.at(launch["line"])
            if launch["kernel"] != d["name"] and not under.off:  # gpu_kernel(sub_iter, f) in gpu_kernel: a recursion
                with self.noted(hop, under):
                    self.launch(launch, hop)
        wrappers = set()
        for lib in q.in_function(self.con, "library_calls", caller, file, lines):
            under = guards.at(lib["line"])
            if not under.off:
                with self.noted(hop, under):
                    self.library_call(lib, d, hop, depth, wrappers)
        self.calls(d, hop, depth, skip=wrappers)

    def library_call(self, lib: dict, d: dict, hop: Hop, depth: int, wrappers: set) -> None:
        """A library call; PyTorch's own wrapper of one (at::cuda::blas::gemm<T>) is followed to the vendor call it
        makes (its line and name go into `wrappers`: the body's calls skip it)."""
        lh = self.add(hop, "library", lib["library"], lib["function"], lib["file"], lib["line"],
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
        seen_ops: set[str] = launched | {d["name"]}
        seen_helpers: set[tuple[str, str]] = set()
        walked_ops: dict[str, int] = {}  # op name -> where its first call's hops start
        writes: list[dict] = []  # calls of plumbing ops that write (zeros, copy_): shown by their default path
        own = q.device_reach(self.con, d["id"]) if "id" in d else None
        # a kernel whose only device work is the ops it calls forwards to them: they do not use up --depth
        forwards = own is not None and own["distance"] == 0 and own["reaches"] == "op"
        # the helpers this body calls itself are walked at its own call, not first inside a sibling helper that
        # calls them too (copy_device_to_device calls conj_kernel_cuda, which calls direct_copy_kernel_cuda, and
        # direct_copy_kernel_cuda itself: the plain copy's path is the direct call)
        reserved = [i for i in self.direct_helpers(d) if i not in self.reserved and i not in self.seen_cpp]
        self.reserved.update((i, d["qualified_name"]) for i in reserved)
        # the same for ops: cross_entropy_loss_symint's default branch calls at::log_softmax and at::nll_loss_nd
        # itself; its label-smoothing helper, called first, calls them too (the default path is the direct call)
        ops = [n for n in self.direct_ops(d, seen_ops) if n not in self.reserved_ops]
        self.reserved_ops.update((n, d["qualified_name"]) for n in ops)
        try:
            self._calls(d, hop, depth, skip, launched, seen_ops, seen_helpers, walked_ops, writes, forwards)
        finally:
            for i in reserved:
                self.reserved.pop(i, None)
            for n in ops:
                self.reserved_ops.pop(n, None)

    def direct_helpers(self, d: dict) -> list[int]:
        """Ids of the definitions this body's own helper calls reach (those local_call would walk)."""
        out = []
        for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
            qual, name = call["qualifier"], call["callee"]
            if call["is_method"] or qual in ("at", "at::_ops") or qual.startswith(("c10", "std", "TORCH")):
                continue
            out += [ln["id"] for ln in q.call_targets(self.con, call["file"], qual, name, call.get("template_args"))
                    if ln["reach"] is not None and runs_on(ln["def_file"], self.device)]
        return out

    def device_calls(self, d: dict, hop: Hop) -> None:
        """What a __global__ kernel or a __device__ function calls of the __device__ functions (call_links): a
        `device_call` hop each (scatter_add's kernel -> fastAtomicAdd, KernelUtils.cuh), followed through their own
        calls; each function once per trace, later `(shown above)`; the overloads of one name as one hop at the
        first; at most MAX_DEVICE_CALLS per body, said where it cuts (--limit 0 lifts both)."""
        guards, found = self.guards(d), {}
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
        for call, ln in self.capped(list(found.values()), MAX_DEVICE_CALLS, "__device__ functions called", hop):
            if self.full():
                return
            target = q.symbol_by_id(self.con, ln["id"])
            many = ""
            if ln["overloads"] > 1 and self.trace.limit == 0:
                many = f" [one of {ln['overloads']} overloads the call may reach]"
            elif ln["overloads"] > 1:
                many = f" [the first of {ln['overloads']} overloads the call may reach; --limit 0 shows each]"
            h = self.add(hop, "cuda", "device_call", f"__device__ {target['qualified_name']}", target["file"],
                         target["line"], _cpp_detail(target) + many)
            h.called_at = f"{call['file']}:{call['line']}"
            key = ("device", target["id"])
            if key in self.seen_cpp:
                self.repeat(h)
                continue
            self.seen_cpp.add(key)
            self.device_calls(target, h)

    def guards(self, d: dict) -> Guards:
        """The #if branches and if blocks over a body, read with the defaults of the op being walked (once per body
        and op: body(), calls() and device_calls() ask in turn)."""
        schema = self.defaults[-1]["schema"] if self.defaults else None
        key = (d.get("qualified_name"), d.get("file"), d.get("line"), schema)
        found = self.guard_cache.get(key)
        if found is None:
            defaults = schema_defaults(schema, d.get("signature")) if schema else {}
            found = self.guard_cache[key] = Guards(
                q.conditions_over(self.con, d["file"], q.span(d)) if d.get("file") else [], self.device, defaults,
                d.get("file"))
        return found

    def direct_ops(self, d: dict, skip: set[str]) -> list[str]:
        """The ops this body calls by their API (at::x(...), not a method: its receiver may not be a Tensor) that
        the walk has not shown yet."""
        out = []
        for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
            name = call["callee"]
            if call["is_method"] or name in skip or name in out or name.removesuffix("_symint") in PLUMBING_OPS:
                continue
            if op_api_call(call["qualifier"], d.get("qualified_name") or "",
                           (call["qualifier"], name) in q.linked_callees(self.con, call["file"])):
                entries = q.native_for_cpp_api(self.con, name)
                if entries and not all(e["id"] in self.seen_native for e in entries):
                    out.append(name)
        return out

    def _calls(self, d: dict, hop: Hop, depth: int, skip, launched, seen_ops, seen_helpers, walked_ops, writes,
               forwards) -> None:  # noqa: PLR0913 - the body's state, set up by calls()
        st = (skip, launched, seen_ops, seen_helpers, walked_ops, writes, forwards)
        guards = self.guards(d)  # asked again per body (cheap): calls() is entered without body() for some
        for call in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d)):
            if self.full():
                return
            under = guards.at(call["line"])
            if under.off:
                continue  # `#ifdef __HIP_PLATFORM_HCC__` on --device cuda: another platform's build compiles it
            with self.noted(hop, under):
                self._call(call, d, hop, depth, *st)
        self.helper_leaves(hop)
        if writes and not self.full():  # after the body's own work: ranked after it too (model.rank_end)
            for call in self.capped(writes, 3, "fill/copy calls", hop):
                entries = [e for e in q.native_for_cpp_api(self.con, call["callee"])
                           if not call["is_method"] or "method" in e["variants"]]
                if entries:
                    # grad_input.zero_() before the op's own kernel, or all select_backward does (at::zeros, then
                    # copy_): kernels the GPU runs too, each shown by its default path (copy_ has ~1,000 hops)
                    self.write_call(call, entries, hop)

    def _call(self, call: dict, d: dict, hop: Hop, depth: int, skip, launched, seen_ops, seen_helpers, walked_ops,
              writes, forwards) -> None:  # noqa: PLR0913 - the body's state, set up by calls()
        qual, name = call["qualifier"], call["callee"]
        if call["is_method"] and name in TENSOR_OPERATORS:
            if not operand_may_be_tensor(self.con, qual):
                return  # `at::has_internal_overlap(self) == MemOverlap::Yes`: not a Tensor operand
            name = TENSOR_OPERATORS[name]  # `(1 - ls) * nllloss` calls nllloss.mul(...): the op aten::mul
        if (call["line"], name) in skip:
            return  # a library wrapper, walked from its library hop
        temporary = name == "operator()" and not call["is_method"] and "::" not in qual  # OpFunctor<T>{}(iter)
        if "id" in d and (call["is_method"] or not qual or temporary) and (qual, name) not in seen_helpers:
            # sorter.sort<A>(...) where a caller passed SmallBitonicSort{} for sorter; func_32bit(...) where a
            # caller passed raw_cudnn_convolution_forward_out_32bit for func_32bit; OpFunctor<at::Half, float>{}(iter)
            # where a caller wrote reduce_dispatch<sum_functor>(...)
            passed = q.functors_of(self.con, d["id"], qual, name) if call["is_method"] else \
                q.functors_of(self.con, d["id"], qual if temporary else name, "")
            if passed:
                seen_helpers.add((qual, name))
                self.functor_call(call, passed, hop, depth)
                return
        if call["is_method"] or op_api_call(qual, d.get("qualified_name") or "",
                                            (qual, name) in q.linked_callees(self.con, call["file"])):
            # at::x(...) and tensor.x(...) both go through the dispatcher when x is an op; at::cuda::x(...) calls
            # x's CUDA kernel (torchgen's per-key API); a bare x(...) in namespace at is at::x
            base = name.removesuffix("_symint")  # at::zeros_symint, select_symint: the op's own name
            if base in WRITING_PLUMBING and base not in seen_ops:
                seen_ops.add(base)
                writes.append(call)
            if name in walked_ops and walked_ops[name] < len(self.trace.hops) and not self.full():
                # the same op called again in this body (embedding: index_select at two lines): the call is a
                # hop, what it leads to is shown at the first
                again = self.add(hop, "native", "calls_op", _op_call_text(call), call["file"], call["line"])
                self.repeat(again)
                self.live.add(again.id)
                return
            if name in seen_ops or base in PLUMBING_OPS:
                return
            entries = q.native_for_cpp_api(self.con, name)
            if call["is_method"]:
                entries = [e for e in entries if "method" in e["variants"]]
                if entries and not may_be_tensor(qual, d.get("signature"), q.receiver_type(
                        self.con, call["file"], call["line"], qual)):
                    return  # options.device().index(): a method of c10::Device, not the op aten::index
                if not entries:
                    self.method_chooser(call, hop)
                    return
            seen_ops.add(name)
            owner = self.reserved_ops.get(name)
            if entries and owner is not None and owner != d.get("qualified_name"):
                below = self.add(hop, "native", "calls_op", _op_call_text(call), call["file"], call["line"],
                                 f"calls the op {', '.join(e['full_name'] for e in entries[:3])} (shown below, "
                                 f"where {owner} calls it directly)")
                self.live.add(below.id)
                return
            if entries:
                mark = len(self.trace.hops)
                self.op_call(call, entries, hop, depth, forwards)
                if len(self.trace.hops) > mark:  # shown (not pruned): a later call of it points here
                    walked_ops[name] = mark
            return
        if qual.startswith(("c10", "std", "TORCH")):
            return
        # gemm_internal_cublas<float>, <double>: two; so are two instantiations of one template written with other
        # arguments (1.8 cat_out_cuda's parallel_cat<scalar_t, CAT_ARRAY_BATCH_SIZE, 1> and <..., /2, /2>): the
        # second is a hop, its body shown at the first
        helper = (qual, name, q.specialization(self.con, call) or call.get("template_args"))
        # a function calling another of its own name (DistributionExponentialKernel.cu's exponential_kernel calls
        # templates::cuda::exponential_kernel) is not a recursion unless the call links back to it
        own = name == d.get("name") and name not in launched and not any(
            t["id"] == d.get("id") for t in q.call_targets(self.con, call["file"], qual, name))
        if (name not in seen_ops or own) and helper not in seen_helpers:
            seen_helpers.add(helper)  # sbtopk::launch and mbtopk::launch are two helpers
            if (qual, name) not in q.linked_callees(self.con, call["file"]):
                if qual.startswith("legacy::"):  # 1.4's bmm_cuda: legacy::cuda::_th_bmm(...), built from a
                    self.legacy_kernel(f"{qual}::{name}", hop, depth)  # Declarations.cwrap entry
                return  # no definition this call reaches (std::max, a lambda, a macro-made name)
            if not qual and self.foreign_kernel(name):
                # roll_common (TensorTransformations.h), reached from roll_cuda: `roll(flattened, ...)` links to
                # at::native::roll, the CPU/MPS kernel, which the CUDA file does not declare: there C++ finds
                # at::roll (ATen/ops/roll.h), the op, back through the dispatcher
                entries = q.native_for_cpp_api(self.con, name)
                if entries and name not in seen_ops:
                    seen_ops.add(name)
                    self.op_call(call, entries, hop, depth, forwards)
                return
            if self.plumbing_kernel(name):
                if name in WRITING_PLUMBING and name not in seen_ops:  # addmm_out_cuda_impl's
                    seen_ops.add(name)  # `at::native::copy_(result, *self_)`: a copy kernel the GPU runs
                    writes.append(call)
                return  # at::native::empty_cuda(...): the kernel of an allocation op, called directly
            choice = q.choice_at(self.con, call)
            if choice is not None:
                self.chooser(call, choice, hop)
            self.local_call(call, d, hop, depth, leaves=choice is None)

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
            h = self.add(hop, "cpp", "chooser", target["qualified_name"], target["file"], target["line"], detail,
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
        h = self.add(hop, "cpp", "chooser", target["qualified_name"], target["file"], target["line"],
                     f"chooses the path: {test.text} at {call['file']}:{call['line']}", conditions=[test])
        h.called_at = f"{call['file']}:{call['line']}"

    def write_call(self, call: dict, entries: list[dict], hop: Hop) -> None:
        """A fill or copy a kernel makes besides its own work (nll_loss_backward's grad_input.zero_()): the call, then
        the default path of that op on the device, down to its kernel; the first time only, later ones point up."""
        entries = [e for e in entries if self.runs_here(e)]
        if not entries:
            return
        path = write_path(self.con, entries, self.device, _walk_ops)
        if not path:
            return  # leads to no device code: nothing to show
        ops = ", ".join(e["full_name"] for e in entries[:3])
        when = CONDITIONAL_WRITES.get(entries[0]["name"])
        how = f"calls the op {ops}" if call["qualifier"] != "at::native" else \
            f"calls the kernel of {ops} itself (not through the dispatcher)"
        head = self.add(hop, "native", "writes", _op_call_text(call), call["file"], call["line"],
                        f"{how}: a fill/copy{' (' + when + ')' if when else ''}; below, the default path "
                        f"of aten::{entries[0]['name']} on {self.device.upper()} and the other device code it can run")
        key = tuple(e["id"] for e in entries)
        if key in self.seen_writes:
            self.live.add(head.id)
            self.repeat(head)
            return
        self.seen_writes.add(key)
        added: list[Hop] = []
        for above, h in path:
            added.append(self.add(added[above] if above >= 0 else head, h.layer, h.kind, h.name, h.file, h.line,
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
            mark, seen = len(self.trace.hops), target["id"] in self.seen_cpp
            self.cpp(target, hop, depth, kind="functor", call_site=(call["file"], call["line"]))
            if seen and target["id"] in self.useful_cpp:
                self.live.add(mark)  # passed here too (sum_functor, also called at its caller): shown above
            called = f"{call['qualifier']}.{call['callee']}" if call["is_method"] else call["callee"]
            self.trace.hops[mark].detail += f" [{called}(...): {f['functor']} passed at {f['file']}:{f['line']}]"

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

    def op_call(self, call: dict, entries: list[dict], hop: Hop, depth: int, forwards: bool = False) -> None:
        """A kernel calling another op (at::clamp_min): back into the YAML layer. Shown when it leads to device
        code; a composite callee does not use up --depth (its work is in the ops it calls), nor does the op a
        forwarding kernel calls (_scaled_dot_product_flash_attention_cuda -> at::_flash_attention_forward)."""
        entries = [e for e in entries if self.runs_here(e)]
        if not entries:
            return  # `if (self.is_mkldnn()) return at::mkldnn_linear(...)`: no kernel of it runs on this device
        if forwards:
            depth = max(depth, 1)
        if depth <= 0 or self.nest >= MAX_NEST:
            self.leaf_op_call(hop, call, entries, "(raise --depth to follow)")
            return
        mark, saved = len(self.trace.hops), self._snapshot()
        head = self.add(hop, "native", "calls_op", _op_call_text(call), call["file"], call["line"],
                        f"calls the op {', '.join(e['full_name'] for e in entries[:3])}: back into the YAML layer")
        self.nest += 1
        try:
            through_composite = bool(self.implicit) and self.implicit[-1]
            walked = self.capped(entries, 2, "overloads the call may reach", head)
            for e in walked:
                # a composite callee is free only near the top: deeper ones are helpers, not the algorithm
                free = (self.composite(e) or forwards) and self.nest <= COMPOSITE_FREE_NEST
                nh = self.native(e, head, depth if free else depth - 1)
                if through_composite:  # autograd of a CompositeImplicitAutograd op is that of the ops it calls
                    self.autograd_of(e, nh)
        finally:
            self.nest -= 1
        if self._prune(mark, keep_if=DEVICE_LAYERS):
            self.useful_native.update(e["id"] for e in walked)
        else:
            self._restore(saved)
            # --depth only adds: an op call a shallower trace lists unexpanded stays, as a leaf, when it leads on
            # to no device code
            self.leaf_op_call(hop, call, entries, ": leads to no device code opindex found")

    def only_raises(self, d: dict) -> str | None:
        """The not-implemented call a definition consists of, if that is all it calls."""
        callees = {c["callee"] for c in q.calls_in(self.con, d["qualified_name"], d["file"], q.span(d))}
        return next(iter(callees)) if len(callees) == 1 and callees <= NOT_IMPLEMENTED else None

    def leaf_op_call(self, hop: Hop, call: dict, entries: list[dict], note: str) -> None:
        """An op call listed, not followed: at most MAX_UNEXPANDED per function, the cap said once where it cuts."""
        count = self.unexpanded.get(hop.id, 0)
        if count < MAX_UNEXPANDED or self.trace.limit == 0:
            self.unexpanded[hop.id] = count + 1
            sep = "" if note.startswith(":") else " "
            self.add(hop, "native", "calls_op", _op_call_text(call), call["file"], call["line"],
                     f"calls the op {', '.join(e['full_name'] for e in entries[:3])}{sep}{note}")
        elif count == MAX_UNEXPANDED:
            self.unexpanded[hop.id] = count + 1  # said once per function
            self.add(hop, hop.layer, "capped", f"more op calls here not listed (the first {MAX_UNEXPANDED} are; "
                     "--depth follows them, --limit 0 lists all)", absent=True)

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
            hop = self.add(parent, "backward", "derivative", f"derivatives.yaml: {der['full_name']}", der["file"],
                           der["line"], f"{der['schema']} ({COMPOSITE_CALLEE})", found=Found.COMPOSITE_CALLEE)
            for f in q.formulas(self.con, der["id"]):
                if not f["is_forward"]:
                    fh = self.add(hop, "backward", "formula", f"{f['inputs']}: {f['formula']}", f["file"], f["line"],
                                  "grad formula")
                    if self.backward:  # --backward: the ops the formula calls, as for an op's own formulas
                        for op in self.capped(backward_ops(self.con, f["formula"]), 3, "ops of the formula", fh):
                            self.native(op, fh, 0)

    def composite(self, entry: dict) -> bool:
        """True when `device` runs this op through a Composite* kernel (no kernel of the device's own)."""
        if entry["structured_delegate"]:
            found = q.native_by_full_name(self.con, entry["structured_delegate"])
            entry = found[0] if found else entry
        rows = q.rows_for_device(q.dispatch_rows(self.con, entry["id"]), self.device)
        return bool(rows) and all(r["dispatch_key"] in q.COMPOSITE_KEYS for r in rows)

    def _snapshot(self):
        return (set(self.seen_native), set(self.seen_cpp), set(self.seen_stub), set(self.useful_cpp),
                set(self.useful_native))

    def _restore(self, saved) -> None:
        self.seen_native, self.seen_cpp, self.seen_stub, self.useful_cpp, self.useful_native = \
            (set(x) for x in saved)

    def local_call(self, call: dict, d: dict, hop: Hop, depth: int, kind: str = "calls", leaves: bool = False) -> None:
        """A helper the kernel calls (LayerNormKernelImpl, addmm_out_cuda_impl): followed through any number of
        levels when device code or an op is reachable from it (device_reach), and shown only if it leads on. With
        `leaves`, one that leads to no device code is kept for helper_leaves. A call that may reach several C++
        overloads walks each, marked."""
        links = [ln for ln in q.call_targets(self.con, call["file"], call["qualifier"], call["callee"],
                                             call.get("template_args"))
                 if runs_on(ln["def_file"], self.device)  # miopen/ on --device cuda: the ROCm build's code
                 and not ln["device_function"]]  # only device code calls those (device_calls)
        if leaves:
            self._leaf(call, links, hop)
        for target in links:
            if target["reach"] is not None and target["kind"] in ("struct", "class"):
                self.functor_body(call, target, hop, len(links))
                continue
            seen = target["id"] in self.seen_cpp
            if (seen and target["id"] not in self.useful_cpp) or target["reach"] is None:
                continue  # leads to no launch, library call, stub or op (or did not, above): nothing to walk
            owner = self.reserved.get(target["id"])
            if not seen and owner is not None and owner != d.get("qualified_name"):
                below = self.add(hop, "cpp", kind, target["qualified_name"], target["file"], target["line"],
                                 f"(shown below, where {owner} calls it directly)")
                below.called_at = f"{call['file']}:{call['line']}"
                self.live.add(below.id)
                continue
            mark = len(self.trace.hops)
            self.cpp(target, hop, depth, kind=kind, call_site=(call["file"], call["line"]))
            if len(links) > 1:
                self.trace.hops[mark].detail += f" [one of {len(links)} overloads the call may reach]"
                self.trace.hops[mark].found = Found.OVERLOADS
            if target["link_condition"]:
                self.trace.hops[mark].detail += f" [#if {target['link_condition']}]"
                self.trace.hops[mark].conditions.append(Condition("#if", target["link_condition"], target["file"]))
            if seen:
                self.live.add(mark)  # called here too; what it leads to is shown above
            elif self._prune(mark + 1):
                self.useful_cpp.add(target["id"])
            else:
                self.seen_cpp.discard(target["id"])
                self.truncate(mark)

    def _leaf(self, call: dict, links: list[dict], hop: Hop) -> None:
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
        for call, target, overloads in self.capped(found, MAX_HELPERS, "helpers without device code", hop):
            if self.full():
                return
            d = q.symbol_by_id(self.con, target["id"])
            h = self.add(hop, "cpp", "helper", d["qualified_name"], d["file"], d["line"],
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

    def functor_body(self, call: dict, target: dict, hop: Hop, overloads: int) -> None:
        """A call that builds a functor object (`binary_internal::MulFunctor<opmath_t>()`, handed to
        opmath_symmetric_gpu_kernel_with_scalars; `BinaryOpListAlphaFunctor<...>()`, handed to multi_tensor_apply):
        the op's own body, whose __device__ operator() the kernel runs (the profiler's kernel name carries it as a
        template argument). A leaf: the kernel it runs in is reached through the launcher's own hop."""
        h = self.add(hop, "cuda", "op_body", target["qualified_name"], target["file"], target["line"],
                     f"the op's body: a functor object built at {call['file']}:{call['line']} "
                     f"(`{call['callee']}{call.get('template_args') or ''}(...)`) and handed on; the kernel runs its "
                     f"__device__ operator()")
        h.called_at = f"{call['file']}:{call['line']}"
        if overloads > 1:
            h.detail += f" [one of {overloads} definitions the call may build]"
            h.found = Found.OVERLOADS
        if target["link_condition"]:
            h.detail += f" [#if {target['link_condition']}]"
            h.conditions.append(Condition("#if", target["link_condition"], target["file"]))
        for op in q.device_operators(self.con, target["qualified_name"], target["file"]):
            if ("device", op["id"]) not in self.seen_cpp:  # what the body calls on the device
                self.seen_cpp.add(("device", op["id"]))
                self.device_calls(op, h)

    def stub(self, s: dict, parent: Hop, depth: int, d: dict | None = None) -> None:
        passed = self.passed_stub(s, parent)
        if passed:  # a helper called with the stub as an argument: argmax_argmin_impl(..., argmax_stub)
            s = {**s, "stub": passed, "device_arg": f"{s['device_arg'] or ''}; {s['stub']} = {passed} at the call"}
        elif d is not None and not is_stub_call(s["stub"], {r["stub"] for r in q.stub_declarations(
                self.con, s["stub"])}, d.get("signature")):
            return  # `Device(kCUDA, current_device())` in check_device: a constructor, not a stub
        hop = self.add(parent, "stub", "stub_call", s["stub"], s["file"], s["line"],
                       f"{s['stub']}({s['device_arg'] or ''}, ...)")
        if s["stub"] in self.seen_stub:
            self.repeats.add(hop.id)
            hop.detail += " (shown above)"
            hop.shown_above = True
            return
        self.seen_stub.add(s["stub"])
        decl = [r for r in q.stub_declarations(self.con, s["stub"]) if r["action"] == "declare"]
        if decl:
            hop.detail += f"; declared {decl[0]['file']}:{decl[0]['line']}"
        regs = q.registrations(self.con, s["stub"], self.device)
        foreign = [r for r in regs if not runs_on(r["file"], self.device)]  # miopen/ registers as CUDA too
        regs = [r for r in regs if r not in foreign]
        if not regs and foreign:
            self.add(hop, "registration", "note", f"stub {s['stub']} is registered for {self.device.upper()} only "
                     f"in another platform's code ({foreign[0]['file']}:{foreign[0]['line']})", absent=True)
            return
        loops = q.ufunc_stub_loops(self.con, s["stub"]) if not regs and self.device == "cuda" else []
        if loops:
            # sub_out calls add_stub: torchgen's ufunc codegen registers it (REGISTER_DISPATCH(add_stub, &add_kernel)
            # in the UfuncCUDA_add.cu it writes), with the same kernel as ufunc_add_CUDA: the op's inner loops
            cg = self.add(hop, "registration", "ufunc", f"CUDA: {s['stub']} is registered by torchgen's ufunc "
                          f"codegen (compute_ufunc_cuda writes REGISTER_DISPATCH({s['stub']}, ...) at build time)",
                          loops[0]["file"], loops[0]["line"])
            for loop in loops:
                self.ufunc_loop(loop, cg)
            self.ufunc_codegen("cuda", cg)
            return
        if not regs:
            others = sorted({r["device"] for r in q.registrations(self.con, s["stub"], "all")})
            self.add(hop, "registration", "note", f"no {self.device.upper()} registration of stub {s['stub']} found "
                     f"by opindex" + (f" (registered for: {', '.join(others)})" if others else
                                      " (a registration written by a macro of another file is not indexed)"),
                     absent=True)
            return
        shown = set()
        for r in regs:
            if (r["kernel"], r["cpu_capability"]) in shown:
                continue
            shown.add((r["kernel"], r["cpu_capability"]))
            self.registration(r, hop, depth)

    def passed_stub(self, s: dict, parent: Hop) -> str | None:
        """The declared stub a helper's stub parameter stands for at the call that reached it (stub_arguments)."""
        if parent.id not in self.call_sites:
            return None
        file, line = self.call_sites[parent.id]
        found = q.stub_argument(self.con, file, line, s["stub"])
        return found["stub"] if found else None

    def registration(self, r: dict, parent: Hop, depth: int) -> None:
        cap = f" [{r['cpu_capability']}]" if r.get("cpu_capability") else ""
        macro = f" (expanded from {r['from_macro']})" if r.get("from_macro") else ""
        if r["kernel"] is None:
            self.add(parent, "registration", r["macro"], f"{r['device']}: no kernel", r["file"], r["line"],
                     f"{r['macro']}({r['stub']}): no {r['device']} implementation{macro}", absent=True)
            return
        hop = self.add(parent, "registration", r["macro"], f"{r['device']}{cap}: {r['kernel']}", r["file"],
                       r["line"], f"{r['macro']}({r['stub']}, {r['kernel']}){macro}")
        link = q.registration_link(self.con, r["id"])
        if link is None or link["symbol_id"] is None:
            self.add(hop, "cpp", "note", f"no definition of {r['kernel']} found", absent=True)
            return
        d = q.symbol_by_id(self.con, link["symbol_id"])
        if not runs_on(d["file"], self.device):
            hop.detail += f" (not run on {self.device.upper()}: {d['file']} is another platform's code)"
            return
        mark = len(self.trace.hops)
        self.cpp(d, hop, depth, kind="registered_kernel")
        if r["device"] != "CPU" and not any(h.layer in ("cuda", "library") for h in self.trace.hops[mark:]):
            self.launches_in_file(d, hop)

    def launches_in_file(self, d: dict, parent: Hop) -> None:
        """A device kernel that reaches its launch through a functor or lambda (`sum_functor<T>{}(iter)`) has no
        call the index can follow: point at the launches of its own file, the ones named like it first."""
        stem = d["name"].split("_kernel")[0].split("_")[0]
        found = q.rows(self.con, "SELECT * FROM kernel_launches WHERE file = ? AND kind IN ('chevron', "
                                 "'tensor_iterator') ORDER BY (caller LIKE ?) DESC, line LIMIT 3",
                       (d["file"], f"%{stem}%"))
        for launch in found:
            first = len(self.trace.hops)
            self.launch(launch, parent)
            self.trace.hops[first].detail += \
                f" (in {launch['caller'] or 'file scope'}, same file: reached through a functor or lambda)"
            self.trace.hops[first].found = Found.SAME_FILE

    def launch(self, launch: dict, parent: Hop) -> None:
        if launch["kind"] in ("chevron", "handed"):
            targs = launch.get("template_args") or ""
            if launch["kind"] == "chevron":
                hop = self.add(parent, "cuda", "launch", f"{launch['kernel']}{targs}<<<{launch['config'] or ''}>>>",
                               launch["file"], launch["line"], "kernel launch", kernel=launch["kernel"])
            else:  # cb(AttentionKernel<...>(), fmha_cutlassF_...): the callee launches what it is handed
                hop = self.add(parent, "cuda", "handed", f"{launch['kernel']} (handed to a launcher)",
                               launch["file"], launch["line"], "a __global__ kernel passed by name to a call that "
                               "launches it (kernel_fn<<<...>>>)", kernel=launch["kernel"])
            target = launch["launch_symbol_id"] if "launch_symbol_id" in launch else q.launched(self.con, launch)
            if target is not None:
                k = q.launched_definition(launch) if "launch_qualified_name" in launch else \
                    q.symbol_by_id(self.con, target)
                gh = self.add(hop, "cuda", "global_kernel", f"__global__ {k['qualified_name']}", k["file"], k["line"],
                              _cpp_detail(k), kernel=k["name"])
                if ("kernel", target) not in self.seen_cpp:  # what its body calls, under its first launch only
                    self.seen_cpp.add(("kernel", target))
                    self.device_calls(k, gh)
        elif launch["kind"] == "tensor_iterator":  # cub/thrust launches are shown as their library calls
            hop = self.add(parent, "cuda", launch["kind"], launch["kernel"], launch["file"], launch["line"],
                           f"{launch['kind']} launch via {launch['kernel']}: the op's own body is the functor or "
                           f"lambda passed at {launch['file']}:{launch['line']}")
            self.launcher(launch, hop)

    def launcher(self, launch: dict, hop: Hop) -> None:
        """The shared TensorIterator machinery a launcher call goes through (gpu_kernel -> gpu_kernel_impl ->
        launch_vectorized_kernel -> <<<vectorized_elementwise_kernel>>>), followed to its launches."""
        for call in q.calls_at(self.con, launch["file"], launch["line"], launch["kernel"], launch.get("caller")):
            self.local_call(call, {}, hop, self.depth, kind="launcher")
            return

    # -- backward, decompositions, codegen -------------------------------------------------------------------------
    def backward_of(self, entry: dict, parent: Hop) -> None:
        ders = q.derivatives_of(self.con, entry)
        if not ders:
            self.add(parent, "backward", "note", f"no derivatives.yaml entry for {entry['full_name']}"
                     + (" (autograd through its composite kernel)" if _is_composite(self.con, entry) else ""),
                     absent=True)
            return
        for der in ders:
            hop = self.add(parent, "backward", "derivative", f"derivatives.yaml: {der['full_name']}", der["file"],
                           der["line"], der["schema"])
            for f in q.formulas(self.con, der["id"]):
                label = "forward (JVP)" if f["is_forward"] else "grad"
                fh = self.add(hop, "backward", "formula", f"{f['inputs']}: {f['formula']}", f["file"], f["line"],
                              f"{label} formula" + (f" [{f['dispatch_key']}]" if f["dispatch_key"] != "Default"
                                                     else ""))
                if self.backward and not f["is_forward"]:
                    for op in self.capped(backward_ops(self.con, f["formula"]), 3, "ops of the formula", fh):
                        self.native(op, fh, 0)

    def decompositions(self, entry: dict, parent: Hop) -> None:
        """Python decompositions, references and meta functions of the op (one hop per function)."""
        covered: dict[tuple, list[str]] = {}
        for d in q.decompositions_of(self.con, entry["name"]):
            if d["overload"] and entry["overload"] and d["overload"] not in (entry["overload"], "default"):
                continue
            covered.setdefault((d["kind"], d["function"], d["file"], d["line"]), []).append(
                f"aten.{d['op']}{'.' + d['overload'] if d['overload'] else ''}")
        for (kind, function, file, line), ops in covered.items():
            self.add(parent, "decomposition", kind, function, file, line, f"{kind} of {', '.join(ops)}")

    def codegen(self, entry: dict, parent: Hop) -> None:
        """Where the op's generated bindings come from (read these instead of building PyTorch)."""
        variants = entry["variants"]
        names = ["native_functions.py", "register_dispatch_key.py", "gen.py", "RegisterDispatchKey.cpp"]
        if "method" in variants:
            names.append("python_variable_methods.cpp")
        if "function" in variants:
            names.append("python_torch_functions.cpp" if not entry["python_module"]
                         else f"python_{entry['python_module']}_functions.cpp")
        if q.derivatives_of(self.con, entry):
            names += ["VariableType.cpp", "Functions.cpp", "gen_variable_type.py"]
        if entry["ufunc_inner_loop"]:
            names.append("ufunc.py")
        found = q.codegen_files(self.con, tuple(names))
        if not found:
            return
        head = self.add(parent, "codegen", "bindings", f"generated bindings of {entry['full_name']}",
                        detail="read these instead of building: the generators and the templates they fill")
        for f in found:
            what = "template" if f["layer"] == "codegen" else "generator"
            self.add(head, "codegen", what, f["path"], f["path"], 1, f"{what} for {entry['full_name']}")

    def surfaces(self, entry: dict, parent: Hop) -> None:
        """The Python code that reaches this op directly, and the bindings its variants create."""
        bridges = [b for b in q.bridges_to(self.con, entry["name"])
                   if entry in bridged_entries(self.con, b) or b["kind"] == "torch_ops"]
        # The public surfaces first (torch/nn), then the rest; a method call on a name is only a guess
        bridges.sort(key=lambda b: (not b["file"].startswith("torch/nn/"), b["kind"] == "tensor_method",
                                    b["file"].startswith(("functorch/benchmarks", "torch/testing")), b["file"]))
        unique = {(b["caller"], b["text"]): b for b in reversed(bridges)}
        bridges = [b for b in bridges if unique[(b["caller"], b["text"])] is b]
        ns = f"torch.{entry['python_module']}" if entry["python_module"] else "torch"
        bound = [f"{ns}.{entry['name']}"] * ("function" in entry["variants"]) + \
            [f"Tensor.{entry['name']}"] * ("method" in entry["variants"])
        if not bridges and not bound:
            return
        head = self.add(parent, "python", "surfaces", f"Python surfaces of {entry['full_name']}",
                        detail=f"bound as {', '.join(bound)}" if bound else "")
        for b in self.capped(bridges, 6, "Python callers", head):
            self.add(head, "python", "caller", f"{b['caller'] or b['file']} -> {b['text']}", b["file"], b["line"],
                     _bridge_detail(b))


# -- helpers --------------------------------------------------------------------------------------------------------
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


_AT_CALL = re.compile(r"^at::(\w+)\s*\(")


def operand_may_be_tensor(con, operand: str) -> bool:
    """An operator's operand recorded as a Tensor by its look (extract/cpp_operators.py): an `at::f(...)` call is
    one only when f is an op (at::has_internal_overlap returns an enum)."""
    m = _AT_CALL.match(operand)
    return m is None or m.group(1).removesuffix("_symint") in q.resident(con).op_names


def _walk_ops(con, t: Trace, entries: list[dict]) -> None:
    """Walk `entries` down into `t` (trace/writes.py walks a fill/copy op's trace with it)."""
    walker = Walker(con, t)
    for e in entries:
        walker.native(e, None)


def _op_call_text(call: dict) -> str:
    if call["is_method"] and call["callee"] in TENSOR_OPERATORS:  # `operator* on nllloss`
        receiver = call["qualifier"] if len(call["qualifier"]) <= 30 else "(...)"
        return f"{call['callee']} on {receiver}"
    if call["is_method"]:
        receiver = call["qualifier"] if len(call["qualifier"]) <= 30 else "(...)"
        return f"{receiver}.{call['callee']}"
    # a bare call in namespace at (`_adaptive_avg_pool2d_symint(...)`) is written without a qualifier
    return f"{call['qualifier']}::{call['callee']}" if call["qualifier"] else call["callee"]


def _dotted(call: dict) -> str:
    return f"{call['qualifier']}.{call['callee']}" if call["qualifier"] else call["callee"]


def _bridge_detail(b: dict) -> str:
    names = {"VF": "_VF bridge into the dispatcher", "variable_functions": "torch._C._VariableFunctions binding",
             "c_namespace": f"torch._C.{b.get('namespace', '')} binding", "torch_ops": "torch.ops.aten operator",
             "torch": "torch.* function bound from native_functions.yaml",
             "tensor_method": "Tensor method bound from native_functions.yaml"}
    return names.get(b["kind"], b["kind"])


def _cpp_detail(d: dict) -> str:
    head = {"impl_func": "TORCH_IMPL_FUNC", "meta_func": "TORCH_META_FUNC", "global_kernel": "__global__",
            "precompute_meta_func": "TORCH_PRECOMPUTE_META_FUNC"}.get(d["kind"], d["kind"])
    macro = f", expanded from {d['from_macro']}" if d.get("from_macro") else ""
    return f"{head} {d['name']}{d.get('signature') or ''}{macro}"


def _is_composite(con, entry: dict) -> bool:
    keys = {r["dispatch_key"] for r in q.dispatch_rows(con, entry["id"])}
    return bool(keys & set(IMPLICIT_KEYS))
