"""The cross-layer chain of one operation, as a tree of typed hops with file and line.

A Trace is plain data (to_dict / to_json are the stable shape, docs/json.md). A Hop's layer and kind are enums,
and what a program needs of it (how it was found, the conditions it runs under, what it repeats, whether it is on
the main chain) is a field: its detail is prose for a reader. The walks that build a Trace live beside this module
(walk/, up.py, kept by builder.py); which end is the main chain's is rank.py's; opindex.render turns a Trace into
text, Markdown, Graphviz dot and Mermaid (render.TraceView adds those methods for notebooks). Nothing here imports
a renderer.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from . import rank
from .rank import choices, main_chain, open_decisions

TAIL_LAYERS = rank.TAIL_LAYERS  # the renderers read it from here

class Layer(StrEnum):
    """The layers of the seed document, in reading order; every hop belongs to one."""
    PYTHON = "python"
    BRIDGE = "bridge"
    NATIVE = "native"
    DISPATCH = "dispatch"
    CPP = "cpp"
    STUB = "stub"
    REGISTRATION = "registration"
    CUDA = "cuda"
    LIBRARY = "library"
    BACKWARD = "backward"
    DECOMPOSITION = "decomposition"
    CODEGEN = "codegen"


LAYERS = tuple(Layer)


class Kind(StrEnum):
    """What a hop is within its layer. Three layers name their hops by a PyTorch value instead (OPEN_KINDS)."""
    # python
    MODULE = "module"
    CLASS = "class"
    FORWARD = "forward"
    METHOD = "method"
    FUNCTION = "function"
    CALLS = "calls"
    CALLER = "caller"
    ALIAS = "alias"
    BINDING = "binding"
    BY_NAME = "by_name"
    BOOLEAN_DISPATCH = "boolean_dispatch"
    SURFACES = "surfaces"
    # bridge (the binding shapes of pytorch/python_rules.py)
    VF = "VF"
    TORCH = "torch"
    TORCH_OPS = "torch_ops"
    TENSOR_METHOD = "tensor_method"
    C_NAMESPACE = "c_namespace"
    VARIABLE_FUNCTIONS = "variable_functions"
    # native
    ENTRY = "entry"
    STRUCTURED_DELEGATE = "structured_delegate"
    CALLS_OP = "calls_op"
    WRITES = "writes"
    KERNEL_OF = "kernel_of"
    # cpp (a definition's kind as the symbols table has it, or its role on the path)
    STRUCT = "struct"
    DEVICE_FUNCTION = "device_function"
    GENERATED_CALL = "generated_call"
    IMPL_FUNC = "impl_func"
    META_FUNC = "meta_func"
    PRECOMPUTE_META_FUNC = "precompute_meta_func"
    REGISTERED_KERNEL = "registered_kernel"
    WRAPPER = "wrapper"
    LAUNCHER = "launcher"
    HELPER = "helper"
    FUNCTOR = "functor"
    CHOOSER = "chooser"
    OP_CALLER = "op_caller"
    MACRO = "macro"
    AT_DISPATCH = "AT_DISPATCH"
    RAISES = "raises"
    LEGACY_DECLARATION = "legacy_declaration"
    UFUNC_INNER_LOOP = "ufunc_inner_loop"
    # stub
    STUB = "stub"
    STUB_CALL = "stub_call"
    # cuda
    LAUNCH = "launch"
    GLOBAL_KERNEL = "global_kernel"
    TENSOR_ITERATOR = "tensor_iterator"
    HANDED = "handed"
    JITTED = "jitted"  # a kernel the jiterator compiles at run time (profile: its name constant)
    OP_BODY = "op_body"
    DEVICE_CALL = "device_call"
    OTHER_KERNELS = "other_kernels"
    # backward, decomposition, codegen
    DERIVATIVE = "derivative"
    FORMULA = "formula"
    DECOMPOSITION = "decomposition"
    META = "meta"
    REFERENCE = "reference"
    GENERATOR = "generator"
    TEMPLATE = "template"
    BINDINGS = "bindings"
    UFUNC = "ufunc"
    # any layer: what the walk says about itself
    NOTE = "note"  # a statement that something is missing (absent)
    CAPPED = "capped"  # a fan-out cap cut here (absent; --limit 0 lifts it)
    GROUPED = "grouped"  # callers grouped by file (up walk)


# Layers whose hop kind is a PyTorch value, not a Kind: the dispatch key(s) of a dispatch row ("CUDA",
# "CPU, CUDA"), the REGISTER_*DISPATCH macro of a registration, the library of a library call ("cudnn").
OPEN_KINDS = frozenset({Layer.DISPATCH, Layer.REGISTRATION, Layer.LIBRARY})
# the fixed kinds of those layers (a note, a cap, the ufunc codegen's registration)
_FIXED_IN_OPEN = frozenset({Kind.NOTE, Kind.CAPPED, Kind.UFUNC})


def typed(layer: str, kind: str) -> tuple[Layer, Kind | str]:
    """(Layer, Kind) of a hop; a kind outside Kind is refused, but in the layers that name hops by a PyTorch value
    (OPEN_KINDS). A typo in a walk fails here, not as a hop no renderer knows."""
    typed_layer = _LAYER_OF.get(layer)
    if typed_layer is None:
        raise ValueError(f"unknown hop layer {layer!r}")
    typed_kind = _KIND_OF.get(kind)
    if typed_kind is not None and (typed_layer not in OPEN_KINDS or typed_kind in _FIXED_IN_OPEN):
        return typed_layer, typed_kind
    if typed_layer in OPEN_KINDS:
        return typed_layer, kind
    raise ValueError(f"unknown hop kind {kind!r} in layer {layer!r}")


_LAYER_OF = {layer.value: layer for layer in Layer}  # (a dict: a hop is typed ~25,000 times in a large trace)
_KIND_OF = {kind.value: kind for kind in Kind}


class Found(StrEnum):
    """How the walk found a hop."""
    CALL = "call"  # a call, link or registration it read
    SAME_FILE = "same_file"  # a guess: a launch in the same file, reached through a functor or lambda
    OVERLOADS = "overloads"  # one of several overloads (or definitions) the call may reach
    HELPER_LEAF = "helper_leaf"  # a helper the body calls that leads to no device code, shown as a leaf
    COMPOSITE_CALLEE = "composite_callee"  # the backward of an op a composite kernel calls (its autograd is theirs)
    STAND_IN = "stand_in"  # walked in place of a callee the build leaves out: its stem, beside it (facts.stand_in)
    PASSED_IN = "passed_in"  # a <<<>>> launch of a parameter (`kernel_fn<<<...>>>` in a lambda): it runs the kernel
    # its caller hands in, which the handed hops name; no device code of its own (no end of the chain)


@dataclass(slots=True)
class Condition:
    """A condition the code of a hop runs under, where the source states it."""
    kind: str  # "#if" | "#include" | "if" | "switch" | "overload" (a traced call's values do not fit that overload)
    text: str  # as written (`defined(USE_ROCM)`, `label_smoothing > 0.0`, `switch (backend)`)
    file: str | None = None
    line: int | None = None  # the line of the test (of the #if, the if, the switch)
    assumed: bool | None = None  # the value the walk assumed: False (the default arguments do not take it), None
    # (not evaluated: the trace shows both sides)


@dataclass(slots=True)
class Hop:
    id: int
    parent: int | None  # the hop this one was reached from (None for a root)
    layer: Layer
    kind: Kind | str  # a Kind; in the OPEN_KINDS layers the dispatch key(s), the macro or the library
    name: str  # display name (aten::add.out, at::native::relu, lstm_cudnn_stub)
    file: str | None = None  # relative to the checkout root
    line: int | None = None  # 1-based
    detail: str = ""  # one line of context for a reader (schema, dispatch row, launch configuration, formula);
    # prose only: what a program needs is in the fields below
    absent: bool = False  # a statement that something is missing in this checkout
    called_at: str | None = None  # "file:line" of the call that reached this definition (a helper hop), if any
    found: Found = Found.CALL  # how the walk found it
    conditions: list[Condition] = field(default_factory=list)  # what its code runs under, outermost first
    shown_above: bool = False  # a repeat: what it leads to is shown under an earlier hop (not walked again)
    repeats: int | None = None  # the id of that earlier hop, when the trace holds it
    main: bool = False  # on the main chain (Trace.main_chain), set when the walk is done
    kernel: str | None = None  # the bare name of a __global__ or launched kernel (vectorized_elementwise_kernel)
    schema: str | None = None  # a native entry's schema (`add.Tensor(Tensor self, Tensor other, *, ...) -> Tensor`)
    op: str | None = None  # the native function a hop stands for (entry, other_kernels): its full name
    feeds: str | None = None  # an op call that is an argument of another call (`nll_loss_nd(log_softmax(...),
    # ...)`): that call's callee; the op runs before it, and the outer call's result is the caller's

    def __post_init__(self) -> None:
        self.layer, self.kind = typed(self.layer, self.kind)

    def copied(self) -> dict:
        """The typed fields of this hop, to add a copy of it elsewhere in a trace (repeats is Trace.finish's)."""
        return {"found": self.found, "conditions": list(self.conditions), "shown_above": self.shown_above,
                "kernel": self.kernel, "schema": self.schema, "op": self.op, "feeds": self.feeds}

    @property
    def not_default(self) -> bool:
        """Under a condition the default arguments make false (`if (label_smoothing > 0.0)`)."""
        return bool(self.conditions) and any(c.assumed is False for c in self.conditions)


_TEMPLATE = re.compile(r"<[^<>]*>")


def bare_name(hop: Hop) -> str:
    """The name a hop is known by across trees and ways: a launch's kernel, a definition's name without
    `__global__ `, template arguments and qualifier (`opindex diff` matches hops by it; an open choice names its
    ways' ends by it). Only the last part: a parse error can lose a definition's outer namespaces (native::lstm_cudnn
    in one tree, at::native::lstm_cudnn in the other), which is no change of the hop."""
    name = hop.kernel if hop.kernel and str(hop.kind) in ("launch", "global_kernel") else hop.name
    name = name.removeprefix("__global__ ")
    while _TEMPLATE.search(name):
        name = _TEMPLATE.sub("", name)
    return name.split("<<<")[0].strip().rpartition("::")[2]


@dataclass
class Trace:
    query: str
    direction: str  # down | up
    device: str
    depth: int
    hops: list[Hop] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)  # set when the name is ambiguous or unknown
    message: str = ""  # why there are no hops (unknown / ambiguous)
    unknown: bool = False  # the name names nothing in this index (`opindex trace` exits 1; ambiguous exits 2)
    root: str | None = None  # checkout root, for reading source snippets
    index: str | None = None  # the index file that answered (named in the text, the JSON and "not found")
    max_hops: int = 5000  # the walk stops here (0: no limit); `truncated` then says so
    limit: int = 6  # fan-in per step of a bottom-up walk (callers, launches, registrations); 0: no limit
    truncated: dict = field(default_factory=dict)  # {"hops": N, "callers": N, "reason": ...} when a cap cut it
    dtype: str = "float32"  # the input's dtype the walk read dtype tests with
    # the build traced: each setting a test of the walk read, {name, value (None: undefined), source}
    build: list[dict] = field(default_factory=list)
    build_conflicts: list[str] = field(default_factory=list)  # settings the checkout cannot build with
    # a traced call (trace/call.py): {callee, text, args: [{name, value, source}], tensors: [{name, dtype, sizes}],
    # notes}; None for a name
    call: dict | None = None
    call_summary: str = ""  # the values it read, one line (the text's header)
    # a name trace's arguments read as given, values unknown, because their defaults rule out every way on:
    # {"arguments": [...], "file", "line" (the test), "why"} (trace/__init__._given_not_default), else None
    given: dict | None = None
    unknown_call: bool = False  # the query was a call whose callee names nothing here (not a kernel name either)

    # -- shape ------------------------------------------------------------------------------------------------
    def children(self, hop_id: int | None) -> list[Hop]:
        return [h for h in self.hops if h.parent == hop_id]

    def roots(self) -> list[Hop]:
        return self.children(None)

    def layers(self) -> list[str]:
        seen = {h.layer for h in self.hops if not h.absent}
        return [layer for layer in LAYERS if layer in seen]

    def ends(self) -> list[Hop]:
        """Where the chain reaches device code: launches, __global__ kernels, library calls, ufunc inner loops."""
        return [h for h in self.hops if (h.layer in ("cuda", "library") or h.kind == "ufunc_inner_loop")
                and not h.absent and h.kind not in ("other_kernels", "op_body", "device_call")
                and h.found is not Found.PASSED_IN]
        # (a list of names; an op body; what a kernel's body calls: below the end, not one)

    def cut(self, cap: str, limit: int, reason: str) -> None:
        """Say that a cap cut the walk: truncated[cap] = limit, and the reason (how to lift it) added once."""
        said = self.truncated.get("reason", "")
        self.truncated = {**{k: v for k, v in self.truncated.items() if k != "reason"}, cap: limit,
                          "reason": said if reason in said else f"{said}; {reason}" if said else reason}

    def path(self, hop: Hop) -> list[Hop]:
        """The hops from a root down to `hop`."""
        out = [hop]
        while out[-1].parent is not None:
            out.append(self.hops[out[-1].parent])
        return out[::-1]

    def main_chain(self) -> list[Hop]:
        """The default path: top-down, from the root to the device code the op really ends in; bottom-up, from the
        start to an nn.Module surface, else the first Python surface (trace/rank.py chooses it). Kept while the
        hops stay the same (the renderers ask several times)."""
        key = (len(self.hops), id(self.hops[-1]) if self.hops else None)
        cached = self.__dict__.get("_main")
        if cached is None or cached[0] != key:
            cached = self.__dict__["_main"] = (key, main_chain(self))
        return list(cached[1])

    def ruled_out(self) -> Hop | None:
        """Where a top-down main chain stops short of device code because every way on runs under a condition the
        call's inputs or build rule out (the first such hop of the best way; rank.main_chain), else None."""
        self.main_chain()
        hop = self.__dict__.get("_ruled_out")
        return hop if hop is not None and hop.id < len(self.hops) and self.hops[hop.id] is hop else None

    def finish(self) -> None:
        """Once the walk is done: each repeat points at the hop it repeats (the first of the same layer, name and
        place that is not a repeat itself, unless the walk said which), and the main chain's hops say so."""
        first: dict[tuple, int] = {}
        for h in self.hops:
            if not h.shown_above:
                first.setdefault((h.layer, h.name, h.file, h.line), h.id)
        for h in self.hops:
            if h.shown_above and h.repeats is None:  # (a walk that knew which one set it)
                h.repeats = first.get((h.layer, h.name, h.file, h.line))
        for h in self.hops:
            h.main = False
        for h in self.main_chain():
            h.main = True

    def which_index(self) -> str:
        """"the index FILE (checkout ROOT)": which index answered, for messages."""
        if not self.index:
            return "this index"
        return f"the index {self.index}" + (f" (checkout {self.root})" if self.root else "")

    def rows(self) -> list[dict]:
        """One flat row per hop, in walking order: id, parent, depth (0 at a root), layer, kind, name, file, line,
        main (on the main chain), absent, detail; what to_dataframe() holds."""
        depth: dict[int, int] = {}
        out = []
        for h in self.hops:  # ids grow depth-first: a parent comes before its children
            depth[h.id] = 0 if h.parent is None else depth.get(h.parent, 0) + 1
            out.append({"id": h.id, "parent": h.parent, "depth": depth[h.id], "layer": str(h.layer),
                        "kind": str(h.kind), "name": h.name, "file": h.file, "line": h.line, "main": h.main,
                        "absent": h.absent, "detail": h.detail})
        return out

    def to_dataframe(self):
        """rows() as a pandas DataFrame (pandas is optional: a clear error without it)."""
        from ..model import require_pandas
        return require_pandas().DataFrame(self.rows())

    # -- exports ----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON shape (docs/json.md; version JSON_VERSION): version, query, direction, device, depth, dtype,
        build[{name, value, source}], build_conflicts, call ({callee, text, args[{name, value, source}],
        tensors[{name, dtype, sizes}], notes} for a traced call, else null), given ({arguments, file, line, why}: a
        name trace's arguments read as given, values unknown, because their defaults rule out every way on; else
        null), main_chain (hop ids, root first), choices[{hop, ways,
        settled, others}] (where the main chain went one way of several, and whether the inputs settled it),
        open[{hop, condition, condition_file, condition_line, file, line, options}] (the choices the inputs left
        undecided, with the condition that parts them), ruled_out ({hop, conditions} where the main chain stops because every way on is ruled out, else null),
        hops[{id, parent, layer, kind, name, file, line, detail, absent,
        called_at, found, conditions[{kind, text, file, line, assumed}], shown_above, repeats, main, kernel, schema,
        op, feeds}], candidates, message, truncated ({} or {"hops": N, "callers": N, "reason": ...}: which caps cut the
        walk, and how to lift them), index ({file, checkout}: which index answered)."""
        return {"version": JSON_VERSION, "query": self.query, "direction": self.direction, "device": self.device,
                "depth": self.depth, "dtype": self.dtype, "build": self.build,
                "build_conflicts": self.build_conflicts, "call": self.call, "given": self.given,
                "main_chain": [h.id for h in self.main_chain()], "choices": (found := choices(self)),
                "open": open_decisions(self, found), "ruled_out": _ruled_out_json(self.ruled_out()),
                "hops": [asdict(h) for h in self.hops], "candidates": self.candidates, "message": self.message,
                "truncated": self.truncated, "index": {"file": self.index, "checkout": self.root}}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)



def _ruled_out_json(hop: Hop | None) -> dict | None:
    if hop is None:
        return None
    return {"hop": hop.id, "conditions": [{"kind": c.kind, "text": c.text, "file": c.file, "line": c.line,
                                           "assumed": c.assumed}
                                          for c in hop.conditions if c.assumed is False]}


JSON_VERSION = 4  # of Trace.to_dict's shape: 2 added version, main_chain and the typed fields of each hop; 3 index;
# 4 call

# the note on the derivatives.yaml entry of an op a CompositeImplicitAutograd kernel calls (its autograd is theirs;
# the hop's `found` is Found.COMPOSITE_CALLEE)
COMPOSITE_CALLEE = "the backward of the composite op that calls it"
# what a hop's detail says of a call the op's default arguments do not reach (its condition is assumed False)
NOT_DEFAULT = "not with the default arguments"


DEVICE_LAYERS = frozenset({"stub", "registration", "cuda", "library"})  # where a trace has reached the device side
