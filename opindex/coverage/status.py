"""The status of one (op, dispatch key), decided in the dispatcher's order (OperatorEntry::
computeDispatchTableEntryWithDebug): the key's own kernel, then the alias keys that serve it, then the key's backend
fallback, else missing.

Statuses (documented in docs/coverage.md; scripts rely on them):
- kernel: the op registers a kernel for the key (a native_functions.yaml row, a manual registration, the Meta
  kernel torchgen generates for a structured op or an in-place one, a Python Meta registration)
- inherited: the key's kernel comes from another entry: the .out entry of a structured_delegate
- composite_implicit / composite_explicit: a CompositeImplicitAutograd / CompositeExplicitAutograd(NonFunctional)
  kernel serves the key
- fallback: the key's backend fallback (a boxed function or a fallthrough registered with m.fallback)
- missing: nothing: the dispatcher raises NotImplementedError for the key
"""
from __future__ import annotations

from dataclasses import dataclass

from ..pytorch.dispatch_keys import (ALIAS_KEYS, ALIAS_ORDER, EXPLICIT, EXPLICIT_NON_FUNCTIONAL, IMPLICIT,
                                     IMPLICIT_NESTED, alias_serves)
from . import inplace_meta
from .ops import Kernel, Op

STATUSES = ("kernel", "inherited", "composite_implicit", "composite_explicit", "fallback", "missing")
# the keys torchgen generates a structured kernel for (torchgen/model.py STRUCTURED_DISPATCH_KEYS, and Meta from the
# meta function): another key of a structured .out entry (QuantizedCPU, SparseCPU) is that entry's alone
STRUCTURED_KEYS = ("CPU", "CUDA", "MPS", "XPU", "Meta")
# statuses under which a backend runs the op with code of its own or a composite of it
COVERED = ("kernel", "inherited", "composite_explicit", "composite_implicit")


@dataclass
class Status:
    status: str
    kernel: Kernel | None = None
    via: str = ""  # how: yaml, registration, autogen, python, structured meta, inplace meta, the alias key, delegate op


def status(op: Op, key: str, ops: dict[str, Op], fallbacks: dict[str, Kernel]) -> Status:
    if key in ALIAS_KEYS:
        own = op.kernels.get(key)
        if own is None:
            return Status("missing")
        return Status("composite_implicit" if key in (IMPLICIT, IMPLICIT_NESTED) else "composite_explicit", own,
                      own.source)
    if key == "Meta" and op.python_meta is not None:  # it replaces a C++ Meta kernel (Meta (inactive) in a dump)
        return Status("kernel", op.python_meta, "python")
    own = op.kernels.get(key)
    if own is not None:
        return Status("kernel", own, own.source)
    delegate = ops.get(op.delegate) if op.delegate else None
    if delegate is not None and key in delegate.kernels and key in STRUCTURED_KEYS:
        return Status("inherited", delegate.kernels[key], f"structured_delegate {delegate.name}")
    if key == "Meta" and op.entry is not None and (op.entry["structured"] or delegate is not None):
        # torchgen generates the Meta kernel of every structured op from its TORCH_META_FUNC
        return Status("kernel" if op.entry["structured"] else "inherited",
                      Kernel("meta", op.file, op.line, "yaml") if op.entry["structured"] else
                      Kernel("meta", delegate.file, delegate.line, "yaml"), "structured meta")
    if key == "Meta" and op.inplace_meta is not None:  # torchgen's inplace_meta: it only checks self is meta
        return Status("kernel", op.inplace_meta, inplace_meta.VIA)
    for alias in ALIAS_ORDER:
        if alias in op.kernels and alias_serves(alias, key):
            explicit = alias in (EXPLICIT, EXPLICIT_NON_FUNCTIONAL)
            return Status("composite_explicit" if explicit else "composite_implicit", op.kernels[alias], alias)
    if key in fallbacks:
        return Status("fallback", fallbacks[key], "m.fallback")
    return Status("missing")
