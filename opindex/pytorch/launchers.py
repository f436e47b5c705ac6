"""The launchers of GPU kernels that take the op as a functor or lambda (TensorIterator's gpu_kernel and friends):
one list, read by the extractor (a call of one launches GPU work without <<<>>>: extract/cpp_names.py launch_kind)
and by the profile (a launcher's name in a kernel's template arguments is plumbing, not the op's body:
profile/kernel_name.py)."""
from __future__ import annotations

import functools
import re

from .devices import LAUNCHER_VENDOR_SUFFIXES

TENSOR_ITERATOR_LAUNCHERS = frozenset({
    "gpu_kernel", "gpu_kernel_nocast", "gpu_kernel_with_scalars", "opmath_gpu_kernel_with_scalars",
    "opmath_symmetric_gpu_kernel_with_scalars", "symmetric_gpu_kernel_with_scalars", "gpu_kernel_multiple_outputs",
    "jitted_gpu_kernel", "opmath_jitted_gpu_kernel_with_scalars", "gpu_reduce_kernel", "launch_kernel",
    "launch_vectorized_kernel", "launch_unrolled_kernel", "launch_legacy_kernel", "launch_jitted_unrolled_kernel",
    "launch_jitted_vectorized_kernel", "launch_reduce_kernel", "gpu_index_kernel", "_launch_kernel",
    # the jiterator's reduction (Reduce.cuh), gpu_reduce_kernel's twin where AT_USE_JITERATOR() (prod_functor's
    # `#if AT_USE_JITERATOR()` operator()): NVRTC compiles the kernel, launch_jitted_reduce_kernel launches it
    "jitted_gpu_reduce_kernel", "launch_jitted_reduce_kernel",
})
# Variants of the launchers: a vendor's (gpu_kernel_maca_arity1 in the MACA fork: the suffixes come from the device
# tables, devices.py), an arity's, and upstream's inner forms (gpu_kernel_impl, gpu_kernel_impl_nocast).
VARIANT_WORDS = (*LAUNCHER_VENDOR_SUFFIXES, r"arity\d+", "impl", "nocast")
LAUNCHER_VARIANT = re.compile(r"^(?:%s)(?:_(?:%s))+$" % (
    "|".join(sorted(TENSOR_ITERATOR_LAUNCHERS, key=len, reverse=True)), "|".join(VARIANT_WORDS)))


@functools.lru_cache(maxsize=1 << 16)  # asked for every call of a tree
def is_launcher(name: str) -> bool:
    """A TensorIterator launcher or a variant of one (gpu_kernel, gpu_kernel_impl_nocast, gpu_kernel_maca_arity2)."""
    return name in TENSOR_ITERATOR_LAUNCHERS or ("kernel" in name and LAUNCHER_VARIANT.match(name) is not None)
