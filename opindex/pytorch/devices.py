"""The backends PyTorch dispatches to, each declared once: everything else about devices derives from this table.

A row says how a backend shows up in the source: its dispatch keys in native_functions.yaml, the device name its
REGISTER_*DISPATCH sites record (dispatch_registrations.device), the word of its own registration macro
(REGISTER_CUDA_DISPATCH), the folders whose plain REGISTER_DISPATCH registers it (a device comes from where a file
is compiled, not from the macro), the file extensions compiled only for it, the C++ dialects its sources are written
in (Objective-C++ .mm: indexed with the C++ grammar), and whether `--device` offers it.
Vendor platforms that build a backend from its sources (ROCm, MACA) are rows of VENDOR_PLATFORMS beside it.
Adding a backend is one row here (plus, if its code needs other patterns, a query file in extract/queries/).

Words: a *device* is what code runs on (CPU, CUDA); a *language* is what a file is written in (cpp, cuda); a
*layer* is a reading step of a trace (cpp, cuda, library ...). "cuda" the language and layer is not the device.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    device: str  # dispatch_registrations.device and the DeviceType name (CUDA)
    option: str | None  # the --device choice (cuda), None when the trace does not offer it
    dispatch_keys: tuple[str, ...]  # native_functions.yaml keys that are this backend's own kernels
    macro_word: str | None  # REGISTER_<word>_DISPATCH
    folders: tuple[str, ...] = ()  # a plain REGISTER_DISPATCH under these folders registers this device
    extensions: tuple[str, ...] = ()  # files compiled only for this device (.cu): REGISTER_DISPATCH registers it
    device_code_folders: tuple[str, ...] = ()  # C++ here is device code (the trace's cuda layer) even in .cpp
    # C++ dialects of its sources, read with the C++ grammar (language cpp); a plain REGISTER_DISPATCH in one takes its
    # device from the folder (an .mm file under mps/ registers MPS), as in .cpp
    dialect_extensions: tuple[str, ...] = ()
    # folders of libraries whose code runs on this device only, though a REGISTER_DISPATCH there does not take its
    # device from them (oneDNN/MKL/XNNPACK are CPU libraries; mkldnn/ also holds CPU registrations by folder default)
    library_folders: tuple[str, ...] = ()
    macros: tuple[str, ...] = ()  # preprocessor macros only this device's build defines (USE_MPS)
    # name parts of this vendor's variants of a TensorIterator launcher (gpu_kernel_nv: see pytorch/launchers.py)
    launcher_suffixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class VendorPlatform:
    """A vendor's platform that builds one of the BACKENDS from the same sources: its kernels register as that
    backend's device (a ROCm build hipifies cuda/ and registers CUDA), but some folders and macros are its build's
    alone, and its launchers may carry its name (gpu_kernel_maca_arity1)."""
    name: str  # the platform a folder or macro names (ROCm)
    device: str  # the backend its kernels register as (CUDA)
    folders: tuple[str, ...] = ()  # code only this platform's build compiles (miopen/: MIOpen is ROCm's library)
    macros: tuple[str, ...] = ()  # preprocessor macros only this platform's build defines
    launcher_suffixes: tuple[str, ...] = ()  # name parts of its launcher variants


BACKENDS: tuple[Backend, ...] = (
    Backend("CPU", "cpu", ("CPU",), "CPU", folders=("cpu",), library_folders=("mkldnn", "mkl", "xnnpack")),
    # a ROCm build hipifies cuda/, cudnn/ and miopen/ and still registers them as CUDA
    Backend("CUDA", "cuda", ("CUDA",), "CUDA", folders=("cuda", "cudnn", "miopen", "hip"), extensions=(".cu", ".cuh"),
            device_code_folders=("cuda", "cudnn", "miopen", "hip"), launcher_suffixes=("nv",)),
    Backend("HIP", None, ("HIP",), "HIP"),
    # Apple's backends are written in Objective-C++ (.mm: MPSGraph and Metal are Objective-C APIs)
    Backend("MPS", "mps", ("MPS",), "MPS", folders=("mps",), dialect_extensions=(".mm",), macros=("USE_MPS",)),
    Backend("XPU", "xpu", ("XPU",), "XPU", folders=("xpu",)),
    Backend("PrivateUse1", None, ("PrivateUse1",), "PRIVATEUSE1"),
    Backend("Vulkan", None, ("Vulkan",), None, folders=("vulkan",)),
    Backend("Metal", None, ("Metal",), None, folders=("metal",), dialect_extensions=(".mm",)),
)
# Vendor platforms that build a backend above from its sources. A ROCm build hipifies cuda/ (registered as CUDA,
# BACKENDS' CUDA row) but compiles miopen/ and hip/ and the code under `#ifdef __HIP_PLATFORM_HCC__` (1.8's
# hip_parallel_cat) only for itself. MetaX's MACA fork (mcPytorch, the 2.4 tree) *is* its --device cuda build:
# its USE_MACA code is not another platform's, so no folder or macro of it takes code out of a cuda trace; only its
# launchers carry its name.
VENDOR_PLATFORMS: tuple[VendorPlatform, ...] = (
    VendorPlatform("ROCm", "CUDA", folders=("miopen", "hip"),
                   macros=("USE_ROCM", "__HIP_PLATFORM_HCC__", "__HIP_PLATFORM_AMD__"), launcher_suffixes=("hip", "rocm")),
    VendorPlatform("MACA", "CUDA", launcher_suffixes=("maca",)),
)

# Devices a stub call may name literally (kCUDA, DeviceType::MPS) besides the backends above.
OTHER_DEVICE_TYPES = ("Meta", "IPU", "HPU", "Lazy", "MTIA")

# Dispatch keys that serve every device when the entry has no row of the device's own (dispatcher precedence).
# The composite keys, in the dispatcher's precedence. PyTorch 1.8 wrote two of them by their older names:
# DefaultBackend (CompositeExplicitAutograd since 1.9) and Math (CompositeImplicitAutograd).
IMPLICIT_KEYS = ("CompositeImplicitAutograd", "Math")
COMPOSITE_KEYS = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd", "DefaultBackend",
                  *IMPLICIT_KEYS)
# The registration macro words that are CPU by another name (per-ISA forms are read as CPU capabilities).
CPU_MACRO_WORDS = ("NO_CPU", "ALL_CPU", "ARCH")

# -- derived ---------------------------------------------------------------------------------------------------------
BY_OPTION = {b.option: b for b in BACKENDS if b.option}
DEVICE_OPTIONS = (*BY_OPTION, "all")  # the --device choices
MACRO_DEVICE = {**{b.macro_word: b.device for b in BACKENDS if b.macro_word}, **dict.fromkeys(CPU_MACRO_WORDS, "CPU")}
FOLDER_DEVICE = {folder: b.device for b in BACKENDS for folder in b.folders}
EXTENSION_DEVICE = {ext: b.device for b in BACKENDS for ext in b.extensions}
DEVICE_CODE_FOLDERS = frozenset(f for b in BACKENDS for f in b.device_code_folders)
DIALECT_EXTENSIONS = tuple(dict.fromkeys(ext for b in BACKENDS for ext in b.dialect_extensions))  # (".mm",)
DIALECT_FOLDERS = frozenset(f for b in BACKENDS if b.dialect_extensions for f in b.folders)  # mps, metal
HEADER_EXTENSIONS = (".h", ".hpp")
# every C/C++/CUDA header suffix: a file compiled only where it is #included (trace/conditions.py file_built)
CPP_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")
# the files a compiler is given: each a translation unit, reading the headers it #includes (trace/walk/bodies.py)
CPP_SOURCES = (".cpp", ".cc", ".cxx", ".c", ".cu", ".mm")
# Folders whose code runs on one platform only, whatever dispatch key reaches it: a backend's folders and library
# folders, except those a vendor platform's build alone compiles (miopen/ and hip/ are ROCm's, though registered as
# CUDA: an NVIDIA build never compiles them)
PLATFORM_FOLDERS = {**{f: b.device for b in BACKENDS for f in (*b.folders, *b.library_folders)},
                    **{f: p.name for p in VENDOR_PLATFORMS for f in p.folders}}
# Preprocessor macros only one platform's build defines
PLATFORM_MACROS = {**{m: b.device for b in BACKENDS for m in b.macros},
                   **{m: p.name for p in VENDOR_PLATFORMS for m in p.macros}}
# The platforms a --device trace may walk into (a folder of another platform is not this device's code)
OPTION_PLATFORMS = {b.option: (b.device,) for b in BACKENDS if b.option}
# Name parts of vendor variants of the TensorIterator launchers (gpu_kernel_maca_arity1, gpu_kernel_hip)
LAUNCHER_VENDOR_SUFFIXES = tuple(dict.fromkeys(s for row in (*BACKENDS, *VENDOR_PLATFORMS)
                                               for s in row.launcher_suffixes))
DEVICE_TYPES = tuple(b.device for b in BACKENDS) + OTHER_DEVICE_TYPES
# torchgen's per-dispatch-key op APIs (`at::cuda::sort(...)`, `at::cpu::add(...)`, `at::compositeexplicitautograd::
# zeros(...)`): a call of an op's kernel for that key, not through the dispatcher's choice of key
DISPATCH_KEY_NAMESPACES = frozenset(f"at::{key.lower()}" for key in (
    *(k for b in BACKENDS for k in b.dispatch_keys), *COMPOSITE_KEYS))


def op_api_call(qualifier: str, caller: str, linked: bool) -> bool:
    """Whether a C++ (non-method) call is a call of ATen's op API when its name is an op's: `at::x(...)` and
    `at::_ops::x(...)` (through the dispatcher); `at::cuda::x(...)` (a per-key API) and a bare `x(...)` written in
    namespace at (at::native's `_adaptive_avg_pool2d_symint(input, output_size)`: C++ finds at::x) when the call
    links no helper definition (`linked`)."""
    if qualifier in ("at", "at::_ops"):
        return True
    if linked:
        return False
    return qualifier in DISPATCH_KEY_NAMESPACES or (not qualifier and caller.startswith("at::"))


def literal_device(text: str) -> str | None:
    """The device a literal stub-call argument names (kCUDA, at::kCPU, c10::DeviceType::MPS), else None."""
    word = text.strip().removeprefix("c10::").removeprefix("at::")
    if word.startswith("DeviceType::"):
        word = word.removeprefix("DeviceType::")
    elif word.startswith("k"):
        word = word[1:]
    else:
        return None
    return word if word in DEVICE_TYPES else None


def in_dialect(path: str) -> bool:
    """True when a C++ file is written in a backend's dialect: an .mm file, or a header under mps/ or metal/ (those
    are included from .mm files: aten/src/ATen/native/mps/OperationUtils.h holds Objective-C)."""
    if path.endswith(DIALECT_EXTENSIONS):
        return True
    return path.endswith(HEADER_EXTENSIONS) and not DIALECT_FOLDERS.isdisjoint(path.split("/")[:-1])


def platform_of(path: str) -> str | None:
    """The platform the deepest platform folder of a path names (aten/src/ATen/native/miopen/RNN_miopen.cpp ->
    ROCm), else None (code of every platform)."""
    for part in reversed(path.split("/")[:-1]):
        if part in PLATFORM_FOLDERS:
            return PLATFORM_FOLDERS[part]
    return None


def runs_on(path: str, option: str) -> bool:
    """False when the file's folder says its code runs on another platform than `option` (--device)."""
    platform = platform_of(path)
    return option == "all" or platform is None or platform in OPTION_PLATFORMS.get(option, ())


def dispatch_keys(option: str) -> tuple[str, ...]:
    """The dispatch keys that are `option`'s own kernels (--device cuda -> CUDA)."""
    return BY_OPTION[option].dispatch_keys


def registration_devices(option: str) -> tuple[str, ...]:
    """dispatch_registrations.device values that serve `option`."""
    return (BY_OPTION[option].device,)


_PP_TOKEN = re.compile(r"\s*(defined\s*\(\s*\w+\s*\)|defined\s+\w+|not\b|&&|\|\||!(?!=)|\(|\)|"
                       r"[^\s()&|!]+(?:\(\s*\))?(?:\s*(?:[<>=!]=|[<>])\s*[^\s()&|]+)?)")


def platform_off(condition: str, option: str) -> bool:
    """True when code under `condition` (a conditions row: `defined(USE_ROCM)`, `not (defined(X))`, `0`) is never
    compiled for `option` (--device): it needs another platform's macro (PLATFORM_MACROS) or is `#if 0`. Other
    macros (CUDA_VERSION, AT_CUDNN_ENABLED()) may go either way: three-valued logic keeps such code."""
    if option == "all":
        return False
    tokens = [t.strip() for t in _PP_TOKEN.findall(condition)]
    try:
        value, rest = _pp_or(tokens, OPTION_PLATFORMS.get(option, ()))
    except (IndexError, ValueError):
        return False
    return value is False and not rest


def _pp_or(tokens: list[str], here: tuple[str, ...]):
    left, tokens = _pp_and(tokens, here)
    while tokens and tokens[0] == "||":
        right, tokens = _pp_and(tokens[1:], here)
        left = True if True in (left, right) else None if None in (left, right) else False
    return left, tokens


def _pp_and(tokens: list[str], here: tuple[str, ...]):
    left, tokens = _pp_not(tokens, here)
    while tokens and tokens[0] == "&&":
        right, tokens = _pp_not(tokens[1:], here)
        left = False if False in (left, right) else None if None in (left, right) else True
    return left, tokens


def _pp_not(tokens: list[str], here: tuple[str, ...]):
    if tokens[0] in ("!", "not"):
        value, rest = _pp_not(tokens[1:], here)
        return (None if value is None else not value), rest
    if tokens[0] == "(":
        value, rest = _pp_or(tokens[1:], here)
        if not rest or rest[0] != ")":
            raise ValueError(tokens)
        return value, rest[1:]
    word = tokens[0]
    name = re.sub(r"^defined\s*\(?\s*(\w+)\s*\)?$", r"\1", word)
    if name in PLATFORM_MACROS:
        return PLATFORM_MACROS[name] in here, tokens[1:]
    if word == "0":
        return False, tokens[1:]
    return None, tokens[1:]
