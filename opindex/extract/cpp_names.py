"""Names the C++ layer classifies by: dispatch macros, launchers, vendor libraries, devices.

The tree-sitter queries (queries/cpp-*.scm) find the syntax; these tables say what a found name means in PyTorch.
Macro invocations (DECLARE_DISPATCH, REGISTER_*DISPATCH, AT_DISPATCH_*) are preprocessor tokens, so they are found
by name in the text and then confirmed against the tree (not in a comment, a string or a #define body): that keeps
them visible inside the ERROR regions unexpanded macros leave behind.
"""
from __future__ import annotations

import functools
import re

from ..pytorch.devices import DEVICE_TYPES, EXTENSION_DEVICE, FOLDER_DEVICE, MACRO_DEVICE
from ..pytorch.launchers import is_launcher
from .objc import LIBRARY_CALLS

# DECLARE_DISPATCH(fn_type, stub), DEFINE_DISPATCH(stub), every (ALSO_)?REGISTER_<X>_DISPATCH form, AT_DISPATCH_*.
MACRO_SITE = re.compile(
    rb"\b(DECLARE_DISPATCH|DEFINE_DISPATCH|(?:ALSO_)?REGISTER_\w*DISPATCH|AT_DISPATCH_\w+)\s*\(")
WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")  # what \w matches in bytes


def macro_sites(data: bytes):
    """MACRO_SITE.finditer(data), found faster: every site's word holds DISPATCH, which is searched for in C, and
    the pattern is tried only at the start of that word (a pattern that starts with \b and an alternation would
    be tried at every byte)."""
    done = 0
    at = data.find(b"DISPATCH")
    while at >= 0:
        start = at
        while start > done and data[start - 1] in WORD_BYTES:
            start -= 1
        m = MACRO_SITE.match(data, start) if start >= done else None
        if m is not None:
            yield m
            done = m.end()
        at = data.find(b"DISPATCH", max(at + 8, done))
STRUCTURED = {"TORCH_META_FUNC": "meta_func", "TORCH_META_FUNC2": "meta_func",
              "TORCH_PRECOMPUTE_META_FUNC": "precompute_meta_func",
              "TORCH_PRECOMPUTE_META_FUNC2": "precompute_meta_func", "TORCH_IMPL_FUNC": "impl_func"}

# The word between REGISTER_ and _DISPATCH: a device (MACRO_DEVICE, from the device table), or a CPU capability
# (then the device is CPU).
CPU_CAPABILITIES = {"DEFAULT", "AVX", "AVX2", "AVX512", "VSX", "ZVECTOR", "SVE", "SVE128", "SVE256", "SVE512",
                    "NEON"}


def device_from_path(path: str) -> str:
    """The device a plain REGISTER_DISPATCH registers for, from where the file is compiled.

    PyTorch defines REGISTER_DISPATCH per compiler: nvcc/hipcc (.cu/.cuh files) make it REGISTER_CUDA_DISPATCH;
    the files of native/cpu/** are compiled once per CPU capability (REGISTER_ARCH_DISPATCH(stub, CPU_CAPABILITY));
    Objective-C++ under mps/ makes it REGISTER_MPS_DISPATCH. So: .cu/.cuh -> CUDA; otherwise the deepest folder
    named cpu (CPU), cuda/cudnn/miopen/hip (CUDA: a ROCm build hipifies these and still registers them as CUDA),
    mps (MPS), xpu (XPU), vulkan, metal decides; a file under none of them is CPU (opindex/pytorch/devices.py).
    """
    device = EXTENSION_DEVICE.get(path[path.rfind("."):]) if "." in path else None
    if device:
        return device
    for part in reversed(path.split("/")[:-1]):
        device = FOLDER_DEVICE.get(part)
        if device:
            return device
    return "CPU"


def registration(macro: str, args: list[str], path: str) -> tuple[str | None, str, str | None]:
    """(kernel, device, cpu_capability) of a REGISTER_*DISPATCH(stub, ...) site."""
    word = macro.removeprefix("ALSO_").removeprefix("REGISTER_").removesuffix("DISPATCH").strip("_")
    if word == "ARCH":  # REGISTER_ARCH_DISPATCH(stub, capability, fn)
        return _kernel(args[2] if len(args) > 2 else None), "CPU", args[1] if len(args) > 1 else None
    kernel = None if word == "NO_CPU" else _kernel(args[1] if len(args) > 1 else None)
    if word == "":
        return kernel, device_from_path(path), None
    if word in CPU_CAPABILITIES:
        return kernel, "CPU", word
    return kernel, MACRO_DEVICE.get(word, word), None


def _kernel(arg: str | None) -> str | None:
    return arg.lstrip("&").strip() if arg else None


# thrust:: algorithms (iterators, pointers and tuples are not launches).
THRUST_ALGORITHMS = frozenset({
    "sort", "sort_by_key", "stable_sort", "stable_sort_by_key", "reduce", "reduce_by_key", "transform",
    "transform_reduce", "inclusive_scan", "exclusive_scan", "inclusive_scan_by_key", "exclusive_scan_by_key",
    "unique", "unique_by_key", "unique_copy", "unique_by_key_copy", "copy", "copy_if", "copy_n", "fill", "fill_n",
    "sequence", "gather", "gather_if", "scatter", "scatter_if", "for_each", "for_each_n", "count", "count_if",
    "lower_bound", "upper_bound", "binary_search", "adjacent_difference", "remove", "remove_if", "remove_copy_if",
    "partition", "stable_partition", "tabulate", "max_element", "min_element", "minmax_element", "find", "find_if",
    "all_of", "any_of", "none_of", "equal", "mismatch", "merge", "merge_by_key", "set_difference",
    "set_intersection", "set_union", "replace", "replace_if", "reverse", "generate", "inner_product",
})

# Vendor libraries. A bare callee is classified by its prefix (the C APIs are camelCase after the prefix, which
# keeps PyTorch's own cudnn_convolution or mkldnn_matmul out); a qualified one by its namespace.
_LIBRARY_PREFIX = re.compile(
    r"^(?:(cudnn)|(cublasLt|cublas)|(cufft)|(cusolver)|(cusparse)|(miopen))[A-Z]|^(mkl)_|^(Dfti)[A-Z]|^(cblas)_")
_PREFIX_LIBRARY = ["cudnn", "cublas", "cufft", "cusolver", "cusparse", "miopen", "mkl", "mkl", "blas"]
_NAMESPACE_LIBRARY = [("cudnn_frontend", "cudnn"), ("cub", "cub"), ("thrust", "thrust"), ("dnnl", "mkldnn"),
                      ("ideep", "mkldnn"), ("mkldnn", "mkldnn"), ("cusolver", "cusolver")]


# Every qualifier the namespace rules below can classify contains one of these (a cheap first test: most don't).
_LIBRARY_QUALIFIER = re.compile(r"blas|solver|thrust|cub|cudnn|dnnl|ideep|mkldnn")


@functools.lru_cache(maxsize=1 << 16)  # asked for every call (330k in a PyTorch tree), of far fewer names
def library(callee: str, qualifier: str) -> str | None:
    """cudnn, cublas, cufft, cusolver, cusparse, miopen, cub, thrust, mkldnn, mkl, blas, mpsgraph, or None."""
    if qualifier and _LIBRARY_QUALIFIER.search(qualifier):
        parts = qualifier.split("::")
        if "blas" in parts and "cuda" in parts:
            return "cublas"  # at::cuda::blas::gemm
        if "solver" in parts and "cuda" in parts:
            return "cusolver"  # at::cuda::solver::getrf
        if "thrust" in parts and callee not in THRUST_ALGORITHMS:
            return None  # thrust::pair, thrust::make_tuple: types and helpers, not work done by Thrust
        for namespace, lib in _NAMESPACE_LIBRARY:
            if namespace in parts:
                return lib
    m = _LIBRARY_PREFIX.match(callee)
    if m:
        return _PREFIX_LIBRARY[m.lastindex - 1]
    return LIBRARY_CALLS.get(callee)  # runMPSGraph: mpsgraph


@functools.lru_cache(maxsize=1 << 16)
def launch_kind(callee: str, qualifier: str) -> str | None:
    """tensor_iterator, cub or thrust for a call that launches GPU work without <<<>>>, else None."""
    if is_launcher(callee):  # TensorIterator and friends: launch a GPU kernel from a lambda (pytorch/launchers.py)
        return "tensor_iterator"
    if not qualifier or ("cub" not in qualifier and "thrust" not in qualifier):
        return None
    parts = qualifier.split("::")
    if "cub" in parts:
        # cub::DeviceRadixSort::SortPairs and PyTorch's at::cuda::cub:: wrappers; not cub::Sum() functors.
        if parts[-1].startswith("Device") or parts[-1] == "cub" and callee[:1].islower():
            return "cub"
    elif "thrust" in parts and callee in THRUST_ALGORITHMS:
        return "thrust"
    return None


# The first argument of a stub call: a device. kCPU, at::kCUDA, DeviceType::CUDA, c10::DeviceType::MPS,
# iter.device_type(), self.device().type(), device_type() (inside a structured kernel).
DEVICE_ARG = re.compile(
    rf"^(?:(?:c10|at)::)?(?:DeviceType::|k)(?:{'|'.join(DEVICE_TYPES)})$"
    r"|(?:^|[.>])device_type\(\)$|device\(\)\s*\.\s*type\(\)$")


def is_macro_name(name: str) -> bool:
    """ALL_CAPS names are macros by PyTorch's convention (TORCH_CHECK): not calls."""
    return name.isupper() and len(name) > 1


# Before parsing, byte for byte (offsets and lines stay true): macros that decorate a declaration without changing
# its shape, which the grammar cannot know, become the CUDA keyword they stand for or spaces; and the content of a
# raw string whose delimiter is longer than the grammar's 15 characters (R"PT_METAL_SHADERS(...)") becomes spaces.
_LONG_RAW_STRING = re.compile(rb'R"([^()\\\s"]{16})\((.*?)\)\1"', re.S)
_DECORATOR_CALL = re.compile(rb"\b(?:C10_LAUNCH_BOUNDS_[0-9]|__launch_bounds__)\s*\(")
_DECORATOR_WORD = re.compile(rb"\b(?:C10|CUTLASS)_(?:HOST_DEVICE|DEVICE|HOST|GLOBAL|ALWAYS_INLINE|NOINLINE)\b")
_DECORATOR_WORD_PARTS = (b"C10_HOST", b"C10_DEVICE", b"C10_GLOBAL", b"C10_ALWAYS_INLINE", b"C10_NOINLINE", b"CUTLASS_")
_DECORATOR_KEYWORD = {b"HOST_DEVICE": b"__device__", b"DEVICE": b"__device__", b"HOST": b"", b"GLOBAL": b"__global__",
                     b"ALWAYS_INLINE": b"", b"NOINLINE": b""}
# `__global__ void\n#if !defined(USE_ROCM)\nC10_LAUNCH_BOUNDS_1(...)\n#endif\nconv_depthwise2d_forward_kernel(`
# (DepthwiseConv2d.cu:34): once the decorator is blank, its `#if`/`#else`/`#endif` lines enclose nothing, but they
# still split the declaration, and the grammar reads the kernel as a plain function. A group that holds only
# blank lines is blanked too (no code is lost: every side of it is empty).
_EMPTY_CONDITIONAL = re.compile(
    rb"^[ \t]*#[ \t]*if[^\n]*\n(?:[ \t]*\n|[ \t]*#[ \t]*(?:else|elif)\b[^\n]*\n)*[ \t]*#[ \t]*endif\b[^\n]*$", re.M)


# Legacy TH/THC/THNN generic code names its functions through token-pasting macros, `THCTensor_(sort)(state, ...)`
# (`#define THCTensor_(NAME) TH_CONCAT_4(TH,CReal,Tensor_,NAME)`): the grammar reads that as a call, not a name.
# `THCTensor_(sort)` becomes `THCTensor_sort  `, the generic name indexer/link.py ties THCudaDoubleTensor_sort to.
# (no leading \b: a pattern that starts with a literal is searched for fast; a match inside a longer word, as in
# WIDTH_(, is skipped below)
_GENERIC_NAME = re.compile(rb"(TH\w*_)\(\s*([A-Za-z_]\w*)\s*\)")


def _generic_names(data: bytes, buf: bytearray | None) -> bytearray | None:
    for m in _GENERIC_NAME.finditer(data):
        if m.start() and data[m.start() - 1] in WORD_BYTES:
            continue
        line_start = data.rfind(b"\n", 0, m.start()) + 1
        if data[line_start:m.start()].lstrip().startswith(b"#"):
            continue  # `#define THCTensor_(NAME) ...` itself stays a function-like macro
        buf = buf or bytearray(data)
        name = m.group(1) + m.group(2)
        buf[m.start():m.end()] = name.ljust(m.end() - m.start())
    return buf


def prepare(data: bytes, arguments) -> bytes:
    buf = None
    if b"TH" in data and b"_(" in data:  # (substring tests in C first)
        buf = _generic_names(data, buf)
    if b'R"' in data:
        for m in _LONG_RAW_STRING.finditer(data):
            buf = buf or bytearray(data)
            buf[m.start(2):m.end(2)] = re.sub(rb"[^\n]", b" ", m.group(2))
    # substring tests first: the regexes start with \b and an alternation, so they would try every byte
    if b"C10_LAUNCH_BOUNDS_" in data or b"__launch_bounds__" in data:
        for m in _DECORATOR_CALL.finditer(data):
            _, end = arguments(data, m.end() - 1)
            buf = buf or bytearray(data)
            buf[m.start():end] = re.sub(rb"[^\n]", b" ", data[m.start():end])
        if buf is not None:
            buf = _EMPTY_CONDITIONAL.sub(lambda g: re.sub(rb"[^\n]", b" ", g.group()), bytes(buf))
            buf = bytearray(buf)
    if not any(word in data for word in _DECORATOR_WORD_PARTS):
        return bytes(buf) if buf is not None else data
    for m in _DECORATOR_WORD.finditer(data):
        buf = buf or bytearray(data)
        word = _DECORATOR_KEYWORD[m.group().split(b"_", 1)[1]]
        buf[m.start():m.end()] = word.ljust(m.end() - m.start())
    return bytes(buf) if buf is not None else data
