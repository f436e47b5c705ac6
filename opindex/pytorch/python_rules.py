"""The Python layer's naming rules: which dotted callee crosses into C++, and how imports name things.

Pure functions on strings, shared by the extractor (python.py) and name resolution (opindex/trace/names.py).
"""
from __future__ import annotations

import re

# torch._C submodules generated from native_functions.yaml's python_module: (torch._C._nn.linear, ...).
C_NAMESPACES = frozenset({"_nn", "_fft", "_linalg", "_special", "_nested", "_sparse"})


def binding_namespace(python_module: str | None) -> str:
    """Where the generated binding of a `function` variant lives: `torch` (torch.relu), or the torch._C submodule
    of its python_module (`python_module: nn` -> torch._C._nn.max_pool2d_with_indices; torch.nn has no such
    attribute, and torch.linalg re-exports torch._C._linalg.linalg_norm as `norm`)."""
    return f"torch._C._{python_module}" if python_module else "torch"

# torch.<name>(...) is a bridge when <name> starts with a lowercase letter (after leading underscores), is not a
# dunder, and is not one of these Python-level helpers, context managers or types (a call of torch.<submodule>
# never happens: submodules are not callable, and torch.nn.x(...) has two dots, so it is never torch.x).
# Anything else lowercase is recorded: torch.empty, torch.relu, torch.tensor. Whether it lands on a YAML entry
# is the query layer's join with native_functions (variants: function), or a Python def that shadows it.
TORCH_NOT_OPS = frozenset({
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "autocast", "device", "dtype", "finfo",
    "iinfo", "layout", "memory_format", "is_tensor", "is_storage", "get_default_dtype", "set_default_dtype",
    "set_default_device", "get_default_device", "set_default_tensor_type", "compile", "manual_seed", "seed",
    "initial_seed", "save", "load", "typename", "vmap", "cond", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled", "set_printoptions",
    "get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads",
    "is_grad_enabled", "is_inference_mode_enabled", "is_autocast_enabled", "get_autocast_dtype",
    "set_autocast_enabled", "get_autocast_gpu_dtype", "set_warn_always", "is_warn_always_enabled", "get_file_path",
    "get_rng_state", "set_rng_state", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite",
    "sym_sum", "export", "classes", "library", "_assert", "is_compiling",
})

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_OPLIKE = re.compile(r"_*[a-z]")
_STRING = re.compile(r"[rRbBuU]*('''|\"\"\"|'|\")(.*)\1\Z", re.S)


def collapse(text: str) -> str:
    # str.split() splits at exactly the characters re's \s matches (checked over all of Unicode), and is faster
    return " ".join(text.split())


def is_dotted(text: str) -> bool:
    return _DOTTED.match(text) is not None


def string_value(literal: str) -> str | None:
    """The value of a plain string literal ('x', "x", r'x'); None for f-strings and concatenations."""
    m = _STRING.match(literal)
    return m.group(2) if m else None


def package_of(module: str, is_package: bool) -> str:
    """The package a relative import starts from: the module itself for __init__.py, else its parent."""
    return module if is_package else module.rpartition(".")[0]


def absolute_import(package: str, written: str) -> str:
    """'.modules' from torch.nn -> torch.nn.modules; '..' from torch.nn.modules -> torch.nn; 'torch' -> 'torch'."""
    if not written.startswith("."):
        return written
    rest = written.lstrip(".")
    base = package
    for _ in range(len(written) - len(rest) - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{rest}" if base and rest else base or rest


def normalize(target: str) -> str:
    """Spellings of the same object: torch._ops.ops is torch.ops; torch.nn._VF (PyTorch 1.4 and before:
    torch/nn/_VF.py, the same forwarding module to torch._C._VariableFunctions) is torch._VF."""
    if target.startswith("torch._ops.ops."):
        return "torch.ops." + target[len("torch._ops.ops."):]
    if target.startswith("torch.nn._VF."):
        return "torch._VF." + target[len("torch.nn._VF."):]
    return target


def is_torch_function_plumbing(name: str) -> bool:
    return "torch_function" in name


def classify(target: str) -> tuple[str, str, str, str | None] | None:
    """(kind, namespace, op, overload) when an absolute dotted callee reaches C++, else None."""
    parts = normalize(target).split(".")
    if parts[0] != "torch" or len(parts) < 2:
        return None
    op = parts[-1]
    if is_torch_function_plumbing(op):
        return None
    n = len(parts)
    if parts[1] == "_VF":
        return ("VF", "_VF", parts[2], None) if n == 3 else None
    if parts[1] == "_C" and n == 4:
        if parts[2] == "_VariableFunctions":
            return "variable_functions", "_VariableFunctions", op, None
        if parts[2] in C_NAMESPACES:
            return "c_namespace", parts[2], op, None
        return None
    if parts[1] == "ops" and n in (4, 5):
        return "torch_ops", parts[2], parts[3], parts[4] if n == 5 else None
    if n == 2 and _OPLIKE.match(op) and not op.startswith("__") and op not in TORCH_NOT_OPS:
        return "torch", "torch", op, None
    return None


def aten_op(target: str) -> tuple[str, str | None] | None:
    """(op, overload) for torch.ops.aten.x / torch.ops.aten.x.overload, else None."""
    parts = normalize(target).split(".")
    if parts[:3] == ["torch", "ops", "aten"] and len(parts) in (4, 5):
        return parts[3], parts[4] if len(parts) == 5 else None
    return None


def library_op(target: str) -> tuple[str, str | None] | None:
    """("ns::x", overload) for torch.ops.ns.x / torch.ops.ns.x.overload of a namespace other than aten
    (torch.ops.mkldnn._convolution_pointwise.default), else None."""
    parts = normalize(target).split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) in (4, 5) and parts[2] != "aten":
        return f"{parts[2]}::{parts[3]}", parts[4] if len(parts) == 5 else None
    return None


def is_tensor_method_name(name: str) -> bool:
    return _OPLIKE.match(name) is not None and not name.startswith("__") and not is_torch_function_plumbing(name)


# The method that does a class's work, first found wins: nn.Module.forward, Optimizer.step (and LRScheduler's),
# then __call__ (autograd Functions are reached through their apply -> forward by the Module that calls them).
ENTRY_METHODS = ("forward", "step", "__call__")
