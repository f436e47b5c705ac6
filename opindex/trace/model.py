"""trace: the cross-layer chain of one operation, as a tree of hops with file and line.

A Trace is plain data (to_dict / to_json are the stable, documented shape). The walks that build it live beside
this module (down.py, up.py); opindex.render turns it into text, Markdown, Graphviz dot and Mermaid
(render.TraceView adds those methods for notebooks). Nothing here imports a renderer.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from functools import lru_cache

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
    layer = Layer(layer)
    if kind in Kind.__members__.values() and (layer not in OPEN_KINDS or kind in _FIXED_IN_OPEN):
        return layer, Kind(kind)
    if layer in OPEN_KINDS:
        return layer, kind
    raise ValueError(f"unknown hop kind {kind!r} in layer {layer.value!r}")


class Found(StrEnum):
    """How the walk found a hop."""
    CALL = "call"  # a call, link or registration it read
    SAME_FILE = "same_file"  # a guess: a launch in the same file, reached through a functor or lambda
    OVERLOADS = "overloads"  # one of several overloads (or definitions) the call may reach
    HELPER_LEAF = "helper_leaf"  # a helper the body calls that leads to no device code, shown as a leaf
    COMPOSITE_CALLEE = "composite_callee"  # the backward of an op a composite kernel calls (its autograd is theirs)


@dataclass
class Condition:
    """A condition the code of a hop runs under, where the source states it."""
    kind: str  # "#if" | "if" | "switch"
    text: str  # as written (`defined(USE_ROCM)`, `label_smoothing > 0.0`, `switch (backend)`)
    file: str | None = None
    line: int | None = None  # the line of the test (of the #if, the if, the switch)
    assumed: bool | None = None  # the value the walk assumed: False (the default arguments do not take it), None
    # (not evaluated: the trace shows both sides)


@dataclass
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

    def __post_init__(self) -> None:
        self.layer, self.kind = typed(self.layer, self.kind)

    def copied(self) -> dict:
        """The typed fields of this hop, to add a copy of it elsewhere in a trace (repeats is Trace.finish's)."""
        return {"found": self.found, "conditions": list(self.conditions), "shown_above": self.shown_above,
                "kernel": self.kernel, "schema": self.schema, "op": self.op}

    @property
    def not_default(self) -> bool:
        """Under a condition the default arguments make false (`if (label_smoothing > 0.0)`)."""
        return any(c.assumed is False for c in self.conditions)


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
    max_hops: int = 5000  # the walk stops here (0: no limit); `truncated` then says so
    limit: int = 6  # fan-in per step of a bottom-up walk (callers, launches, registrations); 0: no limit
    truncated: dict = field(default_factory=dict)  # {"hops": N, "callers": N, "reason": ...} when a cap cut it

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
                and not h.absent and h.kind not in ("other_kernels", "op_body", "device_call")]
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
        start to the first Python surface. Of the ends (Trace.ends), the best by `rank_end`; without one, the
        deepest hop of the forward path (backward, decomposition and codegen hops are side branches)."""
        if not self.hops:
            return []
        if self.direction == "down":
            ends = [h for h in self.ends() if not self._in_tail(h)]
            # the deepest: a __global__, not its <<<>>> launch, the vendor call, not PyTorch's wrapper of it (unless
            # what lies below is a test's)
            inner = {a.id for h in ends if not _is_test(h.file) for a in self.path(h)[:-1]}
            ends = [h for h in ends if h.id not in inner]
            if ends:
                tokens = query_tokens(self.query)
                best = min(enumerate(ends), key=lambda ie: (*rank_end(self, ie[1], tokens), ie[0]))[1]
                return self.path(best)
        else:
            ends = [h for h in self.hops if h.layer in ("python", "bridge") and not h.absent]
            if ends:
                return self.path(ends[0])
        pool = [h for h in self.hops if not h.absent and h.layer not in TAIL_LAYERS and not self._in_tail(h)
                and h.kind != "helper"] or self.hops  # (a helper leaf leads nowhere: never the path's end)
        return self.path(max(pool, key=lambda h: (len(self.path(h)), -h.id)))

    def _in_tail(self, hop: Hop) -> bool:
        """Whether `hop` lies in a side branch (backward, decomposition, codegen). The kernel torchgen writes for a
        ufunc op's dispatch key (CUDA: ufunc_add_CUDA, written by compute_ufunc_cuda) is the op's forward path: the
        generated code's launcher call is where its device code starts."""
        for h in self.path(hop):
            if h.layer == "codegen" and h.kind == "ufunc":
                return False
            if h.layer in TAIL_LAYERS:
                return True
        return False

    def finish(self) -> None:
        """Once the walk is done: each repeat points at the hop it repeats (the first of the same layer, name and
        place that is not a repeat itself), and the main chain's hops say so."""
        first: dict[tuple, int] = {}
        for h in self.hops:
            if not h.shown_above:
                first.setdefault((h.layer, h.name, h.file, h.line), h.id)
        for h in self.hops:
            if h.shown_above:
                h.repeats = first.get((h.layer, h.name, h.file, h.line))
        for h in self.hops:
            h.main = False
        for h in self.main_chain():
            h.main = True

    # -- exports ----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The JSON shape (docs/json.md; version JSON_VERSION): version, query, direction, device, depth,
        main_chain (hop ids, root first), hops[{id, parent, layer, kind, name, file, line, detail, absent,
        called_at, found, conditions[{kind, text, file, line, assumed}], shown_above, repeats, main, kernel, schema,
        op}], candidates, message, truncated ({} or {"hops": N, "callers": N, "reason": ...}: which caps cut the
        walk, and how to lift them)."""
        return {"version": JSON_VERSION, "query": self.query, "direction": self.direction, "device": self.device,
                "depth": self.depth, "main_chain": [h.id for h in self.main_chain()],
                "hops": [asdict(h) for h in self.hops], "candidates": self.candidates, "message": self.message,
                "truncated": self.truncated}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)



JSON_VERSION = 2  # of Trace.to_dict's shape: 2 added version, main_chain and the typed fields of each hop

# the note on the derivatives.yaml entry of an op a CompositeImplicitAutograd kernel calls (its autograd is theirs;
# the hop's `found` is Found.COMPOSITE_CALLEE)
COMPOSITE_CALLEE = "the backward of the composite op that calls it"
# what a hop's detail says of a call the op's default arguments do not reach (its condition is assumed False)
NOT_DEFAULT = "not with the default arguments"

TAIL_LAYERS = ("backward", "decomposition", "codegen")  # side branches of an op, never its main chain

DEVICE_LAYERS = frozenset({"stub", "registration", "cuda", "library"})  # where a trace has reached the device side

# Libraries of parallel building blocks (sort, scan, select), not of the op's math: PyTorch's own kernels are the
# fast path next to them (1.4's THCTensor_(sort) runs its bitonic kernel, Thrust only for slices over 2048)
BUILDING_BLOCKS = ("cub", "thrust")
# A launch of one block of one thread: bookkeeping beside the work, not the work
_ONE_THREAD = re.compile(r"<<<\s*1\s*,\s*1\s*[,>]")
# Library calls that set up (handles, descriptors, workspace sizes, plans) rather than run the work.
_SETUP_CALL = re.compile(r"(Get|Set|Create|Destroy)[A-Z]|Descriptor|WorkspaceSize|TempSpace|ReserveSize|Handle|"
                         r"Stream$|Builder$|_plans?$")
_TEST = re.compile(r"(^|/)(test|tests|benchmarks?)/|(^|/)test_[^/]*$")


def query_tokens(query: str) -> set[str]:
    """The words of a traced name (nn.MultiheadAttention -> multihead, attention; F.layer_norm -> layer, norm)."""
    last = re.split(r"[.:]", query.strip())[-1]
    return {w for w in words(last) if len(w) >= 3} or {last.lower()}


@lru_cache(maxsize=65536)
def words(name: str) -> tuple[str, ...]:
    """Lower-case words of a C++ or Python name, split at separators and camel case (LayerNormForward ->
    layer, norm, forward)."""
    return tuple(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name))


def _named(name: str, tokens: set[str] | frozenset[str]) -> bool:
    return _named_cached(name, frozenset(tokens))


@lru_cache(maxsize=65536)
def _named_cached(name: str, tokens: frozenset[str]) -> bool:
    """A word of `name` is a word of the traced name, or starts with one (conv2d: convolution)."""
    return any(w.startswith(t) or t.startswith(w) and len(w) >= 3 for w in words(name) for t in tokens)


@lru_cache(maxsize=16384)
def _is_test(file: str | None) -> bool:
    return bool(file) and bool(_TEST.search(file))


_SCHEMA_TENSOR = re.compile(r"Tensor(\([a-z]!?\))?\??(\[\])?\s")  # `Tensor`, `Tensor(a!)`, `Tensor?`, `Tensor[]`


def _tensor_arguments(schema: str) -> list[tuple[str, str]]:
    """(alias annotation, "[]" for a list) of each Tensor argument of a schema, in order."""
    return _SCHEMA_TENSOR.findall(schema.split("->")[0].partition("(")[2])


def _initializer(schema: str) -> bool:
    """A schema whose only Tensor argument is the one it writes (fill_.Scalar(Tensor(a!) self, Scalar value))."""
    tensors = _tensor_arguments(schema)
    return bool(tensors) and all(t[0].endswith("!)") for t in tensors)


# Kernels named for the arity of the functor they run (this MACA fork's vectorized_elementwise_kernel_nullary_opt,
# _unary_opt): launched only for functors of that many inputs (`if (narity == 0 && ...)`, CUDALoops.cuh)
_ARITY_WORDS = {"nullary": 0, "unary": 1, "binary": 2, "ternary": 3}


def _inputs(schema: str) -> int | None:
    """The Tensor inputs of a schema (not the ones it writes, `Tensor(a!)`); None with a Tensor list."""
    tensors = _tensor_arguments(schema)
    if any(t[1] for t in tensors):
        return None
    return sum(1 for t in tensors if not t[0].endswith("!)"))


def _other_arity(end: Hop, entries: list[Hop]) -> bool:
    """Whether `end` is a kernel named for another arity than the Tensor inputs of the last op on its path (add's
    two inputs never reach the nullary kernel; fill_, which only writes, does)."""
    arities = {_ARITY_WORDS[w] for w in words(end.name) if w in _ARITY_WORDS}
    if not arities or not entries:
        return False
    inputs = _inputs(entries[-1].schema or "")
    return inputs is not None and inputs not in arities


def computes(end: Hop) -> bool:
    """An end where work runs: not a library call that only sets up (a descriptor, a handle, a workspace size)."""
    return not (end.layer == "library" and _SETUP_CALL.search(end.name.split("::")[-1]))


def rank_end(t: Trace, end: Hop, tokens: set[str]) -> tuple:
    """How likely `end` is where the op's work runs on the device, smaller first:
    1. what the end is: a __global__ kernel, a <<<>>> launch or a library call that computes, then the shared
       elementwise machinery a TensorIterator launcher leads to (F.interpolate's upsample kernels before the floor
       of its size computation), then a library call that only sets up (descriptors, handles) or a launch of one
       thread (`<<<1, 1>>>`);
    2. whether the path to it holds a guess of the walk (a launch found in the same file, a test's kernel) or an op
       that only initialises its output (fill_, zero_);
    3. the share of the path's ops named like the traced name (the op's own work before helpers such as pad, zeros
       or matmul: _scaled_dot_product_flash_attention for scaled_dot_product_attention);
    4. a vendor library call before PyTorch's own kernels (cuDNN, cuBLAS are the fast paths; own kernels the
       fallbacks), not CUB or Thrust (building blocks, BUILDING_BLOCKS);
    5. how many of the kernels and helpers below the last op are named like it (vectorized_layer_norm_kernel);
    6. how many times the path goes back into the dispatcher (a fast path calls fewer ops than a fallback);
    then the walk's order, which is source order: PyTorch tries its fast paths first. Before all of these: a path
    through a fill/copy the kernel makes besides its own work (grad_input.zero_()) comes last, then one through a
    branch the op's default arguments do not take (`if (label_smoothing > 0.0)`, label_smoothing=0.0)."""
    path = t.path(end)
    if end.layer == "library":
        kind = 2 if _SETUP_CALL.search(end.name.split("::")[-1]) else 0
    elif any(_ONE_THREAD.search(h.name) for h in path[-2:]):
        kind = 2  # `transform_vals<<<1, 1, 0, stream>>>` in cub.cuh's inclusive_scan: one thread carries a value
        # between chunks; the work is the library call beside it
    elif any(h.kind == "tensor_iterator" for h in path):
        kind = 1  # the shared elementwise machinery (gpu_kernel -> vectorized_elementwise_kernel)
    elif end.kind == "ufunc_inner_loop":
        kind = 1.5  # a ufunc op's math, which the kernel generated for the device (kind 1 above) runs
    else:
        kind = 0
    # a hop whose place is a guess of the walk (a launch found in the same file) or a test's code
    guesses = sum(1 for h in path if h.found is Found.SAME_FILE or _is_test(h.file))
    # an op that only writes its own output (fill_, zero_: no Tensor read) sets up, it is not the op's work
    guesses += sum(1 for h in path if h.layer == "native" and h.kind == "entry" and _initializer(h.schema or ""))
    entries = [h for h in path if h.layer == "native" and h.kind == "entry"]
    guesses += _other_arity(end, entries)
    share = sum(_named(h.name.removeprefix("aten::").split(".")[0], tokens) for h in entries) / (len(entries) or 1)
    entry_ids = {h.id for h in entries}
    last = max((i for i, h in enumerate(path) if h.id in entry_ids), default=0)
    below = sum(1 for h in path[last:] if h.layer in ("cpp", "cuda", "stub", "registration") and _named(
        h.name.split("::")[-1].split("<")[0], tokens))
    ops = sum(1 for h in path if h.kind == "calls_op")
    # a fill/copy a kernel makes besides its own work (down.write_call) is never the op's work while there is other
    writes = any(h.kind == "writes" for h in path)
    # a branch the op's default arguments do not take (cross_entropy's `if (label_smoothing > 0.0)`)
    special = sum(1 for h in path if h.not_default)
    vendor = end.layer == "library" and end.kind not in BUILDING_BLOCKS
    return (writes, special, kind, guesses, -round(share, 3), not vendor, -below, ops)
