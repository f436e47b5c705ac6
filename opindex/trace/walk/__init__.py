"""The downward walk: a Trace built top-down (Python -> YAML -> C++ -> stubs -> CUDA -> backward) over the index.

The walk is general: it follows the facts (bridges, dispatch rows, definitions, stub calls, registrations,
launches, op calls) and knows no op by name. One step per layer, each a small class sharing the TraceBuilder that
keeps the hops:

    python.py    PythonWalk     modules, classes, defs, what they call, the bridges into C++
    ops.py       OpWalk         a native function's entry, structured delegate, dispatch rows, kernel definitions
    bodies.py    BodyWalk       a C++ definition's body and the helpers it calls (leaves: those without device code)
    sites.py     CallSiteWalk   what one call site leads to: an op, a fill/copy, a functor, a chooser, a helper
    stubs.py     StubWalk       a stub call, its registrations for the device and the kernels they register
    launches.py  LaunchWalk     <<<>>> launches, __global__ kernels, TensorIterator launchers, __device__ calls
    tails.py     TailWalk       backward formulas, decompositions, codegen, Python surfaces

The conditions a call sits under are read by trace/conditions.py; which end is the main chain's, by trace/rank.py.
Fan-out is capped so a trace on a real tree stays small and fast (each cap says so where it cuts).
"""
from __future__ import annotations

from .. import facts as q
from ..builder import TraceBuilder
from ..call import beyond_the_defaults
from ..conditions import BodyGuards, BuildContext
from ..model import DEVICE_LAYERS, Condition, Trace
from .bodies import BodyWalk
from .launches import LaunchWalk
from .ops import OpWalk
from .python import PythonWalk
from .sites import CallSiteWalk
from .stubs import StubWalk
from .tails import TailWalk


class Walker:
    """The composition root of a downward walk: it makes the steps and starts from the looked-up targets."""

    def __init__(self, con, trace: Trace, backward: bool = False, build: BuildContext | None = None):
        self.con, self.trace = con, trace
        self.device, self.depth, self.backward = trace.device, trace.depth, backward
        self.b = TraceBuilder(trace)
        self.build = build or BuildContext(con, trace.device)
        self.conditions = BodyGuards(con, trace.device, self.b, self.build)
        self.python, self.ops, self.tails = PythonWalk(self), OpWalk(self), TailWalk(self)
        self.bodies, self.sites = BodyWalk(self), CallSiteWalk(self)
        self.stubs, self.launches = StubWalk(self), LaunchWalk(self)
        for step in (self.python, self.ops, self.tails, self.bodies, self.sites, self.stubs, self.launches):
            step.link(self)

    @staticmethod
    def walk_entries(con, t: Trace, entries: list[dict], user: dict | None = None, dtype: str = "float32",
                     views: str | None = None) -> None:
        """Walk `entries` down into `t` for the build `user` states and the input `dtype` (trace/writes.py walks a
        fill/copy op's trace with it); `views` "strided" or "maybe": its operands are strided views, or may be
        (walk/sites.py written_views), and its iterator's contiguity reads so."""
        walker = Walker(con, t, build=BuildContext(con, t.device, user, dtype))
        for e in entries:
            walker.ops.native({**e, "views": views} if views else e, None)

    def start(self, targets: list, name: str) -> None:
        """Walk down from the looked-up targets (opindex.trace.targets.Target)."""
        if all(x.kind == "python_binding" for x in targets):
            alias = self.alias(targets[0].via)
            if alias is None:
                self.binding(name, [x.obj for x in targets])
            else:
                self.alias_binding(name, alias)
        elif all(x.kind == "by_name" for x in targets):
            hop = self.b.add(None, "python", "by_name", name, detail=f"no Python definition or binding of {name} "
                           f"found; traced as the op {targets[0].obj['name']} by name")
            for target in self.b.capped(targets, 4, "ops of that name", hop):
                self.tails.tail(target.obj, self.ops.native(target.obj, hop))
        elif len({x.dispatch for x in targets}) == 1 and targets[0].dispatch:
            self.python.boolean_dispatch(targets)
        else:
            for target in targets:
                self.start_one(target)

    def start_one(self, target) -> None:
        if target.kind == "native":
            hop = self.ops.native(target.obj, None)
            self.tails.tail(target.obj, hop)
            self.tails.surfaces(target.obj, hop)
        elif target.kind == "python_class":
            self.python.python_class(target.obj, None, target.label)
            self.tails.tails_below()
        elif target.kind == "python_function":
            self.python.python_function(target.obj, None, target.label)
            self.tails.tails_below()
        elif target.kind in ("cpp", "global_kernel"):
            hop = self.bodies.cpp(target.obj, None, self.depth)
            for r in self.b.capped(q.dispatch_rows_with_kernel(self.con, target.obj["name"]), 2, "dispatch rows", hop):
                entry = q.native_by_id(self.con, r["native_function_id"])
                self.b.add(hop, "native", "kernel_of", f"aten::{entry['full_name']}", entry["file"], entry["line"],
                         f"{r['dispatch_key']} kernel of {entry['full_name']}")

    def binding(self, name: str, entries: list[dict]) -> None:
        """torch.add / Tensor.add_: no Python def; every non-out overload the variants bind is walked."""
        entries = [e for e in entries if not e["is_out"]] or entries
        first = entries[0]
        variants = sorted({v.strip() for e in entries for v in e["variants"].split(",")})
        hop = self.b.add(None, "python", "binding", name, first["file"], first["line"],
                       f"no Python wrapper: bound from variants: {', '.join(variants)} of "
                       f"{', '.join(e['full_name'] for e in entries)}")
        call = self.build.call
        unfit = call.unfit if call is not None else {}
        # the overloads a traced call fits first (torch.where(c, x, 0.0): where.ScalarOther, whose at::where(...)
        # then walks where.self with what it passes), the ones it cannot be after them (and past the cap first)
        entries = sorted(entries, key=lambda e: e["schema"] in unfit)
        if call is None:  # a name trace calls the op with its tensors and defaults: not an overload that needs more
            # (the walk's order stays the checkout's: the ones the cap leaves out stay the same)
            needs = beyond_the_defaults([e["schema"] for e in entries])
            unfit = {e["schema"]: (f"a value for {', '.join(needs[e['schema']])} (a name trace gives its tensors "
                                   f"and default arguments only)", e["file"], e["line"])
                     for e in entries if e["schema"] in needs}
        for e in self.b.capped(entries, 4, "overloads", hop):
            mark = len(self.trace.hops)
            entry = self.ops.native(e, hop)
            if e["schema"] in unfit and entry is not None:  # clamp.Tensor for torch.clamp(x, max=1.0)
                why, file, line = unfit[e["schema"]]
                entry.conditions.append(Condition("overload", why, file, line, assumed=False))
            if any(h.layer in DEVICE_LAYERS for h in self.trace.hops[mark:]):
                self.b.useful_native.add(e["id"])  # (an op call that reaches it again repeats it, kept: live)
            self.tails.tail(e, entry)

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
        hop = self.b.add(None, "python", "alias", f"{alias['module']}.{alias['name']}", alias["file"], alias["line"],
                       f"{alias['name']} = {alias['target']} (a C++ binding given a Python name; no Python def)")
        bridges = q.module_bridges_at(self.con, alias["file"], alias["line"])
        for b in bridges:
            self.python.bridge(b, hop)
        if not bridges:
            self.b.add(hop, "bridge", "note", f"no bridge recorded at {alias['file']}:{alias['line']}", absent=True)
        self.tails.tails_below()
