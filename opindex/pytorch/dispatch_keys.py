"""Dispatch keys as the dispatcher resolves them (c10/core/DispatchKeySet.h, OperatorEntry.cpp): which runtime keys
an alias key's kernel serves, and in which order a key's kernel is chosen. `opindex coverage` reads an op's
registrations through these rules, the way OperatorEntry::computeDispatchTableEntry does at run time.

Words: a *runtime key* is one a tensor dispatches on (CPU, SparseCUDA, NestedTensorCUDA); an *alias key*
(CompositeImplicitAutograd, CompositeExplicitAutograd, ...) is one kernels register to and that serves a set of
runtime keys.
"""
from __future__ import annotations

from functools import lru_cache

# Backend components and the functionalities that combine with them (QuantizedCPU is Quantized x CPU).
BACKENDS = ("CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "MTIA", "PrivateUse1",
            "PrivateUse2", "PrivateUse3", "Meta")
PER_BACKEND = ("", "Quantized", "Sparse", "SparseCsr", "NestedTensor")
# runtime keys that are backends of their own (no per-backend functionality)
OTHER_BACKEND_KEYS = ("FPGA", "MAIA", "Vulkan", "Metal", "CustomRNGKeyId", "MkldnnCPU")

# The keys `opindex coverage` reports by default: the backends (the Quantized/Sparse/SparseCsr/NestedTensor
# variants of CPU and CUDA) and the two composite alias keys. A vendor's own key found in the index is added.
DEFAULT_KEYS = ("CPU", "CUDA", "MPS", "XPU", "Meta", "QuantizedCPU", "QuantizedCUDA", "SparseCPU", "SparseCUDA",
                "SparseCsrCPU", "SparseCsrCUDA", "NestedTensorCPU", "NestedTensorCUDA", "PrivateUse1",
                "CompositeImplicitAutograd", "CompositeExplicitAutograd")

IMPLICIT = "CompositeImplicitAutograd"
IMPLICIT_NESTED = "CompositeImplicitAutogradNestedTensor"
EXPLICIT = "CompositeExplicitAutograd"
EXPLICIT_NON_FUNCTIONAL = "CompositeExplicitAutogradNonFunctional"
# PyTorch 1.8 wrote the composite keys by their older names
OLD_NAMES = {"Math": IMPLICIT, "DefaultBackend": EXPLICIT,
             # a kernel registered to CatchAll (TORCH_LIBRARY_IMPL(ns, CatchAll, m)) is filed under CIA since 1.10
             "CatchAll": IMPLICIT}
ALIAS_KEYS = (IMPLICIT, IMPLICIT_NESTED, EXPLICIT, EXPLICIT_NON_FUNCTIONAL, "Autograd")
# the key a kernel registered without one lands on (a catch-all `m.impl` in TORCH_LIBRARY, or `m.def(schema, fn)`)
CATCH_ALL = IMPLICIT


# Keys of a functionality rather than a backend (c10/core/DispatchKey.h): registrations to them are no backend's
FUNCTIONALITY_KEYS = ("Undefined", "BackendSelect", "Python", "Named", "Conjugate", "Negative", "ZeroTensor",
                      "ADInplaceOrView", "Tracer", "Autocast", "Batched", "BatchedNestedTensor", "VmapMode",
                      "Functionalize", "PythonTLSSnapshot", "PreDispatch", "PythonDispatcher", "FuncTorchBatched",
                      "FuncTorchBatchedDecomposition", "FuncTorchVmapMode", "FuncTorchGradWrapper",
                      "FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode", "AutogradOther",
                      "AutogradFunctionality", "AutogradNestedTensor", "CatchAll", "Dense", "Quantized", "Sparse",
                      "SparseCsr", "NestedTensor")
_FUNCTIONALITY_PREFIXES = ("Autograd", "Autocast")


def is_pytorch_key(key: str) -> bool:
    """Whether PyTorch names `key` (a backend, a functionality, an alias); else it is a fork's or vendor's own."""
    return (is_runtime_backend(key) or key in ALIAS_KEYS or key in FUNCTIONALITY_KEYS
            or key.startswith(_FUNCTIONALITY_PREFIXES) or key in OLD_NAMES)


def runtime_key(functionality: str, backend: str) -> str:
    return f"{functionality}{backend}"


@lru_cache(maxsize=1024)  # a few dozen keys, asked for every (op, key)
def split(key: str) -> tuple[str, str] | None:
    """(functionality, backend) of a per-backend runtime key (SparseCsrCUDA -> (SparseCsr, CUDA)), else None."""
    for functionality in sorted(PER_BACKEND, key=len, reverse=True):
        if key.startswith(functionality) and key[len(functionality):] in BACKENDS:
            return functionality, key[len(functionality):]
    return None


def is_runtime_backend(key: str) -> bool:
    return split(key) is not None or key in OTHER_BACKEND_KEYS


@lru_cache(maxsize=4096)
def alias_serves(alias: str, key: str) -> bool:
    """Whether a kernel registered to `alias` serves runtime `key` (DispatchKeySet.cpp, getRuntimeDispatchKeySet):
    CompositeExplicitAutograd every backend key but the NestedTensor ones; ...NonFunctional those less the Sparse
    ones and XLA and Lazy; CompositeImplicitAutograd every backend key; ...NestedTensor the NestedTensor keys."""
    parts = split(key)
    if parts is None:
        # a backend key of its own; and a key PyTorch does not name is a fork's backend, read as a dense one
        own_backend = key in OTHER_BACKEND_KEYS or not is_pytorch_key(key)
        return own_backend and alias in (EXPLICIT, EXPLICIT_NON_FUNCTIONAL, IMPLICIT)
    functionality, backend = parts
    if alias == IMPLICIT:
        return True
    if alias == IMPLICIT_NESTED:
        return functionality == "NestedTensor"
    if alias == EXPLICIT:
        return functionality != "NestedTensor"
    if alias == EXPLICIT_NON_FUNCTIONAL:
        return functionality not in ("NestedTensor", "Sparse") and backend not in ("XLA", "Lazy")
    return False


# The order the dispatcher takes a runtime key's kernel in when the key has no kernel of its own
# (OperatorEntry::computeDispatchTableEntryWithDebug): the alias keys, then the key's backend fallback.
ALIAS_ORDER = (EXPLICIT_NON_FUNCTIONAL, EXPLICIT, IMPLICIT_NESTED, IMPLICIT)


def canonical(key: str) -> str:
    return OLD_NAMES.get(key, key)
