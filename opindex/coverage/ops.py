"""The operator overloads the index knows and what each registers per dispatch key, gathered from the facts:
native_functions.yaml entries and their dispatch rows, the variants `autogen:` generates, the ops a TORCH_LIBRARY
block defines (`m.def`) or registers (`m.impl`), the backend fallbacks (`m.fallback`), and the Python functions
registered as Meta kernels at `import torch` (torch/_meta_registrations.py's activate_meta)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from ..pytorch.dispatch_keys import EXPLICIT_NON_FUNCTIONAL, IMPLICIT, IMPLICIT_NESTED, canonical
from . import inplace_meta, registrations

# where a Python registration comes from: activate_meta registers torch/_meta_registrations.py's meta functions and
# the global decomposition table's (torch/_decomp, torch/_refs) as Meta kernels; inductor's and TorchScript's
# decomposition tables are their own
_PYTHON_META_FILES = re.compile(r"^torch/(_meta_registrations\.py|_decomp/|_refs/)")
# Python modules that define a namespace of ops through torch.library at import: the module -> the namespace, and the
# keys each op gets a kernel for (torch/_prims/__init__.py's _make_prim: prim_impl, prim_meta_impl)
PYTHON_LIBRARIES = {"torch._prims": ("prims", ("CompositeExplicitAutograd", "Meta"))}
# an alias annotation in a schema: Tensor(a), Tensor(a!), Tensor?(b!), Tensor(a -> *)[]; the group is the `!`
_ALIAS = re.compile(r"Tensor\??\(\s*\w+(!?)(?:\s*->\s*\*)?\s*\)")
# torch/_refs' factories that register the reference for the aten op its name infers (utils.get_aten_op)
_REFS_PACKAGE = "torch._refs"
_INFERRING_FACTORIES = ("_make_elementwise_unary_reference", "_make_elementwise_binary_reference")


@dataclass
class Kernel:
    """What one (op, key) registers: a dispatch row, a manual registration, a Python function."""
    kernel: str
    file: str
    line: int
    source: str  # yaml, registration, autogen, python
    dispatch_id: int | None = None  # native_dispatch.id for a YAML row
    block_line: int | None = None  # for a registration: its TORCH_LIBRARY block's line


@dataclass
class Op:
    name: str  # aten::add.Tensor; the default overload without a dot (aten::relu)
    file: str | None = None  # where it is defined: the YAML entry or the m.def
    line: int | None = None
    entry: dict | None = None  # its native_functions row
    kernels: dict[str, Kernel] = field(default_factory=dict)  # key -> its own kernel
    delegate: str | None = None  # aten::add.out for a structured_delegate
    python_meta: Kernel | None = None
    inplace_meta: Kernel | None = None  # the Meta kernel torchgen writes for an in-place op (inplace_meta.py)
    schema: str = ""

    @functools.cached_property  # the name never changes; asked for every (op, key)
    def namespace(self) -> str:
        return self.name.partition("::")[0]

    @functools.cached_property
    def base(self) -> str:
        """The op's name without namespace and overload (add_)."""
        return self.name.partition("::")[2].split(".", 1)[0]

    @property
    def implicit(self) -> bool:
        return IMPLICIT in self.kernels or IMPLICIT_NESTED in self.kernels


def op_name(namespace: str, full_name: str) -> str:
    return f"{namespace}::{full_name}"


def gather(native: list[dict], dispatch: list[dict], block_rows: list[dict], call_rows: list[dict],
           python_rows: list[dict], python_libraries: dict[str, list[dict]] | None = None,
           version: str | None = None) -> tuple[dict[str, Op], dict[str, Kernel]]:
    """All ops by name, and the backend fallbacks by key. `python_libraries`: module -> the names it defines as ops
    (facts.python_defined_ops), for the modules of PYTHON_LIBRARIES; `version`: the checkout's PyTorch version
    (whether its torchgen writes in-place Meta kernels)."""
    ops: dict[str, Op] = {}
    by_id = {}
    for e in native:
        op = ops[op_name("aten", e["full_name"])] = Op(op_name("aten", e["full_name"]), e["file"], e["line"], e,
                                                        schema=e["schema"])
        by_id[e["id"]] = op
        if e["structured_delegate"]:
            op.delegate = op_name("aten", e["structured_delegate"])
    for r in dispatch:
        op = by_id.get(r["native_function_id"])
        if op is not None:
            op.kernels[canonical(r["dispatch_key"])] = Kernel(r["kernel"], r["file"], r["line"], "yaml", r["id"])
    if inplace_meta.applies(version):  # from the YAML rows alone, as torchgen sees them
        for op in by_id.values():
            if inplace_meta.gets_one(op.entry, op.kernels, op.base, op.schema):
                op.inplace_meta = Kernel("meta", op.file, op.line, "yaml")
    for op in by_id.values():  # torchgen also registers a structured delegate's op for the keys its .out lacks
        if op.delegate and EXPLICIT_NON_FUNCTIONAL not in op.kernels:
            op.kernels[EXPLICIT_NON_FUNCTIONAL] = Kernel(f"structured_delegate {op.delegate}", op.file, op.line,
                                                         "structured")
    for e in native:  # torchgen registers every generated variant as CompositeExplicitAutograd
        if set(by_id[e["id"]].kernels) <= {IMPLICIT, IMPLICIT_NESTED}:
            continue  # ... but none for an entry with only a CompositeImplicitAutograd kernel (prelu's prelu.out)
        for variant in filter(None, (v.strip() for v in (e["autogen"] or "").split(","))):
            name = op_name("aten", variant)
            if name not in ops:
                ops[name] = Op(name, e["file"], e["line"], None,
                               kernels={"CompositeExplicitAutograd": Kernel(f"autogen of {e['full_name']}", e["file"],
                                                                            e["line"], "autogen")})
    calls, _ = registrations.library_calls(block_rows, call_rows)
    fallbacks: dict[str, Kernel] = {}
    for c in calls:
        if c.method == "fallback":
            if c.key is not None:
                fallbacks[c.key] = Kernel(registrations.kernel_name(c.kernel), c.file, c.line, "registration",
                                          block_line=c.block_line)
            continue
        op = ops.get(c.op)
        if op is None and c.method == "impl" and c.op.startswith("aten::"):
            continue  # no YAML entry or m.def defines it: a macro's stringified name, or code no build compiles
        if op is None:
            op = ops[c.op] = Op(c.op)
        if c.method == "def" and op.file is None:
            op.file, op.line, op.schema = c.file, c.line, c.schema or ""
        if c.key is not None:
            op.kernels[c.key] = Kernel(registrations.kernel_name(c.kernel) if not c.fallthrough else "fallthrough",
                                       c.file, c.line, "registration", block_line=c.block_line)
    _python_meta(ops, python_rows)
    for module, rows in (python_libraries or {}).items():
        namespace, keys = PYTHON_LIBRARIES[module]
        for r in rows:
            name = op_name(namespace, r["name"])
            if name not in ops:
                ops[name] = Op(name, r["file"], r["line"], kernels={
                    k: Kernel(f"{module}.{r['name']}", r["file"], r["line"], "python") for k in keys})
    return ops, fallbacks


def _python_meta(ops: dict[str, Op], rows: list[dict]) -> None:
    """The Python functions activate_meta registers as an op's Meta kernel: a decomposition, reference or meta
    function of torch/_meta_registrations.py, torch/_decomp or torch/_refs, for every overload of the packet it names
    (or the one overload), unless the op has a CompositeImplicitAutograd kernel, is a view, or is on activate_meta's
    own list of op overloads it leaves alone (a `skipped` row)."""
    by_name: dict[str, list[Op]] = {}
    for op in ops.values():
        by_name.setdefault(op.base if op.namespace == "aten" else f"{op.namespace}::{op.base}", []).append(op)
    skipped = {(r["op"], r["overload"]) for r in rows if r["kind"] == "skipped" and _PYTHON_META_FILES.match(r["file"])}
    for r in rows:  # meta functions first: activate_meta prefers them over decompositions
        if r["kind"] == "skipped" or not _PYTHON_META_FILES.match(r["file"]) or not r.get("registered_by", True):
            continue
        name = _registered_op(r)
        for op in by_name.get(name, ()):
            overload = op.name.partition(".")[2] or "default"
            if r["overload"] not in (None, overload) or op.python_meta is not None and op.python_meta.source == "meta":
                continue
            if (name, overload) in skipped:
                continue
            # _dispatch_has_kernel_for_dispatch_key(op, "CompositeImplicitAutograd"): that key alone, not the
            # NestedTensor one (zeros_like has CompositeImplicitAutogradNestedTensor and a Python Meta kernel)
            if IMPLICIT in op.kernels or is_view(op.schema):
                continue
            if op.python_meta is None or r["kind"] == "meta":
                op.python_meta = Kernel(r["function"], r["file"], r["line"], "python" if r["kind"] != "meta"
                                        else "meta")


def _registered_op(r: dict) -> str:
    """The op a row registers: a reference the torch/_refs factories register (_make_elementwise_unary_reference
    and _binary_: aten_op=infer_aten_op) is the op utils.get_aten_op names, its submodule's path as a prefix
    (torch._refs.special.zeta -> special_zeta)."""
    module, _, name = r["function"].rpartition(".")
    if (r["kind"] == "reference" and r["op"] == name and module.startswith(_REFS_PACKAGE + ".")
            and set(r.get("registered_by", ())) & set(_INFERRING_FACTORIES)):
        return f"{module.removeprefix(_REFS_PACKAGE + '.').replace('.', '_')}_{name}"
    return r["op"]


def is_view(schema: str) -> bool:
    """OpOverload.is_view: the arguments carry alias annotations and none is written (`Tensor(a) self`; a mix of
    written and not is no view)."""
    arguments = schema.partition("(")[2].rpartition("->")[0]
    marks = _ALIAS.findall(arguments)
    return bool(marks) and not any(marks)
